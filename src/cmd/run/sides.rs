//! The environments a run measures in: this host alone for a plain run,
//! or the `--in` environments, interleaved. Each is fingerprinted where it
//! is (through its prefix: gVisor's fingerprint is gVisor's), named (its
//! `--in` NAME is its label) and given its result file and run id; the
//! files of an interleaved run share an id of their own.

use crate::config::{NamedDir, RunConfig};
use crate::engine::launch::{Launcher, Place};
use crate::engine::resident::Resident;
use crate::error::UsageError;
use crate::probe::Fingerprint;
use crate::store;
use crate::timestamp::utc_compact;
use crate::units::file_safe;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// What `-o` holds, with `--in`, where each environment's name goes:
/// `-o results/{in}.json` writes `results/host.json`, `results/gvisor.json`.
pub const IN_PLACEHOLDER: &str = "{in}";

/// An environment settled on this machine, before anything is measured.
pub(super) struct Prepared {
    /// Its name and how envbench starts in it.
    pub env: Place,
    /// Its fingerprint, probed in it.
    pub fingerprint: Fingerprint,
    /// Seconds the fingerprint took through its prefix (0 for the host
    /// itself): how long starting envbench there takes.
    pub start_secs: f64,
    /// Its resident launcher, entered once for the run; None for the host.
    pub resident: Option<RefCell<Resident>>,
    /// Its result file's run id.
    pub run_id: String,
    /// The run's configuration with its label and result file.
    pub config: RunConfig,
}

/// Every environment named, with the interleaved run's id.
pub(super) struct Named {
    /// In `--in` order; this host alone for a plain run.
    pub sides: Vec<Prepared>,
    /// The id the files of an interleaved run share; None for a plain run.
    pub interleave_id: Option<String>,
}

/// The fingerprint of each environment (of this host for a plain run),
/// for the target directories `dirs`, in order.
///
/// # Errors
/// [`UsageError`] naming the environment whose prefix could not start
/// envbench, the command tried and what happened.
pub(super) fn fingerprints(
    envs: &[Place],
    dirs: &[NamedDir],
    interrupted: &AtomicBool,
) -> anyhow::Result<Vec<Entered>> {
    let paths = NamedDir::paths(dirs);
    if envs.is_empty() {
        return Ok(vec![Entered::here(here(&paths)?)]);
    }
    let mut out = Vec::new();
    for env in envs {
        if env.launcher.is_host() {
            out.push(Entered::here(here(&paths)?));
            continue;
        }
        let (resident, fingerprint) = Resident::start(env, &paths, interrupted).map_err(|why| {
            // Ctrl-C stopped this one: the launchers started before it end
            // at once too, not with a finished run's 10 s
            if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
                stop_at_once(out.iter().filter_map(|e| e.resident.as_ref()));
            }
            anyhow::Error::new(UsageError(format!(
                "--in {}: cannot start envbench in it: {why}",
                env.name
            )))
        })?;
        out.push(Entered {
            fingerprint,
            start_secs: resident.start_secs,
            resident: Some(RefCell::new(resident)),
        });
    }
    Ok(out)
}

/// How long this host's fingerprint may take: reading /proc and /sys and
/// timing its clock take a second or two; its `--dir`s answered a first
/// look already ([`crate::cli`]).
const FINGERPRINT_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// This host's fingerprint for the directories `paths`, within
/// [`FINGERPRINT_WITHIN`]: the `--dir`s are asked (statfs, their mounts)
/// by this process, which no deadline bounds but its own.
///
/// # Errors
/// [`UsageError`] when it gave no answer in time.
fn here(paths: &[PathBuf]) -> anyhow::Result<Fingerprint> {
    let given = paths.to_vec();
    crate::deadline::within(FINGERPRINT_WITHIN, move || crate::probe::probe_live(&given)).map_err(
        |_| {
            let dirs: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            anyhow::Error::new(UsageError(format!(
                "this host's fingerprint did not finish within {} s: does a --dir ({}) not \
                 answer?",
                FINGERPRINT_WITHIN.as_secs(),
                dirs.join(", ")
            )))
        },
    )
}

/// Ends resident launchers at once (Ctrl-C before measuring), not with
/// the 10 s a finished run gives them: a prefix that held on after its
/// fingerprint held Ctrl-C that long.
pub(super) fn stop_at_once<'a>(residents: impl IntoIterator<Item = &'a RefCell<Resident>>) {
    for resident in residents {
        resident.borrow_mut().finish(std::time::Duration::ZERO);
    }
}

/// An environment entered: its fingerprint, and its resident launcher when
/// it was entered through a prefix.
pub(super) struct Entered {
    /// Its fingerprint, probed in it.
    pub fingerprint: Fingerprint,
    /// Seconds its launcher took to start and answer (0 for the host).
    pub start_secs: f64,
    /// Its resident launcher; None for the host itself.
    pub resident: Option<RefCell<Resident>>,
}

impl Entered {
    fn here(fingerprint: Fingerprint) -> Entered {
        Entered {
            fingerprint,
            start_secs: 0.0,
            resident: None,
        }
    }
}

/// Names each environment's run and result file, one fingerprint each
/// (`fingerprints`, in `envs` order). A plain run (no `envs`) takes the
/// label and file `config` gives, or the detected virtualisation and
/// `envbench-LABEL-HOST-UTCTIME-RANDOM.json`, which it writes back into
/// `config`; an interleaved one labels each file by its environment's
/// name, in `-o`'s pattern or `envbench-NAME-HOST-UTCTIME-RANDOM.json`,
/// RANDOM shared by the run.
pub(super) fn name(
    envs: &[Place],
    fingerprints: Vec<Entered>,
    config: &mut RunConfig,
    started: f64,
) -> Named {
    let when = utc_compact(started);
    // a random part, so that runs started in the same second on the same
    // host (two containers, each its own PID 1) never share an id or a name
    let tag = store::random_tag();
    if envs.is_empty() {
        let Entered {
            fingerprint,
            start_secs,
            resident,
        } = fingerprints
            .into_iter()
            .next()
            .expect("invariant: the host's fingerprint");
        let host = file_safe(fingerprint.os.hostname.as_deref().unwrap_or("host"));
        if config.label.is_empty() {
            config.label = fingerprint.virtualization.summary().replace('/', "-");
        }
        if config.output.as_os_str().is_empty() {
            config.output = PathBuf::from(format!(
                "envbench-{}-{host}-{when}-{tag}.json",
                file_safe(&config.label)
            ));
        }
        let host_side = Prepared {
            env: Place {
                name: config.label.clone(),
                launcher: Launcher::default(),
            },
            fingerprint,
            start_secs,
            resident,
            run_id: format!("{when}-{host}-{tag}"),
            config: config.clone(),
        };
        return Named {
            sides: vec![host_side],
            interleave_id: None,
        };
    }
    // the machine the run starts on names the run, whatever the
    // environments are called inside
    let live = crate::probe::Roots::live();
    let host = crate::probe::os::probe_os(&live, &mut crate::probe::Notes::new())
        .hostname
        .filter(|h| !h.is_empty())
        .or_else(|| fingerprints[0].fingerprint.os.hostname.clone());
    let host = file_safe(host.as_deref().unwrap_or("host"));
    let sides = envs
        .iter()
        .zip(fingerprints)
        .map(|(env, entered)| {
            let Entered {
                fingerprint,
                start_secs,
                resident,
            } = entered;
            let mut c = config.clone();
            c.label.clone_from(&env.name);
            c.output = if config.output.as_os_str().is_empty() {
                PathBuf::from(format!("envbench-{}-{host}-{when}-{tag}.json", env.name))
            } else {
                let pattern = config.output.to_string_lossy();
                PathBuf::from(pattern.replace(IN_PLACEHOLDER, &env.name))
            };
            Prepared {
                env: env.clone(),
                fingerprint,
                start_secs,
                resident,
                run_id: format!("{when}-{host}-{}", store::random_tag()),
                config: c,
            }
        })
        .collect();
    Named {
        sides,
        interleave_id: Some(format!("{when}-{host}-{tag}")),
    }
}

/// The line after the plan's table: the budget's note, and for an
/// interleaved run what interleaving and `--precision` add to the time.
pub(super) fn plan_note(sides: &[Prepared], budget_note: Option<&str>) -> Option<String> {
    let interleaved = (sides.len() > 1).then(|| {
        let turns = match sides[0].config.alternate {
            crate::config::Alternate::Rep => {
                "one repetition each in turn (--alternate rep), a case too large for every \
                 environment's memory at once a round each"
            }
            crate::config::Alternate::Round => "a round each in turn (--alternate round)",
        };
        format!(
            "interleaved in {} environments ({}): every case round runs once in each, {turns}, \
             so the run takes about {}x the time above (each environment its own budgets)",
            sides.len(),
            names(sides),
            sides.len()
        )
    });
    let precision = sides.first().and_then(|s| s.config.precision).map(|p| {
        let time = p
            .extra_secs
            .map_or("twice the planned rounds' time".to_string(), |s| {
                format!("{s:.0} s")
            });
        format!(
            "--precision ±{:.1} %: then more rounds of the cases whose comparison is still \
             wider, the cheapest first, for up to {time} more (--precision-time)",
            p.half_width * 100.0
        )
    });
    let lines: Vec<String> = budget_note
        .map(str::to_string)
        .into_iter()
        .chain(interleaved)
        .chain(precision)
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// What the run's first progress line says of where it measures: the
/// label and file of a plain run, the environments and their files of an
/// interleaved one.
pub(super) fn headline(sides: &[Prepared]) -> String {
    if let [one] = sides {
        return format!(
            "label {}, writing {}",
            one.config.label,
            one.config.output.display()
        );
    }
    let files: Vec<String> = sides
        .iter()
        .map(|s| s.config.output.display().to_string())
        .collect();
    format!(
        "interleaved in {} environments ({}), writing {}",
        sides.len(),
        names(sides),
        files.join(", ")
    )
}

/// The environments' names, comma-separated.
fn names(sides: &[Prepared]) -> String {
    let names: Vec<&str> = sides.iter().map(|s| s.env.name.as_str()).collect();
    names.join(", ")
}
