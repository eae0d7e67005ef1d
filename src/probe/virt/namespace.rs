//! Namespaces: which of this process's namespaces are not the kernel's
//! initial ones, read from the `/proc/self/ns/*` link targets
//! (`pid:[4026531836]`).
//!
//! The kernel gives its initial namespaces fixed inode numbers
//! (include/linux/proc_ns.h): ipc 0xEFFFFFFF, uts 0xEFFFFFFE, user
//! 0xEFFFFFFD, pid 0xEFFFFFFC, cgroup 0xEFFFFFFB, time 0xEFFFFFFA. Recent
//! kernels pin the initial mnt (0xEFFFFFF8) and net (0xEFFFFFF9) too (this
//! project's 6.18 VM does); older ones number them like any new namespace,
//! from `PROC_DYNAMIC_FIRST` (0xF0000000) up. On a kernel not seen to pin
//! (no link carries a pinned number) mnt counts as initial at 0xF0000000
//! and is otherwise undecided, as net is: in a QEMU guest of Debian's 6.1
//! kernel the initial mnt namespace held another number. So mnt and net
//! are decided only where the kernel is seen to pin; else they are only
//! noted, and the fixed kinds (pid, user, uts, ipc, cgroup) decide.

use super::VirtInputs;

/// The namespace kinds read from `/proc/self/ns`, in the kernel's order.
pub const NS_KINDS: &[&str] = &["cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"];

/// Fixed inode numbers of the initial namespaces (include/linux/proc_ns.h).
const FIXED_INITIAL: &[(&str, u64)] = &[
    ("ipc", 0xEFFF_FFFF),
    ("uts", 0xEFFF_FFFE),
    ("user", 0xEFFF_FFFD),
    ("pid", 0xEFFF_FFFC),
    ("cgroup", 0xEFFF_FFFB),
    ("time", 0xEFFF_FFFA),
];

/// Initial mnt and net numbers on kernels that pin them.
const PINNED_INITIAL: &[(&str, u64)] = &[("net", 0xEFFF_FFF9), ("mnt", 0xEFFF_FFF8)];

/// The first number a kernel hands out (`PROC_DYNAMIC_FIRST`): the initial
/// mnt namespace's on kernels that do not pin it.
const DYNAMIC_FIRST: u64 = 0xF000_0000;

/// The lowest inode a Linux namespace has: the pinned initial mnt. Created
/// namespaces are numbered from `PROC_DYNAMIC_FIRST` (0xF0000000) up, so a
/// smaller number comes from another kernel (gVisor numbers from 1).
pub const LINUX_NS_INODE_FLOOR: u64 = 0xEFFF_FFF8;

/// Parses a link target such as `pid:[4026531836]` into its kind and inode.
pub(crate) fn parse_ns_link(target: &str) -> Option<(&str, u64)> {
    let (kind, rest) = target.trim().split_once(":[")?;
    let inode = rest.strip_suffix(']')?.parse().ok()?;
    Some((kind, inode))
}

/// What the links say, each list in [`NS_KINDS`] order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NsAssessment {
    /// Namespaces known not to be the initial ones, e.g. `pid:[4026532253]`.
    pub not_initial: Vec<String>,
    /// mnt or net links on a kernel not seen to pin their initial numbers.
    pub undecided: Vec<String>,
    /// Links whose inode is below Linux's range, e.g. gVisor's `pid:[111]`.
    pub foreign: Vec<String>,
}

/// Sorts the recorded links into not initial, undecided and foreign.
pub fn assess(inputs: &VirtInputs) -> NsAssessment {
    let links: Vec<(&str, u64, &str)> = inputs
        .ns_links
        .iter()
        .filter_map(|(_, t)| parse_ns_link(t).map(|(k, i)| (k, i, t.as_str())))
        .collect();
    let pins = links
        .iter()
        .any(|(k, i, _)| PINNED_INITIAL.contains(&(*k, *i)));
    let mut out = NsAssessment::default();
    for &(kind, inode, text) in &links {
        let initial = FIXED_INITIAL
            .iter()
            .chain(PINNED_INITIAL)
            .any(|&(k, i)| k == kind && i == inode);
        if inode < LINUX_NS_INODE_FLOOR {
            out.foreign.push(text.to_string());
        } else if initial || (kind == "mnt" && inode == DYNAMIC_FIRST && !pins) {
            continue;
        } else if (kind == "net" || kind == "mnt") && !pins {
            // a kernel that pins neither numbers mnt and net as it goes:
            // in a QEMU guest of Debian's 6.1 kernel the initial mnt was
            // not 0xF0000000, so only the fixed kinds decide there
            out.undecided.push(text.to_string());
        } else if NS_KINDS.contains(&kind) {
            out.not_initial.push(text.to_string());
        }
    }
    out
}

/// The evidence sentence for namespaces that are not initial.
pub(crate) fn evidence(not_initial: &[String]) -> String {
    format!(
        "not the initial namespaces (/proc/self/ns): {}",
        not_initial.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(links: &[&str]) -> VirtInputs {
        VirtInputs {
            ns_links: links
                .iter()
                .map(|l| (l.split(':').next().unwrap().to_string(), l.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn parses_a_link_target() {
        assert_eq!(parse_ns_link("pid:[4026531836]"), Some(("pid", 4026531836)));
        assert_eq!(parse_ns_link("pid"), None);
    }

    #[test]
    fn initial_namespaces_on_a_pinning_kernel_are_all_initial() {
        let a = assess(&inputs(&[
            "cgroup:[4026531835]",
            "mnt:[4026531832]",
            "net:[4026531833]",
            "pid:[4026531836]",
            "user:[4026531837]",
        ]));
        assert_eq!(a, NsAssessment::default());
    }

    #[test]
    fn an_older_kernels_first_mnt_is_initial_and_its_net_undecided() {
        let a = assess(&inputs(&[
            "mnt:[4026531840]",
            "net:[4026531992]",
            "pid:[4026531836]",
        ]));
        assert_eq!(a.undecided, vec!["net:[4026531992]"]);
        assert!(a.not_initial.is_empty());
    }

    #[test]
    fn an_unpinned_mnt_is_undecided_and_a_pinned_kernels_new_mnt_is_not_initial() {
        let a = assess(&inputs(&["mnt:[4026532250]", "net:[4026532254]"]));
        assert!(a.not_initial.is_empty(), "{a:?}");
        assert_eq!(a.undecided, vec!["mnt:[4026532250]", "net:[4026532254]"]);
        let a = assess(&inputs(&["mnt:[4026532250]", "net:[4026531833]"]));
        assert_eq!(a.not_initial, vec!["mnt:[4026532250]"]);
    }

    #[test]
    fn new_pid_and_net_beside_a_pinned_mnt_are_not_initial() {
        let a = assess(&inputs(&[
            "mnt:[4026531832]",
            "net:[4026532254]",
            "pid:[4026532253]",
        ]));
        assert_eq!(a.not_initial, vec!["net:[4026532254]", "pid:[4026532253]"]);
    }

    #[test]
    fn small_numbers_come_from_another_kernel() {
        let a = assess(&inputs(&["pid:[111]", "net:[110]"]));
        assert_eq!(a.foreign.len(), 2);
        assert!(a.not_initial.is_empty());
    }
}
