//! The tools run: hyperfine on each side, envbench's run, compare and
//! `__band`, each with the place's own history and no shared store.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A command: its words, what runs before each of its runs (untimed), and
/// the app case that stands for it (its bench, and a parameter its key
/// must hold where the bench has several cases).
pub struct Timed {
    pub name: &'static str,
    pub words: Vec<String>,
    pub prepare: Option<&'static str>,
    pub app: (&'static str, Option<&'static str>),
}

pub const RUNSC: &[&str] = &[
    "runsc",
    "--network=none",
    "do",
    "-force-overlay=false",
    "--",
];

/// Where the commands run: the directory and history envbench reads, and
/// each side's directory and prefix as hyperfine runs it.
pub struct Place {
    pub tmp: PathBuf,
    pub xdg: PathBuf,
    pub base: PathBuf,
    pub other: PathBuf,
}

/// hyperfine's ratio B/A in round `r`, the sides alternated (A B, B A, ...):
/// each side's median seconds over one block of `runs`.
pub fn reference(pair: &str, p: &Place, c: &Timed, r: usize, runs: usize) -> Result<f64, String> {
    let mut got = [0.0; 2];
    for k in if r.is_multiple_of(2) { [0, 1] } else { [1, 0] } {
        let out = p.tmp.join("hf.json");
        let _ = fs::remove_file(&out);
        let mut argv: Vec<String> = if k == 1 && pair == "gvisor" {
            RUNSC.iter().map(|s| s.to_string()).collect()
        } else {
            Vec::new()
        };
        argv.extend(
            [
                "hyperfine",
                "-N",
                "--warmup",
                "3",
                "--runs",
                &runs.to_string(),
                "--style",
                "none",
                "--export-json",
            ]
            .map(String::from),
        );
        argv.push(out.display().to_string());
        if let Some(prep) = c.prepare {
            argv.extend(["--prepare".to_string(), prep.to_string()]);
        }
        argv.push(quoted(&c.words));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        run(&argv, if k == 0 { &p.base } else { &p.other }, Some(&p.xdg))?;
        let doc: serde_json::Value =
            serde_json::from_slice(&fs::read(&out).map_err(|e| e.to_string())?)
                .map_err(|e| format!("hyperfine's JSON: {e}"))?;
        let mut t: Vec<f64> = doc["results"][0]["times"]
            .as_array()
            .map(|v| v.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default();
        t.sort_by(f64::total_cmp);
        if t.is_empty() {
            return Err("hyperfine's JSON has no times".into());
        }
        got[k] = (t[t.len() / 2] + t[(t.len() - 1) / 2]) / 2.0;
    }
    Ok(got[1] / got[0])
}

/// envbench's run `r` of the command on both sides, with the app case that
/// stands for it: its files (kept as NAME-*-R.json).
pub fn envbench_run(
    exe: &str,
    pair: &str,
    p: &Place,
    c: &Timed,
    r: usize,
) -> Result<Vec<String>, String> {
    let mut args: Vec<String> = [
        "run",
        "--quiet",
        "--no-history",
        "--force",
        "--only",
        c.app.0,
        "--cmd",
    ]
    .map(String::from)
    .into();
    args.push(format!("{}={}", c.name, quoted(&c.words)));
    if let Some(prep) = c.prepare {
        args.extend(["--cmd-prepare".to_string(), prep.to_string()]);
    }
    let file = |side: &str| {
        p.tmp
            .join(format!("{}-{side}-{r}.json", c.name))
            .display()
            .to_string()
    };
    let files = if pair == "gvisor" {
        let prefix = RUNSC[..RUNSC.len() - 1].join(" ") + " --";
        args.extend([
            "--in".into(),
            "host".into(),
            "--in".into(),
            format!("gvisor={prefix}"),
        ]);
        args.extend([
            "--dir".into(),
            format!("work={}", p.base.display()),
            "-o".into(),
            file("{in}"),
        ]);
        vec![file("host"), file("gvisor")]
    } else {
        args.extend(["--dir".into(), format!("base={}", p.base.display())]);
        args.extend([
            "--dir".into(),
            format!("other={}", p.other.display()),
            "-o".into(),
            file("run"),
        ]);
        vec![file("run")]
    };
    run_out(exe, &args, p)?;
    Ok(files)
}

/// `envbench compare` of the runs `files` (by directory, but in gVisor):
/// its JSON and the command's headline metric in it.
pub fn compared(
    exe: &str,
    pair: &str,
    files: &[String],
    p: &Place,
) -> Result<(serde_json::Value, serde_json::Value), String> {
    let out = p.tmp.join("cmp.json");
    let mut args = vec!["compare".to_string()];
    if pair != "gvisor" {
        args.extend(["--by-dir", "--baseline", "base"].map(String::from));
    }
    args.extend(files.iter().cloned());
    args.extend(["--json".into(), out.display().to_string(), "--force".into()]);
    run_out(exe, &args, p)?;
    let doc: serde_json::Value =
        serde_json::from_slice(&fs::read(&out).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let m = doc["metrics"]
        .as_array()
        .and_then(|ms| {
            ms.iter().find(|m| {
                m["key"].as_str().is_some_and(|k| k.starts_with("cmd.run")) && m["primary"] == true
            })
        })
        .cloned()
        .ok_or("compare gave no cmd.run metric")?;
    Ok((doc, m))
}

/// envbench's output, run in the place's directory with its own history.
pub fn run_out(exe: &str, args: &[String], p: &Place) -> Result<String, String> {
    let mut argv = vec![exe];
    argv.extend(args.iter().map(String::as_str));
    run(&argv, &p.tmp, Some(&p.xdg))
}

/// Runs `argv` in `cwd` (with `xdg` as its XDG_DATA_HOME and no shared
/// store where given): its standard output; an error, with the end of its
/// standard error, where it failed.
pub fn run(argv: &[&str], cwd: &Path, xdg: Option<&Path>) -> Result<String, String> {
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(x) = xdg {
        cmd.env("XDG_DATA_HOME", x).env_remove("ENVBENCH_DB");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {}: {e}", argv[0]))?;
    let said = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        // a warning said on the way (a busy machine, say) is shown
        if !said.trim().is_empty() {
            eprintln!("{}: {}", argv[0], said.trim());
        }
    } else {
        return Err(format!(
            "{} {}: {}: {}",
            argv[0],
            argv.get(1).unwrap_or(&""),
            out.status,
            tail(said.trim(), 600)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The words as one line a POSIX shell (and hyperfine's and envbench's
/// splitting) reads back as the same words.
pub fn quoted(words: &[String]) -> String {
    let safe = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c))
    };
    let q: Vec<String> = words
        .iter()
        .map(|w| {
            if safe(w) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r#"'"'"'"#))
            }
        })
        .collect();
    q.join(" ")
}

pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// The last `n` characters of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let skip = text.chars().count().saturating_sub(n);
    text.chars().skip(skip).collect()
}
