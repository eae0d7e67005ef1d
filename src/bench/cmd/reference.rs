//! The reference a person's command is held to: hyperfine's timing of the
//! same command (`hyperfine -N`, no shell, as `run --cmd` runs it), with
//! the same warm-ups and runs, its median read from its JSON export.
//! `envbench fidelity --cmd` runs the two in turns and judges envbench's
//! median over hyperfine's against [`BAND`].

use super::CommandSpec;
use crate::bench::reference::{Cpus, Pick, Prog, Read, Reference, Side, Tool};
use crate::stats::band::Band;

/// The band envbench's median must lie within, over hyperfine's: ±10 %,
/// the agreement benches/commands/ holds a command's slowdown to.
pub const BAND: Band = Band::new(0.9, 1.1);

/// The metric compared: the case's milliseconds a run.
pub const METRIC: &str = "ms";

/// hyperfine, its arguments given for each command ([`hyperfine_args`]),
/// its figure the median of its runs' times, in seconds, as milliseconds.
pub const TOOL: Tool = Tool {
    name: "hyperfine -N",
    program: Prog::Path("hyperfine"),
    args: &[],
    env: &[],
    on: Cpus::Any,
    read: Read::Json {
        pointer: "/results/0/median",
        scale: 1e3,
    },
    processes: 1,
    input: None,
    check: None,
    on_dir: None,
    beside: None,
};

/// The reference of the command whose case `params` pick: [`TOOL`]
/// against [`BAND`], envbench run as the scheduler places it.
pub fn reference(params: &'static [(&'static str, &'static str)]) -> Reference {
    Reference {
        params,
        metric: METRIC,
        band: Some(BAND),
        tools: vec![TOOL],
        pick: Pick::First,
        envbench: Side::AS_PLANNED,
        information_if: None,
    }
}

/// hyperfine's arguments for `spec`: no shell (`-N`, the words of the
/// command as envbench runs them, quoted for hyperfine's own splitting),
/// `warmup` runs dropped and `runs` timed, the prepare, setup and cleanup
/// commands as hyperfine's own, failures ignored where envbench ignores
/// them, and nothing printed but the JSON export on its stdout.
pub fn hyperfine_args(spec: &CommandSpec, warmup: u32, runs: u32) -> Vec<String> {
    let mut args: Vec<String> = [
        "-N",
        "--style",
        "none",
        "--export-json",
        "/dev/stdout",
        "--warmup",
    ]
    .map(String::from)
    .to_vec();
    args.push(warmup.to_string());
    args.push("--runs".into());
    args.push(runs.to_string());
    for (flag, words) in [
        ("--prepare", &spec.prepare),
        ("--setup", &spec.setup),
        ("--cleanup", &spec.cleanup),
    ] {
        if let Some(words) = words {
            args.push(flag.into());
            args.push(quoted(words));
        }
    }
    if spec.ignore_failure {
        args.push("--ignore-failure".into());
    }
    // the command after `--`, so that one starting with '-' is not an option
    args.push("--".into());
    args.push(quoted(&spec.argv));
    args
}

/// `words` as one line a POSIX shell (and hyperfine's `-N` splitting)
/// reads back as the same words: each word with anything beyond letters,
/// digits and `-_./=:,+@%` in single quotes.
pub fn quoted(words: &[String]) -> String {
    let plain = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    };
    words
        .iter()
        .map(|w| {
            if plain(w) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn words_are_quoted_only_where_a_shell_would_read_them_otherwise() {
        assert_eq!(quoted(&words(&["git", "status"])), "git status");
        assert_eq!(
            quoted(&words(&["grep", "-r", "a b", "--include=*.c"])),
            "grep -r 'a b' '--include=*.c'"
        );
        assert_eq!(
            quoted(&words(&["sh", "-c", "echo 'hi' | wc -l", ""])),
            r"sh -c 'echo '\''hi'\'' | wc -l' ''"
        );
        assert_eq!(
            quoted(&words(&["make", "CC=gcc", "-j2"])),
            "make CC=gcc -j2"
        );
    }

    #[test]
    fn hyperfine_is_given_the_command_its_prepare_and_the_same_runs_without_a_shell() {
        let spec = CommandSpec {
            name: "status".into(),
            text: "git status".into(),
            argv: words(&["git", "status"]),
            prepare: Some(words(&["sync"])),
            setup: None,
            cleanup: Some(words(&["rm", "-f", "a b"])),
            ignore_failure: true,
        };
        assert_eq!(
            hyperfine_args(&spec, 1, 10).join(" "),
            "-N --style none --export-json /dev/stdout --warmup 1 --runs 10 \
             --prepare sync --cleanup rm -f 'a b' --ignore-failure -- git status"
        );
        let export = r#"{"results": [{"command": "git status", "median": 0.0104,
            "times": [0.0103, 0.0104, 0.0105]}]}"#;
        let ms = TOOL.read.figure(export).unwrap();
        assert!((ms - 10.4).abs() < 1e-9, "{ms}");
    }
}
