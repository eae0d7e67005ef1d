//! The kinds of suspect flag: each owns its name in the result file, its
//! threshold's words and how its measure reads.

/// Steal time above this share of all CPU time during a case's
/// repetitions makes it suspect: the hypervisor took the CPU away.
pub const STEAL_SUSPECT_SHARE: f64 = 0.05;

/// A case whose CPU frequency changed by more than this share between its
/// repetitions is suspect.
pub const FREQ_CHANGE_SUSPECT: f64 = 0.10;

/// Coefficient of variation of the headline metric above which a case
/// that used its maximum repetitions is suspect: it never settled.
pub const CV_SUSPECT: f64 = 0.15;

/// Other runnable tasks, per usable CPU, averaged over a case's
/// repetitions, above which the case is suspect: it shared its CPUs.
pub const LOAD_SUSPECT_PER_CPU: f64 = 0.5;

/// What a case's flag is about. Each kind owns its threshold's words and
/// how its measure reads; the result file keeps [`SuspectKind::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SuspectKind {
    /// Steal time above [`STEAL_SUSPECT_SHARE`].
    Steal,
    /// The CPU frequency moving more than [`FREQ_CHANGE_SUSPECT`].
    Frequency,
    /// Other runnable tasks above [`LOAD_SUSPECT_PER_CPU`] per CPU.
    Load,
    /// A coefficient of variation above [`CV_SUSPECT`] at the maximum repetitions.
    HighCv,
    /// A drift across rounds (the trend rule of the suspect module).
    Trend,
    /// The canary off around a repetition.
    Canary,
}

impl SuspectKind {
    /// Every kind.
    pub const ALL: [SuspectKind; 6] = [
        SuspectKind::Steal,
        SuspectKind::Frequency,
        SuspectKind::Load,
        SuspectKind::HighCv,
        SuspectKind::Trend,
        SuspectKind::Canary,
    ];

    /// The name the result file keeps (`steal`, `high_cv` ...).
    pub(crate) fn name(self) -> &'static str {
        match self {
            SuspectKind::Steal => "steal",
            SuspectKind::Frequency => "frequency",
            SuspectKind::Load => "load",
            SuspectKind::HighCv => "high_cv",
            SuspectKind::Trend => "trend",
            SuspectKind::Canary => "canary",
        }
    }

    /// The kind a result file names, if envbench knows it.
    pub(crate) fn from_name(name: &str) -> Option<SuspectKind> {
        SuspectKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether flags of this kind are shown as "suspect": only a kind measured
    /// to predict a worse figure is:
    /// a case run they flag strays from the case's estimate over several runs
    /// at least 1.5 times as far, on average, as an unflagged one
    /// (`bench/suspects.py`). The other kinds are kept in the result file as
    /// signals (telemetry), not shown.
    ///
    /// None has earned it yet. On the 2-vCPU AMD EPYC VM (2026-11-24, quick,
    /// 12 rounds in workers), six quiet A/A runs and six with a neighbour
    /// burning a CPU for 2-6 s every 4-12 s: `load` flagged 40 case runs that
    /// strayed 0.90x as far as the unflagged (95 % interval 0.46..1.48; 1.05x
    /// their own cases' usual stray), `steal` one, `frequency` none (no
    /// cpufreq in the guest). In earlier sets of runs on the same VM `canary`
    /// strayed 0.53x and 0.54x as far as the unflagged, `trend` 1.06x
    /// (0.65..1.60), `high_cv` 0.49x in one set and 2.06x in another, where it
    /// fired on cases that stray anyway (1.24x their own usual stray). A
    /// case's estimate is a median over many rounds, so a disturbance that
    /// hits some of them does not move it: the noisy runs' A/A half-width was
    /// ±15.9 % against ±16.2 % for the quiet ones.
    pub(crate) fn shown(self) -> bool {
        false
    }
}

/// A suspect flag's kind as a result file names it: one envbench knows
/// (whose words the report has), or another name (a run's `governor` or
/// `not_idle`, a newer version's kind), kept as written.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum FlagKind {
    /// A kind of case flag envbench knows.
    Known(SuspectKind),
    /// Any other name.
    Named(String),
}

impl FlagKind {
    /// The kind named `name`.
    pub(crate) fn of(name: &str) -> FlagKind {
        SuspectKind::from_name(name)
            .map_or_else(|| FlagKind::Named(name.to_string()), FlagKind::Known)
    }

    /// Its name in the result file.
    pub(crate) fn name(&self) -> &str {
        match self {
            FlagKind::Known(k) => k.name(),
            FlagKind::Named(n) => n,
        }
    }
}

impl std::fmt::Display for FlagKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
