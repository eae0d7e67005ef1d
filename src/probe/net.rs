//! What loopback traffic passes through in this network namespace:
//! connection tracking and netfilter rules. A fresh namespace (unshare,
//! a sandbox) has neither, while a host where a container runtime set up
//! its networks has both; loopback TCP then differs by several percent,
//! and this is where the difference has its cause in sight. And how TCP
//! sends here: its congestion control.

use super::{Notes, Roots};
use serde::{Deserialize, Serialize};

/// Netfilter in this network namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NetfilterInfo {
    /// Connections tracked now (`nf_conntrack_count`, this namespace's);
    /// None when connection tracking is not loaded (or not visible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conntrack_entries: Option<u64>,
    /// The legacy iptables tables this namespace has
    /// (`/proc/net/ip_tables_names`), each with its rules beyond the
    /// built-in chains' policies where they can be counted (as root).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iptables: Vec<IptablesTable>,
    /// Users of the nf_tables module, machine-wide (`/sys/module/nf_tables/
    /// refcnt`: tables, chains and sets of every namespace); None when it
    /// is not loaded. Rules of nftables are not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nf_tables_refs: Option<u64>,
}

/// A legacy iptables table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IptablesTable {
    /// Its name: `filter`, `nat`, `mangle`, `raw`.
    pub name: String,
    /// Rules in it beyond the built-in chains' policies; None when they
    /// cannot be read (not root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<u64>,
}

impl NetfilterInfo {
    /// Whether loopback packets here pass any netfilter hook at all.
    pub(crate) fn any(&self) -> bool {
        self.conntrack_entries.is_some()
            || !self.iptables.is_empty()
            || self.nf_tables_refs.is_some_and(|n| n > 0)
    }
}

/// How TCP sends in this network namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpInfo {
    /// The congestion control new connections get
    /// (`net.ipv4.tcp_congestion_control`, this namespace's since Linux
    /// 4.15): `bbr` paces every send on a timer from the rate the
    /// acknowledgements show, `cubic` does not. On this project's Intel Xeon
    /// VM, 100 KiB HTTP responses over 16 loopback connections ran at about
    /// half of wrk's rate under BBR and at wrk's under CUBIC, the same
    /// client both times (docs/log/fidelity.md). None when it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<String>,
}

/// Reads TCP's settings below `roots`.
pub(crate) fn probe_tcp(roots: &Roots) -> TcpInfo {
    TcpInfo {
        congestion_control: roots
            .read("/proc/sys/net/ipv4/tcp_congestion_control")
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty() && t.len() < 32)
            .map(|t| crate::terminal::escape(&t)),
    }
}

/// One socket of a `/proc/net/tcp` or `/proc/net/tcp6` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TcpSocket {
    /// Its local port (the local address's end, in hex).
    pub port: u16,
    /// Whether it listens (state `0A`).
    pub listening: bool,
    /// Its inode (the tenth field), as `/proc/PID/fd` links name it.
    pub inode: u64,
}

/// The sockets of a `/proc/net/tcp` or `/proc/net/tcp6` text; a line
/// that cannot be read is left out.
pub(crate) fn parse_tcp_table(text: &str) -> Vec<TcpSocket> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (_, hex) = f.get(1)?.rsplit_once(':')?;
            Some(TcpSocket {
                port: u16::from_str_radix(hex, 16).ok()?,
                listening: *f.get(3)? == "0A",
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// Reads netfilter's state below `roots`; the rule counts only live.
pub(crate) fn probe_netfilter(roots: &Roots, notes: &mut Notes) -> NetfilterInfo {
    let number = |p: &str| roots.read(p).and_then(|t| t.trim().parse::<u64>().ok());
    let iptables = roots
        .read("/proc/net/ip_tables_names")
        .map(|t| {
            t.lines()
                .map(str::trim)
                .filter(|n| !n.is_empty() && n.len() < 32)
                .map(|name| IptablesTable {
                    name: crate::terminal::escape(name),
                    rules: if roots.live {
                        iptables_rules(name)
                    } else {
                        None
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    let info = NetfilterInfo {
        conntrack_entries: number("/proc/sys/net/netfilter/nf_conntrack_count"),
        iptables,
        nf_tables_refs: number("/sys/module/nf_tables/refcnt"),
    };
    if roots.live && info.iptables.iter().any(|t| t.rules.is_none()) {
        notes.push("iptables rules not counted: reading them needs CAP_NET_RAW".into());
    }
    info
}

/// Rules of the legacy iptables table `name` beyond its built-in chains'
/// policies (`IPT_SO_GET_INFO`: entries, less one policy per hook and the
/// table's closing entry); None without the right to ask.
fn iptables_rules(name: &str) -> Option<u64> {
    /// `struct ipt_getinfo` of <linux/netfilter_ipv4/ip_tables.h>.
    #[repr(C)]
    struct GetInfo {
        name: [u8; 32],
        valid_hooks: u32,
        hook_entry: [u32; 5],
        underflow: [u32; 5],
        num_entries: u32,
        size: u32,
    }
    const IPT_SO_GET_INFO: libc::c_int = 64;
    let mut info = GetInfo {
        name: [0; 32],
        valid_hooks: 0,
        hook_entry: [0; 5],
        underflow: [0; 5],
        num_entries: 0,
        size: 0,
    };
    info.name[..name.len()].copy_from_slice(name.as_bytes());
    let mut len = std::mem::size_of::<GetInfo>() as libc::socklen_t;
    // SAFETY: a raw socket of our own, closed below; getsockopt writes at
    // most `len` bytes into `info`, which is that large.
    let got = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW);
        if fd < 0 {
            return None;
        }
        let r = libc::getsockopt(
            fd,
            libc::IPPROTO_IP,
            IPT_SO_GET_INFO,
            (&mut info as *mut GetInfo).cast(),
            &mut len,
        );
        libc::close(fd);
        r
    };
    (got == 0).then(|| {
        let policies = u64::from(info.valid_hooks.count_ones());
        u64::from(info.num_entries).saturating_sub(policies + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_tables_sockets_are_read_with_their_port_state_and_inode() {
        // recorded on this project's Zen 4 VM: a listener on
        // 127.0.0.1:5201 with one connection to it (both ends), and one
        // on [::]:5202
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   1: 0100007F:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 20381809 1 00000000d97b74fa 100 0 0 10 0
   2: 0100007F:D448 0100007F:1451 01 00000000:00000000 00:00000000 00000000     0        0 20381810 2 0000000048063c8d 20 0 0 10 -1
   3: 0100007F:1451 0100007F:D448 01 00000000:00000000 00:00000000 00000000     0        0 20381811 1 00000000611e80e6 20 0 0 10 -1
";
        let tcp6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1452 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 20376449 1 0000000017d2f58a 100 0 0 10 0
";
        let socket = |port, listening, inode| TcpSocket {
            port,
            listening,
            inode,
        };
        assert_eq!(
            parse_tcp_table(tcp),
            vec![
                socket(5201, true, 20381809),
                socket(54344, false, 20381810),
                socket(5201, false, 20381811),
            ]
        );
        assert_eq!(parse_tcp_table(tcp6), vec![socket(5202, true, 20376449)]);
        assert!(parse_tcp_table("").is_empty());
        assert!(parse_tcp_table("header\n   0: garbage\n").is_empty());
    }

    #[test]
    fn a_recorded_host_with_conntrack_and_tables_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(tmp.path());
        let write = |p: &str, text: &str| {
            let path = roots.path(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let mut notes = Notes::new();
        let none = probe_netfilter(&roots, &mut notes);
        assert_eq!(none, NetfilterInfo::default());
        assert!(!none.any());
        write("/proc/sys/net/netfilter/nf_conntrack_count", "12\n");
        write("/proc/net/ip_tables_names", "nat\nfilter\n");
        write("/sys/module/nf_tables/refcnt", "0\n");
        let host = probe_netfilter(&roots, &mut notes);
        assert_eq!(host.conntrack_entries, Some(12));
        let names: Vec<&str> = host.iptables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["nat", "filter"]);
        assert!(host.iptables.iter().all(|t| t.rules.is_none()));
        assert_eq!(host.nf_tables_refs, Some(0));
        assert!(host.any());
    }

    #[test]
    fn a_recorded_congestion_control_is_read_and_a_missing_one_is_unknown() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = Roots::fixture(tmp.path());
        assert_eq!(probe_tcp(&roots).congestion_control, None);
        let path = roots.path("/proc/sys/net/ipv4/tcp_congestion_control");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "bbr\n").unwrap();
        assert_eq!(probe_tcp(&roots).congestion_control.as_deref(), Some("bbr"));
        std::fs::write(&path, "\n").unwrap();
        assert_eq!(probe_tcp(&roots).congestion_control, None);
    }
}
