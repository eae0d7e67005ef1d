//! Virtualisation as layers, outermost first: hypervisor, WSL, container,
//! sandbox (gVisor), namespaces.
//!
//! Each layer carries the evidence that named it, so a reader can judge it.
//! Detection is a pure function of [`VirtInputs`], which [`read_virt_inputs`]
//! fills from files below a root (live `/` or a recorded fixture) plus the
//! live-only CPUID and environment.
//! See: systemd's `systemd-detect-virt` for the same sources, and Microsoft's
//! WSL docs for the kernel release naming (`-Microsoft` for WSL 1,
//! `-microsoft-standard-WSL2` for WSL 2).

mod container;
/// The names of the layers that other rooms reason about (the diagnosis's
/// rules), written once; a fingerprint's `layers[].name` holds them.
pub mod layer_name {
    /// gVisor's user-space kernel (`runsc`).
    pub const GVISOR: &str = "gvisor";
    /// WSL 1: Linux system calls served by the NT kernel.
    pub const WSL1: &str = "wsl1";
    /// WSL 2: a Hyper-V guest.
    pub const WSL2: &str = "wsl2";
    /// A podman container.
    pub const PODMAN: &str = "podman";
    /// A Docker container.
    pub const DOCKER: &str = "docker";
}
pub mod namespace;
mod sandbox;

use super::Roots;
use serde::{Deserialize, Serialize};

/// What a layer of virtualisation is; the result file keeps it in lower
/// case (`hypervisor`, `sandbox` ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    /// A guest of a hypervisor (`kvm`, `firecracker`, `hyperv` ...).
    Hypervisor,
    /// WSL 1 or WSL 2.
    Wsl,
    /// A container runtime (`docker`, `podman`, `kubernetes` ...).
    Container,
    /// A user-space kernel that serves the system calls (`gvisor`).
    Sandbox,
    /// Namespaces other than the initial ones, no runtime named.
    Namespaces,
    /// Bare metal: nothing found.
    #[serde(rename = "none")]
    BareMetal,
    /// What an import was told (`--env virtualization=...`).
    Stated,
    /// A user-mode emulator that translates this process's instructions
    /// (`qemu-user`).
    Emulator,
}

impl LayerKind {
    /// The name the result file keeps.
    pub(crate) fn name(self) -> &'static str {
        match self {
            LayerKind::Hypervisor => "hypervisor",
            LayerKind::Wsl => "wsl",
            LayerKind::Container => "container",
            LayerKind::Sandbox => "sandbox",
            LayerKind::Namespaces => "namespaces",
            LayerKind::BareMetal => "none",
            LayerKind::Stated => "stated",
            LayerKind::Emulator => "emulator",
        }
    }
}

impl std::fmt::Display for LayerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One layer of virtualisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VirtLayer {
    /// What the layer is.
    pub kind: LayerKind,
    /// e.g. `kvm`, `firecracker`, `hyperv`, `vmware`, `virtualbox`, `xen`,
    /// `wsl1`, `wsl2`, `docker`, `podman`, `lxc`, `kubernetes`,
    /// `containerd`, `bubblewrap`, `gvisor`, `namespaces`, `bare-metal`.
    pub name: String,
    /// What named it, e.g. `CPUID hypervisor vendor "KVMKVMKVM"`.
    pub evidence: Vec<String>,
}

/// The layered answer; never empty (bare metal is a layer of kind `none`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Virtualization {
    /// Outermost first, e.g. kvm, then docker.
    pub layers: Vec<VirtLayer>,
    /// Markers seen but not trusted alone, e.g. a `/.dockerenv` left in an
    /// image that now boots as a VM.
    pub notes: Vec<String>,
}

impl Virtualization {
    /// The layer names joined by `/`, e.g. `firecracker`, `wsl2/docker`, `bare-metal`.
    pub(crate) fn summary(&self) -> String {
        self.layers
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// Everything detection looks at. Texts are file contents; `None` is an
/// absent or unreadable file.
#[derive(Debug, Clone, Default)]
pub struct VirtInputs {
    /// `hypervisor` flag in `/proc/cpuinfo`.
    pub hypervisor_flag: bool,
    /// CPUID leaf 0x40000000 vendor string (live x86 only).
    pub cpuid_vendor: Option<String>,
    /// A user-mode emulator answering for this process (`/proc/self/exe`
    /// and `/proc/thread-self/exe` differ).
    pub emulator: Option<super::emulation::Emulator>,
    /// The CPU's brand string as CPUID gives it (live x86 only).
    pub cpuid_brand: Option<String>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub dmi_sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<String>,
    /// `/sys/class/dmi/id/bios_vendor`.
    pub dmi_bios_vendor: Option<String>,
    /// `/proc/sys/kernel/osrelease`.
    pub osrelease: Option<String>,
    /// `/proc/version`.
    pub proc_version: Option<String>,
    /// `/proc/cmdline`.
    pub cmdline: Option<String>,
    /// `/proc/sys/fs/binfmt_misc/WSLInterop` or `/run/WSL` exists.
    pub wsl_interop: bool,
    /// `/proc/xen` exists.
    pub proc_xen: bool,
    /// `/.dockerenv` exists.
    pub dockerenv: bool,
    /// `/run/.containerenv` (Podman): its text, empty for a rootful
    /// container, `engine="podman-4.3.1"` and more for others.
    pub containerenv: Option<String>,
    /// `/proc/1/cgroup`.
    pub pid1_cgroup: Option<String>,
    /// `/proc/self/mountinfo`.
    pub mountinfo: Option<String>,
    /// The `container` variable of PID 1 (or of this process).
    pub container_var: Option<String>,
    /// `KUBERNETES_SERVICE_HOST` is set.
    pub kubernetes_var: bool,
    /// `/proc/1/comm`, e.g. `bwrap` when bubblewrap is PID 1 of a new PID
    /// namespace.
    pub pid1_comm: Option<String>,
    /// The first `model name` of `/proc/cpuinfo` (`unknown` in gVisor).
    pub cpuinfo_model: Option<String>,
    /// The first lines of the kernel log's last 16 KiB, from syslog(2)
    /// (what `dmesg` reads), e.g. `[    0.000000] Starting gVisor...`;
    /// `None` where it is refused.
    pub kernel_log: Option<String>,
    /// `/proc/self/ns/*` link targets by kind, e.g. (`pid`, `pid:[4026531836]`).
    pub ns_links: Vec<(String, String)>,
}

/// Maps a CPUID hypervisor vendor signature to a name.
fn hypervisor_from_cpuid(vendor: &str) -> Option<&'static str> {
    let v = vendor.trim_matches(char::from(0)).trim();
    Some(match v {
        "KVMKVMKVM" => "kvm",
        "Microsoft Hv" => "hyperv",
        "VMwareVMware" => "vmware",
        "XenVMMXenVMM" => "xen",
        "VBoxVBoxVBox" => "virtualbox",
        "TCGTCGTCGTCG" => "qemu",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "acrn",
        "lrpepyh  vr" | "prl hyperv" => "parallels",
        _ => return None,
    })
}

/// Maps DMI strings to a hypervisor name.
fn hypervisor_from_dmi(inputs: &VirtInputs) -> Option<(&'static str, String)> {
    let fields = [
        ("sys_vendor", &inputs.dmi_sys_vendor),
        ("product_name", &inputs.dmi_product_name),
        ("bios_vendor", &inputs.dmi_bios_vendor),
    ];
    const TABLE: &[(&str, &str)] = &[
        ("KVM", "kvm"),
        ("QEMU", "kvm"),
        ("SeaBIOS", "kvm"),
        ("Amazon EC2", "kvm"),
        ("Google", "kvm"),
        ("innotek GmbH", "virtualbox"),
        ("VirtualBox", "virtualbox"),
        ("VMware", "vmware"),
        ("Xen", "xen"),
        ("Parallels", "parallels"),
        ("Microsoft Corporation", "hyperv"),
        ("Hyper-V", "hyperv"),
    ];
    for (field, value) in fields {
        let Some(v) = value.as_deref().map(str::trim) else {
            continue;
        };
        if let Some((_, name)) = TABLE.iter().find(|(needle, _)| v.contains(needle)) {
            // A physical Surface also says "Microsoft Corporation"; only a
            // "Virtual Machine" product is Hyper-V.
            if *name == "hyperv"
                && inputs.dmi_product_name.as_deref().map(str::trim) != Some("Virtual Machine")
            {
                continue;
            }
            return Some((name, format!("DMI {field} \"{v}\"")));
        }
    }
    None
}

fn hypervisor_layer(inputs: &VirtInputs) -> Option<VirtLayer> {
    let mut evidence = Vec::new();
    let mut name = None;
    if inputs.hypervisor_flag {
        evidence.push("\"hypervisor\" flag in /proc/cpuinfo".to_string());
    }
    if let Some(v) = &inputs.cpuid_vendor {
        if let Some(n) = hypervisor_from_cpuid(v) {
            name = Some(n);
            evidence.push(format!(
                "CPUID hypervisor vendor \"{}\"",
                v.trim_matches(char::from(0))
            ));
        }
    }
    if let Some((n, ev)) = hypervisor_from_dmi(inputs) {
        name.get_or_insert(n);
        evidence.push(ev);
    }
    if inputs.proc_xen {
        name.get_or_insert("xen");
        evidence.push("/proc/xen exists".into());
    }
    let cmdline = inputs.cmdline.as_deref().unwrap_or("");
    let firecracker = cmdline.contains("firecracker")
        || (cmdline.contains("virtio_mmio.device=") && inputs.dmi_sys_vendor.is_none());
    if firecracker {
        evidence.push(
            "kernel command line names Firecracker / virtio-mmio devices and there is no DMI table"
                .into(),
        );
        return Some(VirtLayer {
            kind: LayerKind::Hypervisor,
            name: "firecracker".into(),
            evidence,
        });
    }
    if name.is_none() && !inputs.hypervisor_flag {
        return None;
    }
    Some(VirtLayer {
        kind: LayerKind::Hypervisor,
        name: name.unwrap_or("unknown-hypervisor").into(),
        evidence,
    })
}

fn wsl_layer(inputs: &VirtInputs) -> Option<VirtLayer> {
    let release = inputs.osrelease.as_deref().unwrap_or("").trim();
    let version = inputs.proc_version.as_deref().unwrap_or("");
    let lower = release.to_ascii_lowercase();
    let mut evidence = Vec::new();
    let name = if lower.contains("wsl2") || lower.contains("microsoft-standard") {
        evidence.push(format!("kernel release \"{release}\""));
        layer_name::WSL2
    } else if release.contains("Microsoft") || version.contains("Microsoft@Microsoft.com") {
        evidence.push(format!(
            "kernel release \"{release}\" (WSL 1 emulates Linux on the NT kernel)"
        ));
        layer_name::WSL1
    } else if lower.contains("microsoft") {
        evidence.push(format!(
            "kernel release \"{release}\" names Microsoft; assuming WSL 2"
        ));
        layer_name::WSL2
    } else {
        return None;
    };
    if inputs.wsl_interop {
        evidence.push("WSL interop is registered (binfmt_misc/WSLInterop or /run/WSL)".into());
    }
    Some(VirtLayer {
        kind: LayerKind::Wsl,
        name: name.into(),
        evidence,
    })
}

/// The hypervisor and WSL layers, outermost first.
fn machine_layers(inputs: &VirtInputs) -> Vec<VirtLayer> {
    let wsl = wsl_layer(inputs);
    match (hypervisor_layer(inputs), wsl) {
        // WSL 2 runs in a Hyper-V utility VM: that VM is the WSL layer.
        // Under WSL 1 a Hyper-V bit means the Windows host itself runs on
        // Hyper-V (VBS); it is evidence, not a layer around Linux.
        (Some(h), Some(mut w)) if h.name == "hyperv" || h.name == "unknown-hypervisor" => {
            w.evidence.extend(h.evidence);
            vec![w]
        }
        (h, w) => h.into_iter().chain(w).collect(),
    }
}

/// Adds what the namespace links say: inside gVisor they are its own (the
/// sandbox's evidence already lists them); beside a container they are
/// part of it; alone they are the `namespaces` layer. Undecided mnt/net
/// links become a note.
fn add_namespaces(
    layers: &mut Vec<VirtLayer>,
    ns: &namespace::NsAssessment,
    notes: &mut Vec<String>,
) {
    if !ns.undecided.is_empty() {
        notes.push(format!(
            "{} may or may not be initial: no link here shows the kernel pinning the initial mnt and net namespaces' numbers",
            ns.undecided.join(" ")
        ));
    }
    if ns.not_initial.is_empty() || layers.iter().any(|l| l.kind == LayerKind::Sandbox) {
        return;
    }
    let evidence = namespace::evidence(&ns.not_initial);
    // a container's or WSL 2's own namespaces (each WSL 2 distribution
    // runs in namespaces of the utility VM) are evidence of that layer
    match layers
        .iter_mut()
        .rev()
        .find(|l| l.kind == LayerKind::Container || l.kind == LayerKind::Wsl)
    {
        Some(container) => container.evidence.push(evidence),
        None => layers.push(VirtLayer {
            kind: LayerKind::Namespaces,
            name: "namespaces".into(),
            evidence: vec![evidence],
        }),
    }
}

/// A user-mode emulator translating this process, innermost: the kernel
/// names its program as this thread's, while the process is told it is
/// the translated one; the CPU model CPUID gives is evidence too.
fn emulator_layer(inputs: &VirtInputs) -> Option<VirtLayer> {
    let emu = inputs.emulator.as_ref()?;
    let mut evidence = vec![format!(
        "/proc/thread-self/exe is {} while /proc/self/exe answers {}: a user-mode emulator \
         translates this process's instructions",
        emu.program, emu.translated
    )];
    if let (Some(brand), Some(model)) = (&inputs.cpuid_brand, &inputs.cpuinfo_model) {
        if brand != model && !brand.is_empty() {
            evidence.push(format!(
                "CPUID names the CPU \"{brand}\", /proc/cpuinfo \"{model}\""
            ));
        }
    }
    Some(VirtLayer {
        kind: LayerKind::Emulator,
        name: emu.name(),
        evidence,
    })
}

/// The layers, outermost first; bare metal when nothing is found.
pub(crate) fn detect(inputs: &VirtInputs) -> Virtualization {
    let mut layers = machine_layers(inputs);
    let ns = namespace::assess(inputs);
    let mnt_new = ns.not_initial.iter().any(|l| l.starts_with("mnt:"));
    let mut notes = Vec::new();
    layers.extend(container::container_layers(inputs, mnt_new, &mut notes));
    if let Some(gvisor) = sandbox::gvisor_layer(inputs, &ns) {
        if let Some(h) = layers.iter_mut().find(|l| l.kind == LayerKind::Hypervisor) {
            h.evidence
                .push("seen through gVisor, which passes the host's CPU flags on".into());
        }
        layers.push(gvisor);
    }
    add_namespaces(&mut layers, &ns, &mut notes);
    layers.extend(emulator_layer(inputs));
    if layers.is_empty() {
        layers.push(VirtLayer {
            kind: LayerKind::BareMetal,
            name: "bare-metal".into(),
            evidence: vec![
                "no hypervisor flag, DMI, WSL kernel, container marker, sandbox or new namespace found"
                    .into(),
            ],
        });
    }
    Virtualization { layers, notes }
}

/// CPUID leaf 0x40000000's vendor signature, when the CPU says a hypervisor
/// is present (the leaf is undefined otherwise).
pub(crate) fn cpuid_hypervisor_vendor(hypervisor_flag: bool) -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        if !hypervisor_flag {
            return None;
        }
        // CPUID exists on every x86_64 CPU; leaf 0x40000000 is reserved for
        // hypervisors and harmless to query.
        let r = core::arch::x86_64::__cpuid(0x4000_0000);
        let mut bytes = Vec::with_capacity(12);
        for reg in [r.ebx, r.ecx, r.edx] {
            bytes.extend_from_slice(&reg.to_le_bytes());
        }
        let s: String = bytes.iter().map(|&b| b as char).collect();
        Some(s.trim_matches(char::from(0)).to_string()).filter(|s| !s.is_empty())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = hypervisor_flag;
        None
    }
}

/// Fills the inputs from files below `roots`, plus CPUID and the environment
/// when `roots.live`.
pub(crate) fn read_virt_inputs(roots: &Roots) -> VirtInputs {
    let cpuinfo = roots.read("/proc/cpuinfo").unwrap_or_default();
    let hypervisor_flag = super::cpu::parse_cpuinfo(&cpuinfo)
        .flags
        .iter()
        .any(|f| f == "hypervisor");
    let pid1_environ_container = roots.read("/proc/1/environ").and_then(|e| {
        e.split('\0')
            .find_map(|kv| kv.strip_prefix("container=").map(str::to_string))
    });
    let live_env = |k: &str| {
        if roots.live {
            std::env::var(k).ok()
        } else {
            None
        }
    };
    VirtInputs {
        hypervisor_flag,
        cpuid_vendor: if roots.live {
            cpuid_hypervisor_vendor(hypervisor_flag)
        } else {
            None
        },
        emulator: super::emulation::emulator(roots),
        cpuid_brand: if roots.live {
            super::emulation::CpuId::here().map(|c| c.brand)
        } else {
            None
        },
        dmi_sys_vendor: roots.read("/sys/class/dmi/id/sys_vendor"),
        dmi_product_name: roots.read("/sys/class/dmi/id/product_name"),
        dmi_bios_vendor: roots.read("/sys/class/dmi/id/bios_vendor"),
        osrelease: roots.read("/proc/sys/kernel/osrelease"),
        proc_version: roots.read("/proc/version"),
        cmdline: roots.read("/proc/cmdline"),
        wsl_interop: roots.exists("/proc/sys/fs/binfmt_misc/WSLInterop")
            || roots.exists("/run/WSL"),
        proc_xen: roots.exists("/proc/xen"),
        dockerenv: roots.exists("/.dockerenv"),
        containerenv: roots.read("/run/.containerenv"),
        pid1_cgroup: roots.read("/proc/1/cgroup"),
        mountinfo: roots.read("/proc/self/mountinfo"),
        container_var: pid1_environ_container.or_else(|| live_env("container")),
        kubernetes_var: live_env("KUBERNETES_SERVICE_HOST").is_some(),
        pid1_comm: roots.read("/proc/1/comm"),
        cpuinfo_model: crate::probe::cpu::parse_cpuinfo(&cpuinfo).model,
        kernel_log: roots.call("syslog", read_kernel_log),
        ns_links: namespace::NS_KINDS
            .iter()
            .filter_map(|k| {
                let target = roots.read_link(&format!("/proc/self/ns/{k}"))?;
                Some((k.to_string(), target))
            })
            .collect(),
    }
}

/// How many kernel log lines detection keeps.
const KERNEL_LOG_LINES: usize = 3;

/// The first [`KERNEL_LOG_LINES`] lines of what syslog(2) reads into 16
/// KiB (`dmesg`): the log's last 16 KiB, so its start only where the
/// whole log is shorter, as gVisor's is ("Starting gVisor..." first); on a
/// busy Linux host, lines from the middle. `None` where it is refused
/// (dmesg_restrict without CAP_SYSLOG).
fn read_kernel_log() -> Option<String> {
    const SYSLOG_ACTION_READ_ALL: libc::c_int = 3;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: buf is valid for buf.len() bytes; klogctl writes at most that.
    let n = unsafe {
        libc::klogctl(
            SYSLOG_ACTION_READ_ALL,
            buf.as_mut_ptr().cast(),
            buf.len() as libc::c_int,
        )
    };
    let n = usize::try_from(n).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]);
    let head: Vec<&str> = text.lines().take(KERNEL_LOG_LINES).collect();
    Some(head.join("\n")).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &Virtualization) -> Vec<&str> {
        v.layers.iter().map(|l| l.name.as_str()).collect()
    }

    #[test]
    fn nothing_found_is_bare_metal() {
        assert_eq!(names(&detect(&VirtInputs::default())), vec!["bare-metal"]);
    }

    #[test]
    fn a_user_mode_emulator_is_the_innermost_layer() {
        let i = VirtInputs {
            hypervisor_flag: true,
            cpuid_vendor: Some("KVMKVMKVM".into()),
            emulator: crate::probe::emulation::emulator_of(
                Some("/opt/envbench"),
                Some("/usr/bin/qemu-x86_64"),
            ),
            cpuid_brand: Some("QEMU TCG CPU version 2.5+".into()),
            cpuinfo_model: Some("AMD EPYC".into()),
            ..Default::default()
        };
        let v = detect(&i);
        assert_eq!(names(&v), vec!["kvm", "qemu-user"]);
        let l = &v.layers[1];
        assert_eq!(l.kind, LayerKind::Emulator);
        assert!(
            l.evidence[0].contains("/usr/bin/qemu-x86_64"),
            "{:?}",
            l.evidence
        );
        assert!(l.evidence[1].contains("QEMU TCG CPU"), "{:?}", l.evidence);
    }

    #[test]
    fn cpuid_names_the_hypervisor() {
        let i = VirtInputs {
            hypervisor_flag: true,
            cpuid_vendor: Some("KVMKVMKVM\0\0\0".into()),
            ..Default::default()
        };
        assert_eq!(names(&detect(&i)), vec!["kvm"]);
    }

    #[test]
    fn hyperv_under_wsl2_is_the_wsl2_layer() {
        let i = VirtInputs {
            hypervisor_flag: true,
            cpuid_vendor: Some("Microsoft Hv".into()),
            osrelease: Some("5.15.153.1-microsoft-standard-WSL2\n".into()),
            dockerenv: true,
            mountinfo: Some(
                "790 700 0:110 / / rw - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A\n"
                    .into(),
            ),
            ..Default::default()
        };
        assert_eq!(names(&detect(&i)), vec!["wsl2", "docker"]);
    }

    #[test]
    fn wsl2s_own_namespaces_are_its_evidence_not_a_layer() {
        // each WSL 2 distribution runs in namespaces of the utility VM
        let i = VirtInputs {
            hypervisor_flag: true,
            cpuid_vendor: Some("Microsoft Hv".into()),
            osrelease: Some("5.15.153.1-microsoft-standard-WSL2\n".into()),
            ns_links: vec![
                ("pid".into(), "pid:[4026532200]".into()),
                ("uts".into(), "uts:[4026531838]".into()),
            ],
            ..Default::default()
        };
        let v = detect(&i);
        assert_eq!(names(&v), vec!["wsl2"]);
        assert!(v.layers[0]
            .evidence
            .iter()
            .any(|e| e.contains("pid:[4026532200]")));
    }

    #[test]
    fn physical_surface_is_not_hyperv() {
        let i = VirtInputs {
            dmi_sys_vendor: Some("Microsoft Corporation".into()),
            dmi_product_name: Some("Surface Laptop 5".into()),
            ..Default::default()
        };
        assert_eq!(names(&detect(&i)), vec!["bare-metal"]);
    }

    #[test]
    fn dockerenv_alone_is_a_note_not_a_layer() {
        let i = VirtInputs {
            dockerenv: true,
            mountinfo: Some("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n".into()),
            ..Default::default()
        };
        let v = detect(&i);
        assert_eq!(names(&v), vec!["bare-metal"]);
        assert!(v.notes[0].contains("/.dockerenv"));
    }

    #[test]
    fn overlay_root_with_dockerenv_is_docker() {
        let i = VirtInputs {
            dockerenv: true,
            mountinfo: Some("600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X\n".into()),
            ..Default::default()
        };
        assert_eq!(names(&detect(&i)), vec!["docker"]);
    }

    #[test]
    fn kubernetes_wraps_the_runtime() {
        let i = VirtInputs {
            kubernetes_var: true,
            pid1_cgroup: Some("12:memory:/kubepods/burstable/pod1/docker-abc.scope\n".into()),
            ..Default::default()
        };
        assert_eq!(names(&detect(&i)), vec!["kubernetes", "docker"]);
    }
}
