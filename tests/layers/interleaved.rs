//! gVisor and a podman container interleaved with the host (`run --in host
//! --in NAME=PREFIX`, tests/layers/interleaved.sh and
//! interleaved-podman.sh): one run, a result file for each environment;
//! the layer entered once (one resident launcher), every round a fresh
//! worker process inside it (distinct PIDs there); Ctrl-C leaves no
//! launcher, worker, sandbox or container (no process of the script's
//! group, `runsc list` and `podman ps -a`, which the scripts read after
//! envbench ends and before they stop anything themselves).

use super::{check_cases, check_virtualization, missing_tool, run_script, Layer, Logs};
use super::{script_writing_to, LANES};
use envbench::results::{ResultFile, RunStatus};
use envbench::store;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// A system call (the layer's cost), the CPU (none), a synced write in
/// the shared directory (scratch directories on the host's disk).
const ONLY: &str = "os.syscall,cpu.primes[threads=1],io.dd[op=write_fdatasync]";

fn gvisor() -> Layer {
    Layer {
        name: "gVisor interleaved with the host (run --in)",
        script: "interleaved.sh",
        only: ONLY,
        extra: &["--rounds", "3"],
        expected_skips: &[],
        virt_name: "gvisor",
        timeout: Duration::from_secs(200),
        env: &[],
    }
}

fn podman() -> Layer {
    Layer {
        name: "podman interleaved with the host (run --in)",
        script: "interleaved-podman.sh",
        only: ONLY,
        extra: &["--rounds", "3"],
        expected_skips: &[],
        virt_name: "podman",
        // mmdebstrap's first build comes on top (about a minute here)
        timeout: Duration::from_secs(400),
        env: &[],
    }
}

#[test]
fn gvisor_interleaved_with_the_host_enters_it_once_and_measures_both() {
    interleaved_with_the_host(&gvisor(), "gvisor");
}

#[test]
fn podman_interleaved_with_the_host_enters_it_once_and_measures_both() {
    interleaved_with_the_host(&podman(), "podman");
}

#[test]
fn ctrl_c_through_gvisor_and_podman_leaves_no_launcher_sandbox_or_container() {
    for (layer, name) in [(gvisor(), "gvisor"), (podman(), "podman")] {
        ctrl_c_leaves_nothing(&layer, name);
    }
}

/// Runs `layer`'s script (the host and the environment `name`) and checks
/// both files: whole, every case measured or explained, the layer entered
/// once, each round in a fresh process.
fn interleaved_with_the_host(layer: &Layer, name: &str) {
    let _lane = LANES.take();
    let out = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let code = run_script(layer, out.path());
    let logs = Logs(out.path().to_path_buf());
    match code {
        Some(0) => {}
        Some(3) => return missing_tool(layer, &logs),
        other => panic!("{}: exited with {other:?}\n{logs}", layer.name),
    }
    let load = |env: &str| {
        let path = out.path().join(format!("result-{env}.json"));
        store::load(&path).unwrap_or_else(|e| panic!("{}: {e}\n{logs}", layer.name))
    };
    let (host, inside) = (load("host"), load(name));
    let interleave = |f: &ResultFile| {
        let i = f.rounds.as_ref().and_then(|r| r.interleave.clone());
        i.unwrap_or_else(|| panic!("{}: no interleave block\n{logs}", f.label))
    };
    assert_eq!(interleave(&host).id, interleave(&inside).id);
    for (file, env) in [(&host, "host"), (&inside, name)] {
        assert_eq!(file.status, RunStatus::Complete, "{env}\n{logs}");
        assert_eq!(file.label, env);
        assert_eq!(file.cases.len(), 4, "{env}: every case ran\n{logs}");
        check_cases(layer, &file.cases, &logs);
        fresh_process_every_round(file, &logs);
    }
    // entered once: one launch of its resident launcher, none for the host
    let envs = interleave(&inside).environments;
    assert_eq!(envs[0].launches, None, "{logs}");
    assert_eq!(
        envs[1].launches,
        Some(1),
        "{}: entered once\n{logs}",
        layer.name
    );
    // its rounds waited for the layer to settle; the host's did not
    for c in &inside.cases {
        assert!(
            c.rounds.iter().all(|r| r.settle_secs.is_some()),
            "{}",
            c.key
        );
    }
    for c in &host.cases {
        assert!(
            c.rounds.iter().all(|r| r.settle_secs.is_none()),
            "{}",
            c.key
        );
    }
    // each fingerprint is its own environment's
    check_virtualization(layer, &inside.fingerprint.virtualization);
    let host_layers: Vec<&str> = host
        .fingerprint
        .virtualization
        .layers
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert!(!host_layers.contains(&name), "{host_layers:?}");
    eprintln!(
        "{}: {} cases in each of 2 environments in {:.1} s",
        layer.name,
        host.cases.len(),
        t0.elapsed().as_secs_f64()
    );
}

/// Every round of every case of `file` names its worker's PID, and no two
/// rounds share one: each round ran in a fresh process.
fn fresh_process_every_round(file: &ResultFile, logs: &Logs) {
    let pids: Vec<u32> = file
        .cases
        .iter()
        .flat_map(|c| c.rounds.iter())
        .map(|r| {
            r.worker_pid
                .unwrap_or_else(|| panic!("{}: a round without its worker\n{logs}", file.label))
        })
        .collect();
    let distinct: std::collections::BTreeSet<u32> = pids.iter().copied().collect();
    assert!(pids.len() >= 8, "{}: {pids:?}", file.label);
    assert_eq!(
        distinct.len(),
        pids.len(),
        "{}: {pids:?}\n{logs}",
        file.label
    );
}

/// Starts `layer`'s script with a long run, sends envbench one SIGINT once
/// the layer's file shows a finished round, and checks that envbench ended
/// with 130, that no process of the script's group is left, and what the
/// script found after it: no sandbox in `runsc list`, no container in
/// `podman ps -a`.
fn ctrl_c_leaves_nothing(layer: &Layer, name: &str) {
    let _lane = LANES.take();
    let out = tempfile::tempdir().unwrap();
    let long = Layer {
        extra: &["--rounds", "12", "--budget", "30"],
        ..*layer
    };
    let logs = Logs(out.path().to_path_buf());
    let script = std::thread::scope(|s| {
        let running = s.spawn(|| run_script(&long, out.path()));
        let file = out.path().join(format!("result-{name}.json"));
        let t0 = Instant::now();
        let measuring =
            || store::load(&file).is_ok_and(|f| f.cases.iter().any(|c| !c.rounds.is_empty()));
        while !measuring() && t0.elapsed() < Duration::from_secs(300) && !running.is_finished() {
            std::thread::sleep(Duration::from_millis(100));
        }
        let envbench = script_writing_to(out.path()).and_then(envbench_below);
        if let Some(pid) = envbench {
            // SAFETY: signalling the envbench our script started, once.
            unsafe { libc::kill(pid, libc::SIGINT) };
        }
        running.join().unwrap()
    });
    match script {
        Some(3) => return missing_tool(layer, &logs),
        // run_layer returns 1 for envbench's 130
        Some(1) => {}
        other => panic!("{}: the script exited with {other:?}\n{logs}", layer.name),
    }
    let exit = fs::read_to_string(out.path().join("exit-code")).unwrap_or_default();
    assert_eq!(
        exit.trim(),
        "130",
        "{}: envbench's exit code\n{logs}",
        layer.name
    );
    for left in ["runsc-left", "podman-left", "pids-left"] {
        let text = fs::read_to_string(out.path().join(left)).unwrap_or_default();
        assert!(
            text.trim().is_empty(),
            "{}: {left}: {text}\n{logs}",
            layer.name
        );
    }
    let file = store::load(&out.path().join(format!("result-{name}.json"))).unwrap();
    assert_eq!(file.status, RunStatus::Interrupted, "{logs}");
    eprintln!("{}: interrupted, nothing left behind", layer.name);
}

/// The envbench process the script `script` started (its `run`), from
/// /proc.
fn envbench_below(script: i32) -> Option<i32> {
    let children = |p: i32| -> Vec<i32> {
        fs::read_to_string(format!("/proc/{p}/task/{p}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|c| c.parse().ok())
            .collect()
    };
    let mut frontier = vec![script];
    while let Some(p) = frontier.pop() {
        let cmdline = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_run = words.len() > 1
            && Path::new(std::str::from_utf8(words[0]).unwrap_or_default())
                .file_name()
                .is_some_and(|n| n == "envbench")
            && words[1] == b"run";
        if is_run {
            return Some(p);
        }
        frontier.extend(children(p));
    }
    None
}
