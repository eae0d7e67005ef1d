//! The engine that runs benchmarks, apart from the benchmarks themselves:
//! it takes the cases the families plan ([`crate::bench`]), picks those
//! `--only` asks for ([`select`]), runs a whole battery round by round
//! ([`schedule`]), each case round in a fresh worker process ([`worker`])
//! started here or through an environment's prefix ([`launch`], [`peer`]),
//! repeats a case's trials within its budget ([`runner`]) and merges its
//! rounds ([`round`]). A new family touches none of this; a scheduling
//! change touches no family.

pub mod guard;
pub mod launch;
pub mod peer;
mod round;
pub mod runner;
pub mod schedule;
pub mod select;
pub mod worker;

/// Runs the hidden process `args` name, if it is the engine's: a worker
/// measuring one case round ([`worker`]), the fingerprint asked through a
/// prefix ([`launch`]), or the guard a prefix runs under ([`guard`]); else
/// a family's helper ([`crate::bench::helper`]).
pub fn helper(args: &[String]) -> Option<std::process::ExitCode> {
    match args.first().map(String::as_str) {
        Some(worker::WORKER_ARG) => Some(worker::serve()),
        Some(guard::GUARD_ARG) => Some(guard::serve(&args[1..])),
        Some(launch::FINGERPRINT_ARG) => Some(launch::serve_fingerprint()),
        _ => crate::bench::helper(args),
    }
}
