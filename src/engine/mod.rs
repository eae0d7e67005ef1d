//! The engine that runs benchmarks, apart from the benchmarks themselves:
//! it takes the cases the families plan ([`crate::bench`]), picks those
//! `--only` asks for ([`select`]), runs a whole battery round by round
//! ([`schedule`]), each case round in a fresh worker process ([`worker`])
//! started here or by an environment's resident launcher ([`resident`],
//! entered once through its prefix: [`launch`], [`guard`], [`peer`]) and
//! heard within deadlines ([`talk`]),
//! repeats a case's trials within its budget ([`runner`]) on the `--dir`s
//! its environment was fingerprinted with ([`dirs`]) and merges its
//! rounds ([`round`]). A new family touches none of this; a scheduling
//! change touches no family.

pub mod dirs;
pub mod guard;
mod keeper;
pub mod launch;
pub mod oom;
pub mod peer;
pub mod resident;
mod round;
pub mod runner;
pub mod schedule;
pub mod select;
pub mod talk;
pub mod worker;

/// Runs the hidden process `args` name, if it is the engine's: a worker
/// measuring one case round ([`worker`]), an environment's resident
/// launcher ([`resident`]), the guard a prefix runs under ([`guard`]), or
/// the keeper of the run's kept fixtures ([`keeper`]); else
/// a family's helper ([`crate::bench::helper`]).
pub fn helper(args: &[String]) -> Option<std::process::ExitCode> {
    match args.first().map(String::as_str) {
        Some(worker::WORKER_ARG) => Some(worker::serve()),
        Some(worker::CPUID_ARG) => Some(worker::serve_cpuid()),
        Some(guard::GUARD_ARG) => Some(guard::serve(&args[1..])),
        Some(resident::LAUNCHER_ARG) => Some(resident::serve()),
        Some(keeper::KEEPER_ARG) => Some(keeper::serve()),
        _ => crate::bench::helper(args),
    }
}
