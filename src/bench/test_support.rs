//! Test support shared by every bench's tests: a clock, a policy and a
//! context to prepare and measure cases with.

use super::*;

/// Memory the test context offers: cases needing more are skipped, which
/// keeps the test suite small and exercises the skip path.
const TEST_MEMORY_BYTES: u64 = 64 << 20;

/// Test support shared by every bench's tests: a clock, a policy and a
/// context to prepare and measure cases with.
pub(crate) struct TestEnv {
    pub clock: Clock,
    pub reps: RepPolicy,
    pub stop: AtomicBool,
    /// `dir1`: a temporary directory removed with the environment.
    pub dirs: Vec<NamedDir>,
    /// The families' options the benches see (none unless a test sets them).
    pub options: crate::config::FamilyOptions,
    _tmp: tempfile::TempDir,
}

impl TestEnv {
    /// The real clock, repetitions of about `rep_target_secs`.
    pub(crate) fn real(rep_target_secs: f64) -> TestEnv {
        TestEnv::with_clock(
            Clock::real(),
            RepPolicy {
                rep_target_secs,
                ..RepPolicy::for_suite(Suite::Quick)
            },
        )
    }

    fn with_clock(clock: Clock, reps: RepPolicy) -> TestEnv {
        let tmp = tempfile::tempdir().expect("invariant: the temp dir is writable");
        TestEnv {
            clock,
            reps,
            stop: AtomicBool::new(false),
            dirs: vec![NamedDir {
                name: "dir1".into(),
                path: tmp.path().to_path_buf(),
            }],
            options: crate::config::FamilyOptions::default(),
            _tmp: tmp,
        }
    }

    /// A fake clock advancing 1 ms a read.
    pub(crate) fn fake() -> TestEnv {
        TestEnv::with_clock(
            Clock::fake(std::time::Duration::from_millis(1)),
            RepPolicy::for_suite(Suite::Quick),
        )
    }

    /// The context benches see.
    pub(crate) fn ctx(&self) -> Context<'_> {
        Context {
            clock: &self.clock,
            reps: &self.reps,
            seed: 1,
            interrupted: &self.stop,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(120),
            first_round: true,
            options: &self.options,
            mem_available_bytes: Some(TEST_MEMORY_BYTES),
            dirs: &self.dirs,
            cpus: 2,
            kept: &[],
        }
    }

    /// A plan for `suite` on `cpus` CPUs with `dir1` as target and the
    /// io family's sizes in KiBs (tests keep disk use small).
    pub(crate) fn plan(suite: Suite, cpus: usize) -> Plan {
        Plan {
            suite,
            cpus,
            threads: None,
            dirs: vec![NamedDir {
                name: "dir1".into(),
                path: std::env::temp_dir(),
            }],
            options: io::IoOptions::tiny().into_options(FamilyOptions::default()),
        }
    }
}
