//! Container layers: runtimes named by marker files, the environment, PID
//! 1's cgroup and the mounts, with an overlay root as supporting evidence.

use super::{VirtInputs, VirtLayer};

/// Whether the root filesystem looks like a container's: an overlay or
/// union filesystem, or a bind of a subdirectory.
fn container_root(mountinfo: &str) -> Option<String> {
    let (mounts, _) = crate::probe::storage::parse_mountinfo(mountinfo);
    let root = mounts.iter().rev().find(|m| m.mount_point == "/")?;
    if ["overlay", "aufs", "fuse-overlayfs", "overlayfs"].contains(&root.fs_type.as_str()) {
        return Some(format!("root filesystem is {}", root.fs_type));
    }
    None
}

/// Container runtimes named by the environment, PID 1's cgroup and the
/// mounts, each with its evidence; `/.dockerenv` and an overlay root are
/// weighed by [`container_layers`].
fn container_markers(inputs: &VirtInputs) -> Vec<(&'static str, String)> {
    let mut found: Vec<(&'static str, String)> = Vec::new();
    if inputs.containerenv {
        found.push(("podman", "/run/.containerenv exists".into()));
    }
    if let Some(v) = inputs
        .container_var
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        let name = match v {
            "docker" => "docker",
            "podman" => "podman",
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
        ("/docker/", "docker"),
        ("docker-", "docker"),
        ("libpod", "podman"),
        ("/lxc/", "lxc"),
        ("lxc.payload", "lxc"),
    ] {
        if cg.contains(needle) {
            found.push((name, format!("/proc/1/cgroup contains \"{needle}\"")));
        }
    }
    let mi = inputs.mountinfo.as_deref().unwrap_or("");
    if mi.contains("/docker/containers/") {
        found.push((
            "docker",
            "mountinfo binds files from /var/lib/docker/containers".into(),
        ));
    }
    if mi.lines().any(|l| {
        l.split(' ').nth(4) == Some("/")
            && l.contains(" - overlay ")
            && l.contains("/containers/storage/")
    }) {
        found.push((
            "podman",
            "root is an overlay from containers/storage".into(),
        ));
    }
    found
}

/// The container layers: runtimes with their evidence, `/.dockerenv`
/// trusted only beside another marker (else a note), Kubernetes outermost.
pub(super) fn container_layers(inputs: &VirtInputs, notes: &mut Vec<String>) -> Vec<VirtLayer> {
    let mut found = container_markers(inputs);
    let mi = inputs.mountinfo.as_deref().unwrap_or("");
    let overlay_root = container_root(mi);
    if inputs.dockerenv {
        // Docker writes /.dockerenv into the container's filesystem; an image
        // built with Docker and booted as a VM keeps it. Alone it proves nothing.
        if found.iter().any(|(n, _)| *n == "docker") || overlay_root.is_some() {
            found.push(("docker", "/.dockerenv exists".into()));
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
                kind: "container".into(),
                name: name.into(),
                evidence: vec![ev],
            }),
        }
    }
    // Podman in docker-compat mode can also leave docker markers; the
    // podman-specific file wins.
    if layers.iter().any(|l| l.name == "podman") {
        layers.retain(|l| l.name != "docker" || inputs.dockerenv && !inputs.containerenv);
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
        kind: "container".into(),
        name: "kubernetes".into(),
        evidence: vec![ev.into()],
    })
}
