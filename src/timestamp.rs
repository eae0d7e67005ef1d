//! UTC time stamps: ISO 8601 for result files, a compact form for file
//! names, and the wall clock's seconds.

/// `2026-11-22T10:57:31Z` for seconds since the Unix epoch (UTC).
pub(crate) fn utc_iso(unix_secs: f64) -> String {
    let (y, mo, d, h, mi, s) = civil(unix_secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20261122T105731Z`, safe in file names.
pub(crate) fn utc_compact(unix_secs: f64) -> String {
    let (y, mo, d, h, mi, s) = civil(unix_secs);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// Splits Unix seconds into a proleptic Gregorian UTC date and time.
/// See: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (civil_from_days).
fn civil(unix_secs: f64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = unix_secs.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// Seconds since the Unix epoch for a time written as [`utc_iso`] writes
/// it (`2026-11-22T10:57:31Z`); None for anything else.
/// See: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms" (days_from_civil).
pub(crate) fn unix_secs(iso: &str) -> Option<f64> {
    let b = iso.as_bytes();
    let marks = [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'Z'),
    ];
    if b.len() != 20 || marks.iter().any(|&(i, c)| b[i] != c) {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let s = iso.get(from..to)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let y = y - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let t = (days * 86_400 + h * 3600 + mi * 60 + sec) as f64;
    // a day the month does not have (2026-02-31) comes back as another
    (utc_iso(t) == iso).then_some(t)
}

/// Seconds since the Unix epoch from the system (wall) clock.
pub(crate) fn wall_now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(utc_iso(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_iso(951_782_400.0), "2000-02-29T00:00:00Z");
        assert_eq!(utc_iso(1_795_345_051.0), "2026-11-22T10:57:31Z");
        assert_eq!(utc_compact(1_795_345_051.9), "20261122T105731Z");
    }

    #[test]
    fn reads_back_what_it_writes_and_nothing_else() {
        for t in [0.0, 951_782_400.0, 1_795_345_051.0, 4_102_444_799.0] {
            assert_eq!(unix_secs(&utc_iso(t)), Some(t), "{}", utc_iso(t));
        }
        for bad in [
            "",
            "2026-11-22 10:57:31Z",
            "2026-13-22T10:57:31Z",
            "2026-11-22T10:57:31",
            "2026-11-2xT10:57:31Z",
            "2026-11-22T10:57:+1Z",
            "2026-11-22T10x57x31Z",
            "2026-02-31T10:57:31Z",
            "2026-11-22T10:57:éZ",
        ] {
            assert_eq!(unix_secs(bad), None, "{bad}");
        }
    }
}
