//! Outlier flags by the modified z-score (median absolute deviation).
//!
//! Outliers are flagged, never dropped: the samples stay in the result file
//! and the summary is computed over all of them; the flag tells the reader
//! which repetitions to look at.
//! See: B. Iglewicz and D. Hoaglin, "How to Detect and Handle Outliers",
//! ASQC Quality Press, 1993 (the 0.6745 constant and the 3.5 threshold);
//! hyperfine uses the same rule.

/// |modified z-score| above this marks an outlier (Iglewicz & Hoaglin).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// 0.6745 = Φ⁻¹(0.75): makes MAD a consistent estimator of σ for normal data.
const MAD_NORMAL_CONSISTENCY: f64 = 0.6745;

/// When MAD is 0 (more than half of the samples equal), the modified z-score
/// uses the mean absolute deviation scaled by √(π/2) ≈ 1.253314 instead, so a
/// lone wild value among identical ones is still flagged.
const MEAN_AD_NORMAL_CONSISTENCY: f64 = 1.253314;

/// Indices of the samples whose modified z-score exceeds
/// [`MODIFIED_Z_THRESHOLD`]. `median` and `mad` must be those of `xs`.
/// Returns no index when every sample is equal.
pub(crate) fn flag_outliers(xs: &[f64], median: f64, mad: f64) -> Vec<usize> {
    let scale = if mad > 0.0 {
        mad / MAD_NORMAL_CONSISTENCY
    } else {
        let mean_ad = xs.iter().map(|x| (x - median).abs()).sum::<f64>() / xs.len() as f64;
        MEAN_AD_NORMAL_CONSISTENCY * mean_ad
    };
    if scale <= 0.0 {
        return Vec::new();
    }
    xs.iter()
        .enumerate()
        .filter(|(_, &x)| ((x - median) / scale).abs() > MODIFIED_Z_THRESHOLD)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_a_far_value() {
        let xs = [10.0, 10.1, 9.9, 10.2, 9.8, 30.0];
        // median 10.05, |deviations| 0.05 0.05 0.15 0.15 0.25 19.95 → MAD 0.15
        assert_eq!(flag_outliers(&xs, 10.05, 0.15), vec![5]);
    }

    #[test]
    fn flags_nothing_in_tight_data() {
        let xs = [10.0, 10.1, 9.9, 10.2, 9.8];
        assert!(flag_outliers(&xs, 10.0, 0.1).is_empty());
    }

    #[test]
    fn mad_zero_still_flags_a_lone_wild_value() {
        let xs = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 100.0];
        assert_eq!(flag_outliers(&xs, 1.0, 0.0), vec![6]);
    }

    #[test]
    fn all_equal_flags_nothing() {
        let xs = [2.0; 5];
        assert!(flag_outliers(&xs, 2.0, 0.0).is_empty());
    }
}
