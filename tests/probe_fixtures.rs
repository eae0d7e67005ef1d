//! The fingerprint on recorded `/proc`, `/sys` and `/etc` trees, one per
//! environment the issue names (see tests/fixtures/probe/README.md for which
//! are recordings and which are built from documented formats).

use envbench::probe::storage::{describe_dir, parse_mountinfo};
use envbench::probe::virt::LayerKind;
use envbench::probe::{probe_fixture, Fingerprint, Roots};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/probe")
        .join(name)
}

fn fp(name: &str) -> Fingerprint {
    probe_fixture(&fixture(name))
}

fn layers(f: &Fingerprint) -> Vec<&str> {
    f.virtualization
        .layers
        .iter()
        .map(|l| l.name.as_str())
        .collect()
}

/// Filesystem type of `path` by the fixture's mount table.
fn fs_of(name: &str, path: &str) -> Option<String> {
    let roots = Roots::fixture(fixture(name));
    let (mounts, bad) = parse_mountinfo(&roots.read("/proc/self/mountinfo").unwrap());
    assert_eq!(bad, 0, "{name} mountinfo has malformed lines");
    describe_dir(&roots, &mounts, Path::new(path), Path::new(path)).fs_type
}

const GIB: u64 = 1 << 30;

#[test]
fn bare_metal_host() {
    let f = fp("bare-metal");
    assert_eq!(layers(&f), vec!["bare-metal"]);
    assert_eq!(f.os.distro.as_deref(), Some("Ubuntu 22.04.4 LTS"));
    assert_eq!(
        f.cpu.model.as_deref(),
        Some("AMD Ryzen 7 5700X 8-Core Processor")
    );
    assert_eq!(
        (f.cpu.sockets, f.cpu.cores, f.cpu.logical_cpus),
        (Some(1), Some(8), 16)
    );
    assert!(
        f.cpu.flags.iter().any(|x| x == "avx2") && !f.cpu.flags.iter().any(|x| x == "hypervisor")
    );
    let last_level = f.cpu.caches.iter().max_by_key(|c| c.level);
    assert_eq!(last_level.map(|c| c.size_bytes), Some(32 * 1024 * 1024));
    assert_eq!(f.cpu.governor.as_deref(), Some("schedutil"));
    assert_eq!(f.cpu.idle_driver.as_deref(), Some("acpi_idle"));
    assert_eq!(f.cpu.idle_governor.as_deref(), Some("menu"));
    assert_eq!(f.cpu.max_mhz, Some(4661.0));
    assert_eq!(f.memory.total_bytes, Some(32779372 * 1024));
    assert_eq!(f.clock.source.as_deref(), Some("tsc"));
    assert_eq!(f.cgroup.version.as_deref(), Some("v2"));
    assert_eq!(
        (
            f.cgroup.cpu_quota_cpus,
            f.cgroup.memory_limit_bytes,
            f.cgroup.pids_max
        ),
        (None, None, None)
    );
    assert_eq!(fs_of("bare-metal", "/home/user").as_deref(), Some("ext4"));
    assert_eq!(fs_of("bare-metal", "/dev/shm").as_deref(), Some("tmpfs"));
}

#[test]
fn firecracker_guest_recorded_here() {
    let f = fp("firecracker");
    assert_eq!(layers(&f), vec!["firecracker"]);
    assert_eq!(f.virtualization.layers[0].kind, LayerKind::Hypervisor);
    // the image was built with Docker: the marker is noted, not believed
    assert!(f
        .virtualization
        .notes
        .iter()
        .any(|n| n.contains("/.dockerenv")));
    assert_eq!(f.cgroup.version.as_deref(), Some("hybrid"));
    assert_eq!(f.cgroup.memory_limit_bytes, None);
    assert_eq!(f.cpu.logical_cpus, 2);
    assert!(f.cpu.flags.iter().any(|x| x == "avx512f"));
    // a halted vCPU is woken by the host: the guest's own idle driver
    assert_eq!(f.cpu.idle_driver.as_deref(), Some("haltpoll"));
    assert_eq!(f.cpu.idle_governor.as_deref(), Some("haltpoll"));
    assert_eq!(fs_of("firecracker", "/work").as_deref(), Some("ext4"));
    assert_eq!(fs_of("firecracker", "/dev/shm").as_deref(), Some("tmpfs"));
}

#[test]
fn qemu_kvm_guest() {
    let f = fp("kvm-qemu");
    assert_eq!(layers(&f), vec!["kvm"]);
    assert!(f.virtualization.layers[0]
        .evidence
        .iter()
        .any(|e| e.contains("QEMU")));
    assert_eq!((f.cpu.sockets, f.cpu.logical_cpus), (Some(4), 4));
    assert_eq!(f.clock.source.as_deref(), Some("kvm-clock"));
    assert_eq!(f.cpu.governor, None);
    assert!(f.notes.iter().any(|n| n.contains("governor")));
    assert_eq!((f.cpu.idle_driver, f.cpu.idle_governor), (None, None));
}

#[test]
fn wsl1() {
    let f = fp("wsl1");
    assert_eq!(layers(&f), vec!["wsl1"]);
    assert_eq!(
        f.os.kernel_release.as_deref(),
        Some("4.4.0-19041-Microsoft")
    );
    assert_eq!(f.clock.source, None);
    assert!(f.notes.iter().any(|n| n.contains("clocksource")));
    assert_eq!(f.cgroup.version, None);
    assert_eq!(fs_of("wsl1", "/mnt/c/Users").as_deref(), Some("drvfs"));
    assert_eq!(fs_of("wsl1", "/home/user").as_deref(), Some("lxfs"));
}

#[test]
fn wsl2() {
    let f = fp("wsl2");
    assert_eq!(layers(&f), vec!["wsl2"]);
    let ev = &f.virtualization.layers[0].evidence;
    assert!(ev.iter().any(|e| e.contains("WSL2")) && ev.iter().any(|e| e.contains("interop")));
    assert_eq!(
        f.clock.source.as_deref(),
        Some("hyperv_clocksource_tsc_page")
    );
    assert_eq!(f.cgroup.version.as_deref(), Some("v2"));
    assert_eq!(fs_of("wsl2", "/mnt/c/Users").as_deref(), Some("9p"));
    assert_eq!(fs_of("wsl2", "/home/user").as_deref(), Some("ext4"));
}

#[test]
fn docker_on_bare_metal_with_limits() {
    let f = fp("docker-bare-metal");
    assert_eq!(layers(&f), vec!["docker"]);
    assert_eq!(f.cgroup.version.as_deref(), Some("v2"));
    assert_eq!(f.cgroup.cpu_quota_cpus, Some(1.5));
    assert_eq!(f.cgroup.memory_limit_bytes, Some(2 * GIB));
    assert_eq!(f.cgroup.pids_max, Some(512));
    assert_eq!(
        fs_of("docker-bare-metal", "/app").as_deref(),
        Some("overlay")
    );
}

#[test]
fn docker_inside_wsl2() {
    let f = fp("docker-wsl2");
    assert_eq!(layers(&f), vec!["wsl2", "docker"]);
    assert_eq!(f.cgroup.version.as_deref(), Some("hybrid"));
    assert_eq!(f.cgroup.memory_limit_bytes, Some(4 * GIB));
    assert_eq!(f.cgroup.cpu_quota_cpus, None);
    assert_eq!(f.os.distro.as_deref(), Some("Alpine Linux v3.19"));
}

#[test]
fn cgroup_v1_host_with_a_cpu_quota() {
    let f = fp("cgroup-v1-host");
    assert_eq!(layers(&f), vec!["bare-metal"]);
    assert_eq!(f.cgroup.version.as_deref(), Some("v1"));
    assert_eq!(f.cgroup.cpu_quota_cpus, Some(2.0));
    assert_eq!(f.cgroup.memory_limit_bytes, None);
    assert_eq!(f.cgroup.pids_max, None);
    assert_eq!(f.os.distro.as_deref(), Some("CentOS Linux 7 (Core)"));
    assert_eq!(fs_of("cgroup-v1-host", "/var/tmp").as_deref(), Some("xfs"));
}

#[test]
fn cgroup_v2_host_with_a_memory_limit() {
    let f = fp("cgroup-v2-host");
    assert_eq!(f.cgroup.version.as_deref(), Some("v2"));
    assert_eq!(f.cgroup.memory_limit_bytes, Some(8 * GIB));
    assert_eq!(f.cgroup.pids_max, Some(4915));
    assert_eq!(f.cgroup.cpu_quota_cpus, None);
    assert_eq!(fs_of("cgroup-v2-host", "/home").as_deref(), Some("btrfs"));
}

#[test]
fn missing_tree_still_gives_a_fingerprint_with_notes() {
    let f = probe_fixture(Path::new("/nonexistent-envbench-fixture"));
    assert_eq!(f.cpu.logical_cpus, 0);
    assert_eq!(f.cpu.model, None);
    assert!(f.notes.iter().any(|n| n.contains("/proc/cpuinfo")));
}

fn layer<'a>(f: &'a Fingerprint, name: &str) -> &'a envbench::probe::virt::VirtLayer {
    f.virtualization
        .layers
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no layer {name} in {:?}", layers(f)))
}

fn evidence_has(f: &Fingerprint, name: &str, needle: &str) -> bool {
    layer(f, name).evidence.iter().any(|e| e.contains(needle))
}

#[test]
fn gvisor_recorded_here_is_a_sandbox_with_its_evidence() {
    let f = fp("gvisor");
    // CPUID (kvm) is live-only: the recording shows the hypervisor flag alone
    assert_eq!(layers(&f), vec!["unknown-hypervisor", "gvisor"]);
    assert_eq!(layer(&f, "gvisor").kind, LayerKind::Sandbox);
    for needle in [
        "Starting gVisor...",
        "Linux version 4.4.0 #1 SMP",
        "trans=fd",
        "model name \"unknown\"",
        "pid:[",
    ] {
        assert!(evidence_has(&f, "gvisor", needle), "{needle}");
    }
    assert_eq!(f.os.kernel_release.as_deref(), Some("4.4.0"));
    assert_eq!(f.os.kernel_release_source.as_deref(), Some("/proc/version"));
    assert_eq!(f.cpu.model, None);
    assert_eq!(f.cpu.model_hidden_by.as_deref(), Some("gvisor"));
    assert_eq!(fs_of("gvisor", "/tmp").as_deref(), Some("9p"));
}

#[test]
fn fresh_namespaces_recorded_here_are_the_namespaces_layer() {
    let f = fp("unshare");
    assert_eq!(layers(&f), vec!["unknown-hypervisor", "namespaces"]);
    assert_eq!(layer(&f, "namespaces").kind, LayerKind::Namespaces);
    for ns in ["ipc:[", "pid:[", "uts:["] {
        assert!(evidence_has(&f, "namespaces", ns), "{ns}");
    }
    // user and cgroup were not unshared; mnt's and net's initial numbers
    // are not pinned where no link shows the kernel pinning them: noted
    assert!(!evidence_has(&f, "namespaces", "user:["));
    for ns in ["net:[", "mnt:["] {
        assert!(
            f.virtualization.notes.iter().any(|n| n.contains(ns)),
            "{ns}"
        );
    }
    assert_eq!(f.os.kernel_release_source, None);
}

#[test]
fn bubblewrap_recorded_here_is_named_by_its_pid_1() {
    let f = fp("bwrap");
    assert_eq!(layers(&f), vec!["unknown-hypervisor", "bubblewrap"]);
    assert!(evidence_has(&f, "bubblewrap", "PID 1 is bwrap"));
    for ns in ["user:[", "cgroup:[", "pid:["] {
        assert!(evidence_has(&f, "bubblewrap", ns), "{ns}");
    }
}

#[test]
fn qemu_user_is_named_by_the_exe_links_it_answers() {
    let f = fp("qemu-user");
    assert_eq!(layers(&f), vec!["unknown-hypervisor", "qemu-user"]);
    assert!(evidence_has(&f, "qemu-user", "/usr/bin/qemu-x86_64"));
    // recorded trees hold no CPUID: only a live probe asks the CPU
    assert_eq!(f.cpu.cpuid, None);
}

#[test]
fn podman_with_runc_recorded_here() {
    let f = fp("podman");
    assert_eq!(layers(&f), vec!["unknown-hypervisor", "podman"]);
    for needle in [
        "/run/.containerenv",
        "container=podman",
        "libpod",
        "containers/storage",
        "pid:[",
    ] {
        assert!(evidence_has(&f, "podman", needle), "{needle}");
    }
    assert_eq!(
        f.os.distro.as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    // podman's default seccomp profile: one filter on every system call
    let c = f.os.confinement;
    assert_eq!(
        (c.seccomp_mode, c.seccomp_filters, c.no_new_privs),
        (Some(2), Some(1), Some(false))
    );
    let host = fp("firecracker-host").os.confinement;
    assert_eq!(
        (host.seccomp_mode, host.seccomp_filters),
        (Some(0), Some(0))
    );
}

#[test]
fn plain_hosts_name_no_sandbox_namespaces_or_new_runtime() {
    for name in [
        "firecracker-host",
        "firecracker",
        "bare-metal",
        "kvm-qemu",
        "wsl1",
        "wsl2",
        "docker-bare-metal",
        "docker-wsl2",
        "cgroup-v1-host",
        "cgroup-v2-host",
    ] {
        let f = fp(name);
        for l in &f.virtualization.layers {
            assert!(
                ![LayerKind::Sandbox, LayerKind::Namespaces].contains(&l.kind)
                    && !["gvisor", "bubblewrap", "podman", "containerd"].contains(&l.name.as_str()),
                "{name}: {l:?}"
            );
            assert!(
                !l.evidence.iter().any(|e| e.contains("/proc/self/ns")),
                "{name}: {l:?}"
            );
        }
        assert_eq!(f.cpu.model_hidden_by, None, "{name}");
    }
    // the host these layers were recorded on: every namespace initial
    let f = fp("firecracker-host");
    assert_eq!(layers(&f), vec!["unknown-hypervisor"]);
    assert!(f.virtualization.notes.iter().all(|n| !n.contains("net:[")));
}

/// Every control of a v1 hierarchy, as this project's Xeon VM mounts its
/// controllers (2026-12-01), with a child group `/envbench` holding a
/// blkio throttle, half the CPU shares, a cpuset of one CPU, a memory
/// limit without swap, a pids limit, and a container's `--ulimit`s.
#[test]
fn cgroup_v1_controls_written_from_this_machine() {
    let f = fp("controls-v1");
    let c = &f.cgroup;
    assert_eq!(c.version.as_deref(), Some("hybrid"));
    assert_eq!(c.path.as_deref(), Some("/envbench"));
    assert_eq!(
        (c.cpu_quota_cpus, c.cpu_shares, c.cpu_weight),
        (None, Some(512), None)
    );
    assert_eq!(c.cpuset_cpus.as_deref(), Some("0"));
    assert_eq!(c.memory_limit_bytes, Some(512 << 20));
    assert_eq!((c.memory_high_bytes, c.swap_max_bytes), (None, Some(0)));
    assert_eq!(c.pids_max, Some(4096));
    throttled_vda(c);
    assert_eq!((c.io_weight, c.blkio_weight), (None, None));
    let nofile = f.os.rlimits["nofile"];
    assert_eq!((nofile.soft, nofile.hard), (Some(1024), Some(4096)));
    assert_eq!(f.os.rlimits["cpu"].soft, None);
    assert_eq!(f.os.rlimits.len(), 16);
    assert_eq!(f.memory.thp.as_deref(), Some("madvise"));
    assert_eq!(
        (f.memory.numa_nodes, f.memory.swap_total_bytes),
        (Some(1), Some(0))
    );
    // no cpufreq in this VM: no policy to record
    assert_eq!(
        (f.cpu.governor.as_ref(), f.cpu.scaling_max_mhz, f.cpu.boost),
        (None, None, None)
    );
    vda_queue(&dir_of("controls-v1", "/work"));
}

/// The same controls recorded by `record.sh` on this project's AMD EPYC
/// VM (2026-12-07, hybrid v1), inside a group `/envbench-rec` made for
/// it in each controller: the blkio throttle, 512 CPU shares with half a
/// CPU's quota, a cpuset of CPU 0, a 256 MiB memory limit with `memsw`
/// equal (no swap), 512 pids, and `prlimit --nofile=1024:4096`.
#[test]
fn cgroup_v1_controls_recorded_on_this_machine() {
    let f = fp("controls-v1-recorded");
    let c = &f.cgroup;
    assert_eq!(c.version.as_deref(), Some("hybrid"));
    assert_eq!(c.path.as_deref(), Some("/envbench-rec"));
    assert_eq!(
        (c.cpu_quota_cpus, c.cpu_shares, c.cpu_weight),
        (Some(0.5), Some(512), None)
    );
    assert_eq!(c.cpuset_cpus.as_deref(), Some("0"));
    assert_eq!(c.memory_limit_bytes, Some(256 << 20));
    assert_eq!((c.memory_high_bytes, c.swap_max_bytes), (None, Some(0)));
    assert_eq!(c.pids_max, Some(512));
    throttled_vda(c);
    let nofile = f.os.rlimits["nofile"];
    assert_eq!((nofile.soft, nofile.hard), (Some(1024), Some(4096)));
    assert_eq!(f.memory.thp.as_deref(), Some("madvise"));
    assert_eq!(f.memory.numa_nodes, Some(1));
    assert_eq!(
        (f.cpu.governor.as_ref(), f.cpu.scaling_max_mhz, f.cpu.boost),
        (None, None, None)
    );
    // the root's disk, through the links record.sh now keeps
    vda_queue(&dir_of("controls-v1-recorded", "/"));
}

/// The blkio throttle both v1 fixtures hold: 50 MiB/s and 400
/// operations/s each way on vda (254:0).
fn throttled_vda(c: &envbench::probe::cgroup::CgroupInfo) {
    assert_eq!(c.io_limits.len(), 1);
    let io = &c.io_limits[0];
    assert_eq!(
        (io.device.as_str(), io.name.as_deref()),
        ("254:0", Some("vda"))
    );
    assert_eq!(
        (io.read_bps, io.write_bps, io.read_iops, io.write_iops),
        (Some(50 << 20), Some(50 << 20), Some(400), Some(400))
    );
}

/// A directory on this project's VMs' root disk: vda, mq-deadline,
/// 8 MiB read-ahead, 256 requests, said to rotate.
fn vda_queue(dir: &envbench::probe::storage::DirInfo) {
    let block = dir.block.as_ref().unwrap();
    assert_eq!(
        (
            block.name.as_str(),
            block.device.as_deref(),
            block.scheduler.as_deref()
        ),
        ("vda", Some("254:0"), Some("mq-deadline"))
    );
    assert_eq!(
        (block.read_ahead_kb, block.nr_requests),
        (Some(8192), Some(256))
    );
    assert_eq!(dir.rotational, Some(true));
}

/// A Docker container on a cgroup v2 host (no cgroup namespace), a
/// systemd slice above it: limits at both levels combine, the tighter
/// of each winning; the root on a partition of an NVMe disk.
#[test]
fn cgroup_v2_controls_of_a_typical_container() {
    let f = fp("controls-v2");
    let c = &f.cgroup;
    assert_eq!(c.version.as_deref(), Some("v2"));
    assert_eq!(
        c.path.as_deref(),
        Some("/system.slice/docker-0f3c5e2b9d1a.scope")
    );
    assert_eq!(
        (c.cpu_quota_cpus, c.cpu_weight, c.cpu_shares),
        (None, Some(50), None)
    );
    assert_eq!(c.cpuset_cpus.as_deref(), Some("0-1"));
    assert_eq!(c.memory_limit_bytes, Some(2 * GIB));
    assert_eq!(c.memory_high_bytes, Some(1536 << 20));
    assert_eq!((c.swap_max_bytes, c.pids_max), (Some(0), Some(512)));
    // the slice caps reads, the scope writes: both apply
    let io = &c.io_limits[0];
    assert_eq!(
        (
            io.device.as_str(),
            io.name.as_deref(),
            io.read_bps,
            io.write_bps
        ),
        ("259:0", Some("nvme0n1"), Some(200 << 20), Some(100 << 20))
    );
    assert_eq!((io.read_iops, io.write_iops), (None, Some(1000)));
    assert_eq!((c.io_weight, c.blkio_weight), (Some(50), None));
    assert_eq!(f.os.rlimits["nofile"].soft, Some(1048576));
    assert_eq!(f.os.rlimits["nproc"].soft, None);
    assert_eq!(f.memory.thp.as_deref(), Some("always"));
    assert_eq!(f.memory.numa_nodes, Some(2));
    assert_eq!(f.memory.swap_total_bytes, Some(8388604 * 1024));
    assert_eq!(f.cpu.governor.as_deref(), Some("powersave"));
    assert_eq!(
        (f.cpu.max_mhz, f.cpu.scaling_max_mhz, f.cpu.boost),
        (Some(4661.0), Some(2200.0), Some(false))
    );
    // a partition: the queue is its disk's, and io.max names the disk
    let root = dir_of("controls-v2", "/home/user");
    assert_eq!(root.device.as_deref(), Some("259:2"));
    let block = root.block.unwrap();
    assert_eq!(
        (
            block.name.as_str(),
            block.device.as_deref(),
            block.scheduler.as_deref()
        ),
        ("nvme0n1", Some("259:0"), Some("none"))
    );
    assert_eq!(
        (block.read_ahead_kb, block.nr_requests),
        (Some(128), Some(1023))
    );
    assert_eq!(root.rotational, Some(false));
}

/// The trees recorded before these controls were read name none of them.
#[test]
fn older_trees_record_no_new_control() {
    for name in [
        "firecracker-host",
        "podman",
        "docker-bare-metal",
        "cgroup-v2-host",
    ] {
        let c = fp(name).cgroup;
        assert!(c.io_limits.is_empty(), "{name}");
        assert_eq!(
            (c.cpu_weight, c.memory_high_bytes, c.io_weight),
            (None, None, None),
            "{name}"
        );
    }
}

/// The directory `path` of fixture `name`, as the probe describes it.
fn dir_of(name: &str, path: &str) -> envbench::probe::storage::DirInfo {
    let roots = Roots::fixture(fixture(name));
    let (mounts, _) = parse_mountinfo(&roots.read("/proc/self/mountinfo").unwrap());
    describe_dir(&roots, &mounts, Path::new(path), Path::new(path))
}
