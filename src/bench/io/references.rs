//! The io family's reference tools (`envbench fidelity --dir DIR`): each
//! works on the case's directory, in a fresh directory of its own, and
//! measures a warm-up run and then three, as envbench's case does in
//! `envbench fidelity` (one round of a warm-up repetition and three). The command plans
//! the family in the standard suite with files of [`FIDELITY_SIZE`]: what
//! the arguments below assume (sysbench's 1 s, fio's read loops).

use crate::bench::reference::{Arg, Cpus, OnDir, Pick, Prog, Read, Reference, Side, Tool};
use crate::stats::band::Band;

/// The ratio envbench/reference every io row must lie within
/// (docs/fidelity.md): the host's disk and page cache move a file's
/// throughput by more from one run to the next than the two methods
/// differ.
const BAND: Band = Band::new(0.90, 1.10);

/// The size of io.seq's and io.dd's files and of io.random's file set in
/// `envbench fidelity`: the reference tools' arguments below assume it.
pub const FIDELITY_SIZE: &str = "256MiB";

/// The family's options in `envbench fidelity`: `--file-size` and
/// `--io-total` of [`FIDELITY_SIZE`].
pub fn fidelity_options() -> crate::config::FamilyOptions {
    let bytes = crate::units::parse_size(FIDELITY_SIZE).expect("a size");
    let mut options = crate::config::FamilyOptions::default();
    for key in [super::FILE_SIZE, super::TOTAL] {
        options.0.insert(key.to_string(), bytes.into());
    }
    options
}

/// A warm-up, then the median of three, on the case's directory.
const ON_DIR: OnDir = OnDir {
    prepare: &[],
    warm_up: 1,
    stderr: false,
};

/// fio's MiB/s in envbench's MB/s.
const MIB: f64 = 1.048_576;

/// A tool on the case's directory.
fn tool(name: &'static str, program: Prog, args: &'static [Arg], read: Read, on: OnDir) -> Tool {
    Tool {
        name,
        program,
        args,
        env: &[],
        on: Cpus::Any,
        read,
        processes: 3,
        input: None,
        check: None,
        on_dir: Some(on),
        beside: None,
    }
}

/// A reference of the case picked by `params`, held to [`BAND`] or, where
/// `band` is false, kept for information.
fn row(
    params: &'static [(&'static str, &'static str)],
    metric: &'static str,
    band: bool,
    tool: Tool,
) -> Reference {
    Reference {
        params,
        metric,
        band: band.then_some(BAND),
        tools: vec![tool],
        pick: Pick::First,
        envbench: Side::AS_PLANNED,
        information_if: None,
    }
}

/// sysbench fileio's arguments for io.random's case, then `$tail`.
macro_rules! sysbench {
    ($($tail:literal),*) => {
        &[
            Arg::Text("fileio"),
            Arg::Text("--file-num=128"),
            Arg::Param {
                prefix: "--file-total-size=",
                key: "total_size",
            },
            Arg::Param {
                prefix: "--file-block-size=",
                key: "block",
            },
            $(Arg::Text($tail),)*
        ]
    };
}

/// io.random against sysbench fileio rndrw: its 128 files made once a
/// round (untimed), then runs of 1 s on them, as envbench's case makes
/// its file set once for its repetitions.
pub(super) fn random() -> Vec<Reference> {
    let sysbench = |metric: &'static str| {
        tool(
            "sysbench fileio rndrw",
            Prog::Path("sysbench"),
            sysbench!("--file-test-mode=rndrw", "--time=1", "run"),
            Read::Imported {
                importer: "sysbench",
                file: None,
                bench: "io.sysbench_fileio",
                metric,
                scale: 1.0,
            },
            OnDir {
                prepare: sysbench!("prepare"),
                ..ON_DIR
            },
        )
    };
    vec![
        row(&[], "reads_per_sec", true, sysbench("reads_per_sec")),
        row(&[], "written_throughput", true, sysbench("write_rate")),
    ]
}

/// fio's arguments for io.seq, `write` or `read`, each job pinned by the
/// arguments after (none: unpinned).
///
/// The write: a new file per job, 1 MiB blocks from a page-aligned buffer
/// (envbench's and IOzone's are; fio's default, 16 bytes past a page,
/// read about 15 % slower on a Zen 5 VM), an fsync at the end.
///
/// The read: that write job and then a read job in the same invocation,
/// as IOzone reads right after writing (a read in an invocation of its
/// own ran at 5.8-7.5 GB/s from the page cache against dd's 15-17: fio's
/// start weighs on a 20 ms job). fio counts a job's time in whole
/// milliseconds, so the read job reads its file 8 times, 2 GiB of
/// [`FIDELITY_SIZE`] files, where a millisecond weighs under 1.5 %.
macro_rules! fio_seq {
    (@jobs [$($pin:expr),*] [$($then:expr),*]) => {
        &[
            Arg::Text("--directory=."),
            Arg::Text("--filename_format=seq.$jobnum"),
            Arg::Text("--name=seq"),
            Arg::Text("--rw=write"),
            Arg::Text("--bs=1M"),
            Arg::Param { prefix: "--size=", key: "file_size" },
            Arg::Param { prefix: "--numjobs=", key: "threads" },
            Arg::Text("--iomem_align=4096"),
            Arg::Text("--end_fsync=1"),
            Arg::Text("--fallocate=none"),
            Arg::Text("--group_reporting"),
            Arg::Text("--output-format=json"),
            $($pin,)*
            $($then,)*
        ]
    };
    (write $(, $pin:expr)*) => { fio_seq!(@jobs [$($pin),*] []) };
    (read $(, $pin:expr)*) => {
        fio_seq!(@jobs [$($pin),*] [
            Arg::Text("--name=rd"),
            Arg::Text("--stonewall"),
            Arg::Text("--rw=read"),
            Arg::Text("--bs=1M"),
            Arg::Param { prefix: "--size=", key: "file_size" },
            Arg::Param { prefix: "--numjobs=", key: "threads" },
            Arg::Text("--invalidate=0"),
            Arg::Text("--iomem_align=4096"),
            Arg::Text("--loops=8"),
            Arg::Text("--group_reporting"),
            Arg::Text("--unlink=1")
            $(, $pin)*
        ])
    };
}

/// dd's write of the case's file from /dev/zero in blocks of `$bs`, with
/// `$flag` (`conv=fdatasync`, `oflag=direct`).
macro_rules! dd_write {
    ($bs:literal, $flag:literal) => {
        &[
            Arg::Text("if=/dev/zero"),
            Arg::Text("of=ddfile"),
            Arg::Text($bs),
            COUNT,
            Arg::Text("iflag=count_bytes"),
            Arg::Text($flag),
        ]
    };
}

/// Two jobs each on a CPU of its own, the first usable ones, as envbench
/// places its io.seq threads: unpinned, fio's two jobs wrote and read
/// 0.90-0.92 as fast on a Xeon VM.
const PIN: Arg = Arg::FirstCpus {
    prefix: "--cpus_allowed=",
    key: "threads",
};
const SPLIT: Arg = Arg::Text("--cpus_allowed_policy=split");

fn fio(name: &'static str, args: &'static [Arg], metric: &'static str) -> Tool {
    tool(
        name,
        Prog::Path("fio"),
        args,
        Read::Imported {
            importer: "fio",
            file: None,
            bench: "io.fio",
            metric,
            scale: MIB,
        },
        ON_DIR,
    )
}

/// io.seq against fio, one and two threads, write and cached read.
pub(super) fn seq() -> Vec<Reference> {
    vec![
        row(
            &[("threads", "1")],
            "write",
            true,
            fio("fio write end_fsync=1", fio_seq!(write), "write_bw"),
        ),
        row(
            &[("threads", "1")],
            "read",
            true,
            fio(
                "fio read (cached, page-aligned buffer, 8 loops)",
                fio_seq!(read),
                "read_bw",
            ),
        ),
        row(
            &[("threads", "2")],
            "write",
            true,
            fio(
                "fio write end_fsync=1, each job on its own CPU",
                fio_seq!(write, PIN, SPLIT),
                "write_bw",
            ),
        ),
        row(
            &[("threads", "2")],
            "read",
            true,
            fio(
                "fio read (cached, page-aligned buffer, 8 loops), each job on its own CPU",
                fio_seq!(read, PIN, SPLIT),
                "read_bw",
            ),
        ),
    ]
}

/// dd's summary, on its stderr.
const DD: Read = Read::Imported {
    importer: "dd",
    file: None,
    bench: "io.dd_copy",
    metric: "rate",
    scale: 1.0,
};

const DD_ON_DIR: OnDir = OnDir {
    stderr: true,
    ..ON_DIR
};

/// The file's bytes: GNU dd counts them (`iflag=count_bytes`), in any
/// block; BusyBox's dd has no such flag, and its rows say so.
const COUNT: Arg = Arg::Param {
    prefix: "count=",
    key: "file_size",
};

/// io.dd against dd, and its O_DIRECT write against a C writer.
pub(super) fn dd() -> Vec<Reference> {
    const SYNC: &[(&str, &str)] = &[("op", "write_fdatasync")];
    const DIRECT: &[(&str, &str)] = &[("op", "write_direct")];
    const WARM: &[(&str, &str)] = &[("op", "read_warm")];
    let dd = |name, args, on| tool(name, Prog::Path("dd"), args, DD, on);
    vec![
        row(
            SYNC,
            "throughput",
            true,
            dd(
                "dd bs=64K conv=fdatasync",
                dd_write!("bs=64K", "conv=fdatasync"),
                DD_ON_DIR,
            ),
        ),
        // the reference: what envbench's write does and nothing more
        row(
            DIRECT,
            "throughput",
            true,
            tool(
                "a C writer, stamps as envbench",
                Prog::C {
                    name: "io/dd/reference.c",
                    source: include_str!("dd/reference.c"),
                    flags: &["-O2"],
                },
                &[
                    Arg::Text("cfile"),
                    Arg::Param {
                        prefix: "",
                        key: "file_size",
                    },
                ],
                Read::Number,
                ON_DIR,
            ),
        ),
        // dd refills its whole buffer from /dev/zero before each write (a
        // writer that did so ran 1.07-1.37x slower); information
        row(
            DIRECT,
            "throughput",
            false,
            dd(
                "dd bs=1M oflag=direct, refills its buffer",
                dd_write!("bs=1M", "oflag=direct"),
                DD_ON_DIR,
            ),
        ),
        // fio's scramble_buffers rewrites about twice the cache lines a
        // write that envbench stamps; information
        row(
            DIRECT,
            "throughput",
            false,
            fio(
                "fio bs=1M direct=1 psync",
                &[
                    Arg::Text("--directory=."),
                    Arg::Text("--name=direct"),
                    Arg::Text("--rw=write"),
                    Arg::Text("--bs=1M"),
                    Arg::Param {
                        prefix: "--size=",
                        key: "file_size",
                    },
                    Arg::Text("--direct=1"),
                    Arg::Text("--ioengine=psync"),
                    Arg::Text("--fallocate=none"),
                    Arg::Text("--output-format=json"),
                ],
                "write_bw",
            ),
        ),
        row(
            WARM,
            "throughput",
            true,
            dd(
                "dd bs=1M (cached)",
                &[
                    Arg::Text("if=ddfile"),
                    Arg::Text("of=/dev/null"),
                    Arg::Text("bs=1M"),
                ],
                OnDir {
                    prepare: dd_write!("bs=1M", "conv=fdatasync"),
                    ..DD_ON_DIR
                },
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::reference::Workshop;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn all() -> Vec<Reference> {
        [random(), seq(), dd()].concat()
    }

    /// What each tool printed, as recorded: sysbench fileio, fio's write
    /// job and then its read job, dd's summary, the C writer's figure.
    fn recorded(read: Read) -> &'static str {
        match read {
            Read::Imported {
                importer: "sysbench",
                ..
            } => {
                include_str!("../../../tests/fixtures/import/sysbench-fileio-debian.txt")
            }
            Read::Imported {
                importer: "fio", ..
            } => {
                include_str!("../../../tests/fixtures/import/fio-seq-jsonplus.json")
            }
            Read::Imported { importer: "dd", .. } => {
                include_str!("../../../tests/fixtures/import/dd-c.txt")
            }
            Read::Number => "1651.9\n",
            other => panic!("no recording for {other:?}"),
        }
    }

    #[test]
    fn each_io_tool_reads_its_recorded_output_in_envbenchs_unit() {
        let mut read = 0;
        for r in all() {
            for t in &r.tools {
                let v = t.read.figure(recorded(t.read));
                assert!(v.is_some_and(|v| v > 0.0), "{} {}: {v:?}", t.name, r.metric);
                read += 1;
            }
        }
        assert_eq!(read, 11);
        // fio's MiB/s in MB/s, from the second job for the read
        let fio = seq();
        let json: Value =
            serde_json::from_str(recorded(fio[1].tools[0].read).split_once('\n').unwrap().1)
                .unwrap();
        for (row, job, dir) in [(0, 0, "write"), (1, 1, "read")] {
            let bytes = json["jobs"][job][dir]["bw_bytes"].as_f64().unwrap();
            let got = fio[row].tools[0]
                .read
                .figure(recorded(fio[row].tools[0].read));
            let want = bytes / 1e6;
            assert!(
                (got.unwrap() / want - 1.0).abs() < 1e-3,
                "{dir}: {got:?} {want}"
            );
        }
        // every banded row is held to ±10 %; dd's and fio's O_DIRECT
        // writes are information beside the C writer
        let banded = all().iter().filter(|r| r.band.is_some()).count();
        assert_eq!(banded, 9);
    }

    /// A case of each io bench as fidelity plans them, at 4 MiB.
    fn tiny(op: &str, threads: &str) -> BTreeMap<String, Value> {
        [
            ("dir", "io"),
            ("file_size", "4MiB"),
            ("total_size", "4MiB"),
            ("block", "16KiB"),
            ("threads", threads),
            ("op", op),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::from(v)))
        .collect()
    }

    #[test]
    fn the_io_tools_run_on_a_tiny_case_in_the_directory_and_leave_nothing_there() {
        let base = tempfile::tempdir().unwrap();
        let io = tempfile::tempdir().unwrap();
        let mut shop =
            Workshop::new(base.path())
                .unwrap()
                .with_dirs(vec![crate::config::NamedDir {
                    name: "io".into(),
                    path: io.path().to_path_buf(),
                }]);
        let installed = |p: &str| crate::cleanup::resolve(p).is_ok();
        let mut ran = Vec::new();
        for r in all() {
            let op = r
                .params
                .iter()
                .find(|(k, _)| *k == "op")
                .map_or("", |p| p.1);
            let threads = r
                .params
                .iter()
                .find(|(k, _)| *k == "threads")
                .map_or("1", |p| p.1);
            for t in &r.tools {
                let usable = match t.program {
                    Prog::Path(p) => installed(p),
                    Prog::Envbench => true,
                    Prog::C { .. } => installed("cc"),
                };
                let got = shop.ready(t, &tiny(op, threads));
                if !usable {
                    assert!(got.is_err(), "{}", t.name);
                    continue;
                }
                if threads == "2" && shop.cpus() < 2 {
                    assert!(got.unwrap_err().contains("usable here"), "{}", t.name);
                    continue;
                }
                let ready = got.unwrap_or_else(|e| panic!("{}: {e}", t.name));
                ran.push(ready.name().to_string());
                assert_eq!(
                    std::fs::read_dir(io.path()).unwrap().count(),
                    0,
                    "{}",
                    t.name
                );
            }
        }
        // dd is everywhere: its warm read, prepared and measured after a
        // warm-up, in full
        let warm = &dd()[4];
        let ready = shop.ready(&warm.tools[0], &tiny("read_warm", "1")).unwrap();
        assert!(ready.measure().unwrap() > 0.0);
        assert!(
            ran.iter().filter(|n| n.starts_with("dd ")).count() >= 3,
            "{ran:?}"
        );
        assert_eq!(std::fs::read_dir(io.path()).unwrap().count(), 0);
        // a case whose directory was not given is refused, saying so
        let mut elsewhere = tiny("read_warm", "1");
        elsewhere.insert("dir".into(), Value::from("nfs"));
        let err = shop.ready(&warm.tools[0], &elsewhere).unwrap_err();
        assert!(err.contains("no directory nfs"), "{err}");
    }
}
