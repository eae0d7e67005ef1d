//! The envbench binary: parse arguments, run, map the outcome to an exit code
//! (0 ok, 1 failure, 2 usage error, 3 not idle under --require-idle,
//! 130 interrupted; a closed stdout pipe is
//! not an error).
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Hidden helpers the OS benchmarks start; they run before any parsing.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(code) = envbench::bench::os::helper(args.iter().cloned()) {
        return code;
    }
    if let Some(code) = envbench::bench::net::helper(&args) {
        return code;
    }
    let cli = envbench::cli::Cli::parse();
    match envbench::run(cli) {
        Ok(code) => code,
        Err(err) if envbench::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("envbench: {err:#}");
            if err.downcast_ref::<envbench::UsageError>().is_some() {
                ExitCode::from(2)
            } else if err.downcast_ref::<envbench::validity::NotIdle>().is_some() {
                ExitCode::from(envbench::validity::idle::NOT_IDLE_EXIT)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
