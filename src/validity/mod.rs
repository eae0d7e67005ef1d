//! Validity guardrails: why a figure moved, said in plain words. A
//! comparison is only as good as its worst trial; drift, turbo, a busy
//! neighbour or a hypervisor's steal time otherwise turn into false
//! differences.
//!
//! - [`telemetry`]: steal, iowait, load, frequency, preemptions and dirty
//!   pages around each repetition (the runner samples them outside the
//!   timed region), stored with the case.
//! - [`canary`]: a fixed CPU and memory kernel between cases; cases run
//!   while it was off its run median are suspect.
//! - [`idle`]: the check before a run (`--wait-idle`, `--require-idle`).
//! - [`suspect`]: the flags on a case, recomputed at every save; `compare`
//!   leaves suspect cases out of its geometric means.
//! - [`tuning`]: `envbench info --tuning`.
//!
//! The battery's schedule calls [`canary`] between cases and [`assess`]
//! at every save, the runner takes [`telemetry`] snapshots, and `run`
//! checks [`idle`] before it starts. Nothing here imports the benches: the
//! canary times and allocates with the same `measure` primitives.

pub mod canary;
pub mod idle;
pub mod suspect;
pub mod suspect_kind;
pub mod telemetry;
pub mod tuning;

pub use idle::NotIdle;
pub use suspect::assess;

#[cfg(test)]
mod tests {
    use crate::results::SCHEMA_VERSION;
    use crate::store;
    use std::path::Path;

    const V1: &str = include_str!("../../tests/fixtures/results/valid.json");

    /// Files written before telemetry, the canary and suspect flags
    /// (version 1, and version 2 as it was) still load, with none of them;
    /// and a file with them reads back the same.
    #[test]
    fn result_files_without_the_validity_fields_still_load() {
        let v1 = store::parse(Path::new("v1.json"), V1).unwrap();
        assert!(v1.canary.is_none() && v1.suspect.is_empty());
        assert!(v1
            .cases
            .iter()
            .all(|c| c.telemetry.is_none() && c.suspect.is_empty()));
        let v2 = V1.replacen(
            "\"schema_version\": 1",
            &format!("\"schema_version\": {SCHEMA_VERSION}"),
            1,
        );
        let mut f = store::parse(Path::new("v2.json"), &v2).unwrap();
        assert_eq!(f.schema_version, 2);
        assert!(f.cases.iter().all(|c| c.telemetry.is_none()));
        // written with the new fields, read back equal
        f.cases[0].telemetry = Some(crate::results::Telemetry {
            steal_share: vec![Some(0.01); f.cases[0].metrics[0].samples.len()],
            ..Default::default()
        });
        f.cases[0].suspect.push(crate::results::Suspect {
            kind: "steal".into(),
            value: None,
            message: "m".into(),
        });
        f.canary = Some(crate::results::Canary {
            times_secs: vec![0.0],
            cpu_mops: vec![700.0],
            mem_mbs: vec![20_000.0],
        });
        let text = serde_json::to_string(&f).unwrap();
        let back = store::parse(Path::new("v2.json"), &text).unwrap();
        assert_eq!(back.cases[0].telemetry, f.cases[0].telemetry);
        assert_eq!(back.canary, f.canary);
        assert_eq!(back.cases[0].suspect, f.cases[0].suspect);
    }
}
