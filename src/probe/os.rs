//! Kernel, distribution, architecture, host name and load average.

use super::{Notes, Roots};
use serde::{Deserialize, Serialize};

/// The operating system as the kernel and `/etc/os-release` describe it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsInfo {
    /// `/proc/sys/kernel/osrelease`, e.g. `6.8.0-45-generic`,
    /// `5.15.153.1-microsoft-standard-WSL2`, `4.4.0-19041-Microsoft` (WSL 1),
    /// `4.4.0` (gVisor's emulated kernel, from `/proc/version`).
    pub kernel_release: Option<String>,
    /// Where a release came from when /proc/sys/kernel/osrelease did not
    /// give it: `/proc/version` (gVisor has no osrelease) or `uname(2)`.
    /// `None` when osrelease answered (or nothing did).
    #[serde(default)]
    pub kernel_release_source: Option<String>,
    /// `/proc/version`, the kernel's build banner.
    pub kernel_version: Option<String>,
    /// `PRETTY_NAME` of `/etc/os-release`, e.g. `Ubuntu 22.04.4 LTS`.
    pub distro: Option<String>,
    /// CPU architecture envbench was built for, e.g. `x86_64`, `aarch64`.
    pub arch: String,
    /// Host name from `/proc/sys/kernel/hostname`.
    pub hostname: Option<String>,
    /// What confines envbench's system calls, from `/proc/self/status`;
    /// absent from files written before.
    #[serde(default, skip_serializing_if = "Confinement::is_unknown")]
    pub confinement: Confinement,
    /// The resource limits of this process (`/proc/self/limits`), by the
    /// resources' short names (`nofile`, `nproc`, `as`, `stack` ...);
    /// absent where unreadable and from older files.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rlimits: std::collections::BTreeMap<String, super::rlimit::Rlimit>,
}

/// The system-call filters and privileges of a process, as
/// `/proc/self/status` gives them: a container runtime's default seccomp
/// profile runs a BPF filter on every system call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confinement {
    /// `Seccomp:`: 0 none, 1 strict, 2 filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_mode: Option<u8>,
    /// `Seccomp_filters:`: how many filters run on each system call
    /// (Linux 5.9 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seccomp_filters: Option<u32>,
    /// `NoNewPrivs:`: whether execve may no longer gain privileges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_new_privs: Option<bool>,
}

impl Confinement {
    /// Nothing was read.
    pub(crate) fn is_unknown(&self) -> bool {
        *self == Confinement::default()
    }

    /// Filters on each system call: the count where the kernel gives it,
    /// else one for mode 2 and none for the other modes.
    pub(crate) fn filters(&self) -> Option<u32> {
        self.seccomp_filters
            .or_else(|| self.seccomp_mode.map(|m| u32::from(m == 2)))
    }

    /// The confinement a `/proc/PID/status` text gives.
    pub(crate) fn parse(status: &str) -> Confinement {
        let field = |name: &str| super::process::status_field(status, name);
        Confinement {
            seccomp_mode: field("Seccomp").and_then(|v| v.parse().ok()),
            seccomp_filters: field("Seccomp_filters").and_then(|v| v.parse().ok()),
            no_new_privs: field("NoNewPrivs").and_then(|v| match v {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            }),
        }
    }
}

/// The 1, 5 and 15 minute load averages at the start of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadAverage {
    /// Runnable tasks averaged over 1 minute.
    pub one: f64,
    /// Over 5 minutes.
    pub five: f64,
    /// Over 15 minutes.
    pub fifteen: f64,
}

/// Reads the OS facts below `roots`.
pub(crate) fn probe_os(roots: &Roots, notes: &mut Notes) -> OsInfo {
    let trimmed =
        |p: &str, notes: &mut Notes| roots.read_noted(p, notes).map(|s| s.trim().to_string());
    let kernel_version = trimmed("/proc/version", notes);
    let (kernel_release, kernel_release_source) = match trimmed("/proc/sys/kernel/osrelease", notes)
    {
        Some(r) => (Some(r), None),
        None => fallback_release(roots, kernel_version.as_deref()),
    };
    OsInfo {
        kernel_release,
        kernel_release_source,
        kernel_version,
        distro: roots
            .read_noted("/etc/os-release", notes)
            .and_then(|s| parse_os_release(&s)),
        arch: std::env::consts::ARCH.to_string(),
        hostname: trimmed("/proc/sys/kernel/hostname", notes),
        confinement: roots
            .read("/proc/self/status")
            .map(|s| Confinement::parse(&s))
            .unwrap_or_default(),
        rlimits: roots
            .read("/proc/self/limits")
            .map(|t| super::rlimit::parse_limits(&t))
            .unwrap_or_default(),
    }
}

/// The release from `/proc/version`'s banner, else from uname(2), with the
/// source named; gVisor (no `/proc/sys/kernel/osrelease`) answers both.
fn fallback_release(roots: &Roots, version: Option<&str>) -> (Option<String>, Option<String>) {
    if let Some(r) = version.and_then(release_from_version) {
        return (Some(r), Some("/proc/version".into()));
    }
    match roots.call("uname-r", uname_release) {
        Some(r) if !r.trim().is_empty() => (Some(r.trim().to_string()), Some("uname(2)".into())),
        _ => (None, None),
    }
}

/// The release in a `/proc/version` banner: `Linux version 4.4.0 #1 ...`
/// gives `4.4.0`.
pub(crate) fn release_from_version(banner: &str) -> Option<String> {
    let rest = banner.trim().strip_prefix("Linux version ")?;
    rest.split_whitespace().next().map(str::to_string)
}

/// The running kernel's release from uname(2).
fn uname_release() -> Option<String> {
    // SAFETY: `u` is a zeroed utsname owned by this frame; uname fills it
    // with NUL-terminated strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return None;
        }
        let release = std::ffi::CStr::from_ptr(u.release.as_ptr());
        Some(release.to_string_lossy().into_owned())
    }
}

/// `PRETTY_NAME` from os-release text, else `NAME VERSION`.
pub(crate) fn parse_os_release(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        })
    };
    field("PRETTY_NAME").or_else(|| {
        let name = field("NAME")?;
        Some(match field("VERSION") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

/// `/proc/loadavg` (`0.05 0.04 0.01 1/78 1858`): the three load averages
/// and the tasks runnable as it was read (the reader among them). The
/// fingerprint keeps the averages, telemetry the runnable tasks.
pub(crate) fn parse_loadavg(text: &str) -> Option<(LoadAverage, u32)> {
    let mut f = text.split_whitespace();
    let mut average = || f.next()?.parse::<f64>().ok();
    let averages = LoadAverage {
        one: average()?,
        five: average()?,
        fifteen: average()?,
    };
    let runnable = f.next()?.split('/').next()?.parse().ok()?;
    Some((averages, runnable))
}

#[cfg(test)]
mod tests {

    #[test]
    fn confinement_reads_seccomp_and_no_new_privs() {
        // podman's default profile (runc), Linux 6.1
        let podman = "Name:\tcat\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\nSpeculation_Store_Bypass:\tthread vulnerable\n";
        let c = Confinement::parse(podman);
        assert_eq!(
            c,
            Confinement {
                seccomp_mode: Some(2),
                seccomp_filters: Some(1),
                no_new_privs: Some(false)
            }
        );
        assert_eq!(c.filters(), Some(1));
        // an older kernel without the count: mode 2 is one filter at least
        let old = Confinement::parse("Seccomp:\t2\nNoNewPrivs:\t1\n");
        assert_eq!((old.filters(), old.no_new_privs), (Some(1), Some(true)));
        let none = Confinement::parse("Seccomp:\t0\nSeccomp_filters:\t0\n");
        assert_eq!(none.filters(), Some(0));
        assert!(Confinement::parse("Name: x\n").is_unknown());
    }
    use super::*;

    #[test]
    fn parses_pretty_name() {
        let t = "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nVERSION_ID=\"22.04\"\n";
        assert_eq!(parse_os_release(t).as_deref(), Some("Ubuntu 22.04.4 LTS"));
    }

    #[test]
    fn falls_back_to_name_and_version() {
        let t = "NAME=Alpine\nVERSION=3.19\n";
        assert_eq!(parse_os_release(t).as_deref(), Some("Alpine 3.19"));
    }

    #[test]
    fn takes_the_release_from_a_version_banner() {
        let gvisor = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n";
        assert_eq!(release_from_version(gvisor).as_deref(), Some("4.4.0"));
        assert_eq!(release_from_version("garbage"), None);
    }

    #[test]
    fn parses_loadavg() {
        let (l, runnable) = parse_loadavg("0.05 0.04 0.01 1/78 1858\n").unwrap();
        assert_eq!((l.one, l.five, l.fifteen, runnable), (0.05, 0.04, 0.01, 1));
        let (l, runnable) = parse_loadavg("2.61 1.09 0.40 2/98 4931\n").unwrap();
        assert_eq!((l.one, runnable), (2.61, 2));
        assert!(parse_loadavg("garbage").is_none());
        assert!(parse_loadavg("0.05 0.04 0.01").is_none());
    }
}
