//! Opens a real comparison report in headless Chromium (Debian's
//! `chromium`): every chart must render (a non-empty SVG with axis text and
//! no text outside its box) and nothing may overflow the page. A screenshot
//! is kept in target/html-check/report.png as an artifact.
//!
//! The report has no script of its own; the check runs in a harness page
//! that loads it in an iframe. Without Chromium the test is skipped with a
//! note, except under CI (`CI` set), where .ci/run installs it and its
//! absence is a failure.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

const HARNESS: &str = r#"<!DOCTYPE html><html><body>
<iframe id="r" src="report.html" width="1200" height="4000"></iframe>
<pre id="out">RESULT: pending</pre>
<script>
document.getElementById('r').addEventListener('load', () => {
  const doc = document.getElementById('r').contentDocument;
  const problems = [];
  const root = doc.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) problems.push('page overflows horizontally: ' + root.scrollWidth + ' > ' + root.clientWidth);
  const pageRight = root.clientWidth;
  doc.body.querySelectorAll('*').forEach(el => {
    const b = el.getBoundingClientRect();
    if (b.width > 0 && (b.right > pageRight + 1 || b.left < -1))
      problems.push('leaves the page: <' + el.tagName.toLowerCase() + '> ' + (el.textContent || '').slice(0, 60));
  });
  const svgs = doc.querySelectorAll('svg');
  if (svgs.length === 0) problems.push('no chart');
  svgs.forEach((svg, i) => {
    const box = svg.getBoundingClientRect();
    const name = svg.getAttribute('aria-label') || ('chart ' + i);
    if (box.width < 10 || box.height < 10) problems.push(name + ': empty');
    if (svg.querySelectorAll('rect, polyline, circle').length === 0) problems.push(name + ': no marks');
    if (svg.querySelectorAll('text').length < 3) problems.push(name + ': no axes or labels');
    const texts = Array.from(svg.querySelectorAll('text'));
    const boxes = texts.map(t => t.getBoundingClientRect());
    texts.forEach((t, j) => {
      const b = boxes[j];
      if (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1 || b.bottom > box.bottom + 1)
        problems.push(name + ': text outside the chart: ' + t.textContent);
      for (let k = j + 1; k < texts.length; k++) {
        const o = boxes[k];
        const overlap = Math.min(b.right, o.right) - Math.max(b.left, o.left) > 1
          && Math.min(b.bottom, o.bottom) - Math.max(b.top, o.top) > 1;
        if (overlap) problems.push(name + ': texts overlap: "' + t.textContent + '" and "' + texts[k].textContent + '"');
      }
    });
  });
  document.getElementById('out').textContent = problems.length ? 'RESULT: FAIL\n' + problems.join('\n') : 'RESULT: ok, ' + svgs.length + ' charts';
});
</script></body></html>"#;

fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn headless(bin: &Path, profile: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
    ])
    .args([
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn the_report_renders_in_chromium_without_overflow() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install Debian's chromium (see .ci/run)"
        );
        eprintln!("skipped: no chromium on this machine (apt-get install chromium)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for label in ["native", "vm"] {
        Command::cargo_bin("envbench")
            .unwrap()
            .env("XDG_DATA_HOME", dir)
            .current_dir(dir)
            .args([
                "run",
                "--quiet",
                "--fake-clock",
                "--only",
                "cpu.lu,cpu.primes,mem.latency,os.multiprog,os.spawn,os.syscall",
                "--reps",
                "3",
            ])
            .args(["--label", label, "-o", &format!("{label}.json")])
            .assert()
            .success();
    }
    // ratios over many decades (syscalls 2000x dearer, LU 10^4x slower):
    // the speed-up chart's ticks must still not touch
    let path = dir.join("vm.json");
    let mut vm: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for case in vm["cases"].as_array_mut().unwrap() {
        let factor = match case["bench"].as_str().unwrap() {
            "os.syscall" => 2000.0,
            "cpu.lu" => 1e-4,
            _ => continue,
        };
        for m in case["metrics"].as_array_mut().unwrap() {
            for v in m["samples"].as_array_mut().unwrap() {
                *v = serde_json::json!(v.as_f64().unwrap() * factor);
            }
        }
    }
    std::fs::write(&path, serde_json::to_string(&vm).unwrap()).unwrap();
    Command::cargo_bin("envbench")
        .unwrap()
        .current_dir(dir)
        .args(["compare", "native.json", "vm.json", "--html", "report.html"])
        .assert()
        .success();
    std::fs::write(dir.join("harness.html"), HARNESS).unwrap();
    let out = headless(&bin, &dir.join("profile"))
        .args([
            "--allow-file-access-from-files",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", dir.join("harness.html").display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let result = dom
        .lines()
        .find(|l| l.contains("RESULT:"))
        .unwrap_or("no RESULT line: chromium did not run the harness");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/html-check");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("report.png");
    let _ = headless(&bin, &dir.join("profile"))
        .args([
            "--window-size=1200,4000",
            &format!("--screenshot={}", shot.display()),
        ])
        .arg(format!("file://{}", dir.join("report.html").display()))
        .output();
    std::fs::copy(dir.join("report.html"), artifacts.join("report.html")).unwrap();
    assert!(
        result.contains("RESULT: ok"),
        "{}",
        dom.split("RESULT:").nth(1).unwrap_or(&dom)
    );
    assert!(shot.exists(), "screenshot written");
}
