//! Container layers: runtimes named by marker files, the environment, PID
//! 1's cgroup and command, and the mounts, with the root filesystem as
//! supporting evidence.
//!
//! Examples of what names each (seen here or documented by the runtime):
//! Podman writes `/run/.containerenv` (empty when rootful, `engine=` and
//! more otherwise) and `container=podman` into PID 1's environment; Docker
//! `/.dockerenv` and binds from /var/lib/docker/containers; containerd and
//! CRI-O put `cri-containerd-`/`crio-` in cgroup paths; LXC sets
//! `container=lxc`; bubblewrap with `--unshare-pid` is PID 1 itself; runc
//! or crun run by hand leave no marker beyond a root that is a bind of a
//! directory in a new mount namespace.

use super::layer_name::{DOCKER, PODMAN};
use super::{LayerKind, VirtInputs, VirtLayer};

/// Whether the root filesystem looks like a container's: an overlay or
/// union filesystem, or (in a new mount namespace, `mnt_new`) a bind of a
/// subdirectory. gVisor's overlay (source `none`) is left to the sandbox
/// layer; a btrfs subvolume is an ordinary root.
fn container_root(mountinfo: &str, mnt_new: bool) -> Option<String> {
    let (mounts, _) = crate::probe::storage::parse_mountinfo(mountinfo);
    let root = mounts.iter().rev().find(|m| m.mount_point == "/")?;
    let union = ["overlay", "aufs", "fuse-overlayfs", "overlayfs"].contains(&root.fs_type.as_str());
    if union && root.source != "none" {
        return Some(format!("root filesystem is {}", root.fs_type));
    }
    if mnt_new && root.root != "/" && root.fs_type != "btrfs" {
        return Some(format!(
            "root is {} of {} in a new mount namespace",
            root.root, root.fs_type
        ));
    }
    None
}

/// `/run/.containerenv`'s evidence: that it exists, and its `engine=` line.
fn containerenv_evidence(text: &str) -> String {
    match text.lines().find(|l| l.starts_with("engine=")) {
        Some(engine) => format!("/run/.containerenv says {}", engine.trim()),
        None => "/run/.containerenv exists".into(),
    }
}

/// Container runtimes named by the environment, PID 1's cgroup and the
/// mounts, each with its evidence; `/.dockerenv` and an overlay root are
/// weighed by [`container_layers`].
fn container_markers(inputs: &VirtInputs) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    if let Some(text) = &inputs.containerenv {
        found.push((PODMAN, containerenv_evidence(text)));
    }
    if inputs.pid1_comm.as_deref().map(str::trim) == Some("bwrap") {
        found.push(("bubblewrap", "PID 1 is bwrap (/proc/1/comm)".into()));
    }
    if let Some(v) = inputs
        .container_var
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        let name = match v {
            DOCKER => DOCKER,
            PODMAN => PODMAN,
            "lxc" | "lxc-libvirt" => "lxc",
            "systemd-nspawn" => "systemd-nspawn",
            "wsl" => "",
            _ => "oci",
        };
        if !name.is_empty() {
            found.push((name, format!("container={v} in the environment")));
        }
    }
    let cg = inputs.pid1_cgroup.as_deref().unwrap_or("");
    for (needle, name) in [
        ("/docker/", DOCKER),
        ("docker-", DOCKER),
        ("libpod", PODMAN),
        ("/lxc/", "lxc"),
        ("lxc.payload", "lxc"),
        ("cri-containerd", "containerd"),
        ("crio-", "cri-o"),
    ] {
        if cg.contains(needle) {
            found.push((name, format!("/proc/1/cgroup contains \"{needle}\"")));
        }
    }
    let mi = inputs.mountinfo.as_deref().unwrap_or("");
    if mi.contains("/io.containerd.") {
        found.push((
            "containerd",
            "mountinfo names containerd's snapshotter or task directories".into(),
        ));
    }
    if mi.contains("/docker/containers/") {
        found.push((
            DOCKER,
            "mountinfo binds files from /var/lib/docker/containers".into(),
        ));
    }
    if mi.lines().any(|l| {
        l.split(' ').nth(4) == Some("/")
            && l.contains(" - overlay ")
            && l.contains("/containers/storage/")
    }) {
        found.push((PODMAN, "root is an overlay from containers/storage".into()));
    }
    found
}

/// The container layers: runtimes with their evidence, `/.dockerenv`
/// trusted only beside another marker (else a note), Kubernetes outermost.
pub(super) fn container_layers(
    inputs: &VirtInputs,
    mnt_new: bool,
    notes: &mut Vec<String>,
) -> Vec<VirtLayer> {
    let mut found = container_markers(inputs);
    let mi = inputs.mountinfo.as_deref().unwrap_or("");
    let overlay_root = container_root(mi, mnt_new);
    if inputs.dockerenv {
        // Docker writes /.dockerenv into the container's filesystem; an image
        // built with Docker and booted as a VM keeps it. Alone it proves nothing.
        if found.iter().any(|(n, _)| *n == DOCKER) || overlay_root.is_some() {
            found.push((DOCKER, "/.dockerenv exists".into()));
        } else {
            notes.push(
                "/.dockerenv exists but no other container marker does (root is not an overlay, no docker \
                 cgroup or bind mounts): an image built with Docker, not a running container"
                    .into(),
            );
        }
    }
    if let Some(ev) = overlay_root {
        match found.first() {
            Some(&(name, _)) => found.push((name, ev)),
            None => found.push(("container", ev + " (runtime unknown)")),
        }
    }
    let mut layers: Vec<VirtLayer> = Vec::new();
    for (name, ev) in found {
        match layers.iter_mut().find(|l| l.name == name) {
            Some(l) => l.evidence.push(ev),
            None => layers.push(VirtLayer {
                kind: LayerKind::Container,
                name: name.into(),
                evidence: vec![ev],
            }),
        }
    }
    // Podman in docker-compat mode can also leave docker markers; the
    // podman-specific file wins.
    if layers.iter().any(|l| l.name == PODMAN) {
        layers.retain(|l| l.name != DOCKER || inputs.dockerenv && inputs.containerenv.is_none());
    }
    if let Some(k) = kubernetes_layer(inputs) {
        layers.insert(0, k);
    }
    layers
}

/// Kubernetes, outermost of the container layers: its service variable, a
/// kubepods cgroup or a service-account mount.
fn kubernetes_layer(inputs: &VirtInputs) -> Option<VirtLayer> {
    let cg = inputs.pid1_cgroup.as_deref().unwrap_or("");
    let mi = inputs.mountinfo.as_deref().unwrap_or("");
    let kube = inputs.kubernetes_var || cg.contains("kubepods") || mi.contains("kubernetes.io~");
    if !kube {
        return None;
    }
    let ev = if inputs.kubernetes_var {
        "KUBERNETES_SERVICE_HOST is set"
    } else {
        "kubepods cgroup or service-account mount"
    };
    Some(VirtLayer {
        kind: LayerKind::Container,
        name: "kubernetes".into(),
        evidence: vec![ev.into()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerenv_engine_line_is_the_evidence() {
        let e = containerenv_evidence("engine=\"podman-4.3.1\"\nname=\"x\"\n");
        assert_eq!(e, "/run/.containerenv says engine=\"podman-4.3.1\"");
        assert_eq!(containerenv_evidence(""), "/run/.containerenv exists");
    }

    #[test]
    fn cri_containerd_cgroup_names_containerd() {
        let i = VirtInputs {
            pid1_cgroup: Some("0::/kubepods.slice/cri-containerd-ab12.scope\n".into()),
            ..Default::default()
        };
        let names: Vec<String> = container_layers(&i, false, &mut Vec::new())
            .into_iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(names, vec!["kubernetes", "containerd"]);
    }

    #[test]
    fn a_bound_subdirectory_root_counts_only_in_a_new_mount_namespace() {
        let mi = "96 71 254:0 /tmp/bundle/rootfs / rw,relatime - ext4 /dev/vda rw\n";
        assert!(container_root(mi, true)
            .unwrap()
            .contains("/tmp/bundle/rootfs"));
        assert_eq!(container_root(mi, false), None);
        let btrfs = "96 71 0:40 /@ / rw - btrfs /dev/nvme0n1p2 rw,subvol=/@\n";
        assert_eq!(container_root(btrfs, true), None);
    }

    #[test]
    fn gvisors_overlay_root_is_not_a_container() {
        assert_eq!(
            container_root("10 10 0:10 / / rw  - overlay none rw\n", false),
            None
        );
    }
}
