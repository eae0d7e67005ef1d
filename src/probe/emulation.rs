//! CPU emulation seen from inside, and how this binary is started again
//! in the same environment.
//!
//! A user-mode emulator (Debian's `qemu-user`, what Docker Desktop runs
//! amd64 images with on Apple silicon) translates one process's
//! instructions and answers for it what it would otherwise learn from the
//! kernel: `/proc/self/exe` names the translated program, not the
//! emulator. The kernel's view of the thread, `/proc/thread-self/exe`,
//! still names the emulator, and `/proc/thread-self/cmdline` the words that
//! started it. The CPUID instruction answers with the emulated CPU (QEMU's
//! `qemu64`: "QEMU Virtual CPU version 2.5+"), while `/proc/cpuinfo` is
//! the host's.
//!
//! A program started by its path from inside the emulator runs natively
//! (no binfmt handler for the host's own architecture), so envbench's
//! workers must be started through the emulator again ([`own_command`]),
//! and each checks, by CPUID, that it runs on the CPU the fingerprint saw.

use super::Roots;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The CPU as the CPUID instruction describes it to this process: the
/// real one natively and in a hypervisor's guest, the emulated one under
/// an emulator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuId {
    /// Leaf 0's vendor, e.g. `AuthenticAMD`, `GenuineIntel`.
    pub vendor: String,
    /// Leaves 0x80000002..4's brand string, e.g. `AMD EPYC 9R14 96-Core
    /// Processor`, `QEMU Virtual CPU version 2.5+`; empty when the CPU has none.
    pub brand: String,
    /// Leaf 0x40000000's hypervisor signature, when leaf 1 says a
    /// hypervisor is present (`KVMKVMKVM`, `TCGTCGTCGTCG` under QEMU's
    /// translation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
}

impl CpuId {
    /// This process's CPUID answers; None off x86_64.
    pub fn here() -> Option<CpuId> {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::__cpuid;
            let text = |regs: &[u32]| {
                let bytes: Vec<u8> = regs.iter().flat_map(|r| r.to_le_bytes()).collect();
                String::from_utf8_lossy(&bytes)
                    .trim_matches(|c: char| c == '\0' || c.is_whitespace())
                    .to_string()
            };
            // SAFETY (for every leaf): CPUID exists on every x86_64 CPU;
            // leaves beyond the maximum it reports answer harmlessly.
            let leaf0 = __cpuid(0);
            let vendor = text(&[leaf0.ebx, leaf0.edx, leaf0.ecx]);
            let brand = if __cpuid(0x8000_0000).eax >= 0x8000_0004 {
                let regs: Vec<u32> = (0x8000_0002u32..=0x8000_0004)
                    .flat_map(|l| {
                        let r = __cpuid(l);
                        [r.eax, r.ebx, r.ecx, r.edx]
                    })
                    .collect();
                text(&regs)
            } else {
                String::new()
            };
            let hypervisor = (__cpuid(1).ecx & (1 << 31) != 0)
                .then(|| {
                    let r = __cpuid(0x4000_0000);
                    text(&[r.ebx, r.ecx, r.edx])
                })
                .filter(|s| !s.is_empty());
            Some(CpuId {
                vendor,
                brand,
                hypervisor,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }

    /// Why a process that sees `self` is not where the one that saw
    /// `expected` was, if it is not: "CPUID names AMD EPYC here, QEMU
    /// Virtual CPU version 2.5+ where the fingerprint was taken".
    pub(crate) fn differs_from(&self, expected: &CpuId) -> Option<String> {
        let name = |c: &CpuId| {
            let mut s = if c.brand.is_empty() {
                c.vendor.clone()
            } else {
                c.brand.clone()
            };
            if let Some(h) = &c.hypervisor {
                s += &format!(" (hypervisor signature {h})");
            }
            s
        };
        (self != expected).then(|| {
            format!(
                "CPUID names {} here, {} where the fingerprint was taken",
                name(self),
                name(expected)
            )
        })
    }
}

/// A user-mode emulator this process runs under, as the kernel sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emulator {
    /// The emulator's program (`/usr/bin/qemu-x86_64`).
    pub program: String,
    /// What this process is told it is (`/proc/self/exe`).
    pub translated: String,
}

impl Emulator {
    /// Its layer name: `qemu-user` for QEMU's user mode, else the
    /// program's file name.
    pub(crate) fn name(&self) -> String {
        let file = Path::new(&self.program)
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        if file.starts_with("qemu-") {
            "qemu-user".into()
        } else {
            file
        }
    }
}

/// The emulator that `self_exe` and `thread_exe` (`/proc/self/exe` and
/// `/proc/thread-self/exe`) reveal: they differ only where something in
/// the process answers for the kernel.
pub(crate) fn emulator_of(self_exe: Option<&str>, thread_exe: Option<&str>) -> Option<Emulator> {
    let (me, real) = (self_exe?, thread_exe?);
    (me != real && !me.is_empty() && !real.is_empty()).then(|| Emulator {
        program: real.to_string(),
        translated: me.to_string(),
    })
}

/// The emulator this process runs under, read below `roots`.
pub(crate) fn emulator(roots: &Roots) -> Option<Emulator> {
    emulator_of(
        roots.read_link("/proc/self/exe").as_deref(),
        roots.read_link("/proc/thread-self/exe").as_deref(),
    )
}

/// The words that start this binary again in the environment it runs in:
/// its path natively; under a user-mode emulator, the emulator with the
/// options it was given, then the path (so that a worker is translated as
/// its parent is); under the dynamic loader run as a program
/// (`ld-linux-x86-64.so.2 ./envbench`), the loader, then the program.
///
/// # Errors
/// This binary's path cannot be found.
pub fn own_command() -> Result<Vec<OsString>, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find envbench's binary: {e}"))?;
    let read_words = |path: &str| {
        std::fs::read(path).ok().map(|b| {
            b.split(|&c| c == 0)
                .filter(|w| !w.is_empty())
                .map(|w| OsString::from(String::from_utf8_lossy(w).into_owned()))
                .collect::<Vec<_>>()
        })
    };
    let own_args: Vec<OsString> = std::env::args_os().collect();
    let thread_words = read_words("/proc/thread-self/cmdline").unwrap_or_default();
    Ok(command_of(
        &me,
        emulator(&Roots::live()).as_ref(),
        &thread_words,
        &own_args,
        &std::env::current_dir().unwrap_or_default(),
    ))
}

/// [`own_command`] from what it reads: this binary's path `me`, the
/// emulator, the thread's command line as the kernel keeps it, this
/// process's own arguments and its working directory.
pub(crate) fn command_of(
    me: &Path,
    emulator: Option<&Emulator>,
    thread_words: &[OsString],
    own_args: &[OsString],
    cwd: &Path,
) -> Vec<OsString> {
    if let Some(emu) = emulator {
        // the kernel's command line is the emulator's words, then ours
        let options = thread_words
            .len()
            .checked_sub(own_args.len())
            .filter(|&n| n >= 1 && thread_words[n..] == *own_args)
            .map_or(&[][..], |n| &thread_words[1..n]);
        let mut words = vec![OsString::from(&emu.program)];
        words.extend(options.iter().cloned());
        words.push(me.as_os_str().to_owned());
        return words;
    }
    let loader = is_loader(me);
    match own_args.first() {
        Some(program) if loader => {
            let program = PathBuf::from(program);
            vec![
                me.as_os_str().to_owned(),
                cwd.join(program).into_os_string(),
            ]
        }
        _ => vec![me.as_os_str().to_owned()],
    }
}

/// Whether `exe` is the dynamic loader (`ld-linux-x86-64.so.2`,
/// `ld-musl-*`): envbench started as `LOADER ./envbench ...`, where this
/// process's executable is the loader and not envbench.
pub(crate) fn is_loader(exe: &Path) -> bool {
    exe.file_name().is_some_and(|f| {
        let f = f.to_string_lossy();
        f.starts_with("ld-linux") || f.starts_with("ld-musl")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn an_emulator_shows_where_the_two_exe_links_differ() {
        assert_eq!(
            emulator_of(Some("/usr/bin/envbench"), Some("/usr/bin/envbench")),
            None
        );
        assert_eq!(emulator_of(Some("/usr/bin/envbench"), None), None);
        let e = emulator_of(Some("/opt/envbench"), Some("/usr/bin/qemu-x86_64")).unwrap();
        assert_eq!(e.name(), "qemu-user");
        let e = emulator_of(Some("/opt/envbench"), Some("/usr/libexec/rosetta")).unwrap();
        assert_eq!(e.name(), "rosetta");
    }

    #[test]
    fn workers_start_through_the_emulator_with_its_options() {
        let me = Path::new("/opt/envbench");
        let emu = Emulator {
            program: "/usr/bin/qemu-x86_64".into(),
            translated: "/opt/envbench".into(),
        };
        let own = words(&["./envbench", "run", "--suite", "quick"]);
        let thread = words(&[
            "qemu-x86_64",
            "-cpu",
            "max",
            "./envbench",
            "run",
            "--suite",
            "quick",
        ]);
        assert_eq!(
            command_of(me, Some(&emu), &thread, &own, Path::new("/")),
            words(&["/usr/bin/qemu-x86_64", "-cpu", "max", "/opt/envbench"])
        );
        // a command line that does not end with ours: the emulator alone
        let other = words(&["qemu-x86_64", "something", "else"]);
        assert_eq!(
            command_of(me, Some(&emu), &other, &own, Path::new("/")),
            words(&["/usr/bin/qemu-x86_64", "/opt/envbench"])
        );
        // natively: the binary
        assert_eq!(
            command_of(me, None, &own, &own, Path::new("/")),
            words(&["/opt/envbench"])
        );
        // run by the loader: the loader, then the program
        let ld = Path::new("/usr/lib64/ld-linux-x86-64.so.2");
        assert_eq!(
            command_of(ld, None, &own, &own, Path::new("/home/a")),
            words(&["/usr/lib64/ld-linux-x86-64.so.2", "/home/a/./envbench"])
        );
    }

    #[test]
    fn cpuid_answers_here_and_names_a_difference() {
        let here = CpuId::here();
        #[cfg(target_arch = "x86_64")]
        {
            let here = here.unwrap();
            assert_eq!(here.vendor.len(), 12, "{here:?}");
            assert_eq!(here.differs_from(&here), None);
            let qemu = CpuId {
                vendor: "AuthenticAMD".into(),
                brand: "QEMU Virtual CPU version 2.5+".into(),
                hypervisor: Some("TCGTCGTCGTCG".into()),
            };
            let why = here.differs_from(&qemu).unwrap();
            assert!(
                why.contains(
                    "QEMU Virtual CPU version 2.5+ (hypervisor signature TCGTCGTCGTCG) where"
                ),
                "{why}"
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert_eq!(here, None);
    }
}
