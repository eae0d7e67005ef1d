//! Sandboxes that put their own kernel between a program and Linux: gVisor
//! (`runsc`), whose sentry answers every system call in user space, as
//! WSL 1 did on NT.
//!
//! gVisor's fingerprints, as seen inside `runsc do` (release 20221219):
//! syslog(2) (what `dmesg` reads, allowed without root; there is no
//! `/dev/kmsg`) starts `Starting gVisor...`; `/proc/version` is a fixed
//! banner for kernel 4.4.0 and `/proc/sys/kernel/osrelease` is missing;
//! the root is `9p` over the gofer's file descriptors (`trans=fd`) or an
//! `overlay` with source `none`; `/proc/cpuinfo` says `model name:
//! unknown`; `/proc/self/ns` links carry gVisor's own small numbers. The
//! platform (ptrace, systrap or kvm) is not visible from inside.
//! See: gVisor's pkg/sentry/kernel/syslog.go and pkg/sentry/fsimpl/proc.

use super::namespace::NsAssessment;
use super::{LayerKind, VirtInputs, VirtLayer};

/// The first line gVisor writes to its kernel log.
const GVISOR_LOG_START: &str = "Starting gVisor...";

/// gVisor's `/proc/version`: it emulates Linux 4.4.0 whatever the host runs.
const GVISOR_PROC_VERSION: &str = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016";

/// The evidence that only gVisor leaves, then the evidence that supports it.
fn gvisor_evidence(inputs: &VirtInputs, ns: &NsAssessment) -> (Vec<String>, Vec<String>) {
    let mut strong = Vec::new();
    let mut support = Vec::new();
    if let Some(line) = inputs
        .kernel_log
        .as_deref()
        .and_then(|log| log.lines().find(|l| l.contains(GVISOR_LOG_START)))
    {
        strong.push(format!("syslog(2) says \"{}\"", line.trim()));
    }
    if inputs.proc_version.as_deref().map(str::trim) == Some(GVISOR_PROC_VERSION) {
        strong.push(format!(
            "/proc/version is gVisor's fixed banner \"{GVISOR_PROC_VERSION}\""
        ));
    }
    if let Some(root) = sandbox_root(inputs.mountinfo.as_deref().unwrap_or("")) {
        support.push(root);
    }
    if inputs.cpuinfo_model.as_deref().map(str::trim) == Some(crate::probe::cpu::MODEL_PLACEHOLDER)
    {
        support.push("/proc/cpuinfo says model name \"unknown\" (the host's CPU is hidden)".into());
    }
    if !ns.foreign.is_empty() {
        support.push(format!(
            "namespace links below Linux's numbering: {}",
            ns.foreign.join(" ")
        ));
    }
    (strong, support)
}

/// The root mount as gVisor makes it: 9p served over file descriptors by
/// the gofer, or an overlay whose source is `none`.
fn sandbox_root(mountinfo: &str) -> Option<String> {
    let (mounts, _) = crate::probe::storage::parse_mountinfo(mountinfo);
    let root = mounts.iter().rev().find(|m| m.mount_point == "/")?;
    let source = root.source.as_str();
    let options = root.super_options.as_str();
    if root.fs_type == "9p" && options.split(',').any(|o| o == "trans=fd") {
        return Some("root is 9p with trans=fd (served by the gofer)".into());
    }
    if root.fs_type == "overlay" && source == "none" {
        return Some("root is an overlay with source \"none\"".into());
    }
    None
}

/// gVisor as a layer: named by its kernel log, or by its `/proc/version`
/// beside one supporting sign; the rest is listed as evidence.
pub(super) fn gvisor_layer(inputs: &VirtInputs, ns: &NsAssessment) -> Option<VirtLayer> {
    let (strong, support) = gvisor_evidence(inputs, ns);
    let log = strong.iter().any(|e| e.starts_with("syslog"));
    if !log && (strong.is_empty() || support.is_empty()) {
        return None;
    }
    let mut evidence = strong;
    evidence.extend(support);
    evidence.push("platform (ptrace, systrap or kvm) is not visible from inside".into());
    Some(VirtLayer {
        kind: LayerKind::Sandbox,
        name: super::layer_name::GVISOR.into(),
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_log_alone_names_gvisor() {
        let i = VirtInputs {
            kernel_log: Some("[    0.000000] Starting gVisor...\n".into()),
            ..Default::default()
        };
        let l = gvisor_layer(&i, &NsAssessment::default()).unwrap();
        assert_eq!((l.kind, l.name.as_str()), (LayerKind::Sandbox, "gvisor"));
    }

    #[test]
    fn the_banner_needs_a_supporting_sign() {
        let mut i = VirtInputs {
            proc_version: Some(format!("{GVISOR_PROC_VERSION}\n")),
            ..Default::default()
        };
        assert_eq!(gvisor_layer(&i, &NsAssessment::default()), None);
        i.mountinfo = Some("8 8 0:8 / / rw  - 9p none rw,trans=fd,rfdno=3,wfdno=3\n".into());
        let l = gvisor_layer(&i, &NsAssessment::default()).unwrap();
        assert!(l.evidence.iter().any(|e| e.contains("trans=fd")));
    }

    #[test]
    fn a_linux_kernel_log_is_not_gvisor() {
        let i = VirtInputs {
            kernel_log: Some("[    0.000000] Linux version 6.18.44\n".into()),
            proc_version: Some("Linux version 6.18.44 (gcc) #1 SMP\n".into()),
            ..Default::default()
        };
        assert_eq!(gvisor_layer(&i, &NsAssessment::default()), None);
    }
}
