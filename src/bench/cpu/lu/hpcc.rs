//! hpcc's HPL as `cpu.lu`'s reference in `envbench fidelity`: Debian's
//! `hpcc`, one MPI process started alone (Open MPI's singleton, no
//! `mpirun`), HPL at the case's n with blocks of 192 on a 1 x 1 grid, on
//! OpenBLAS with the case's threads (`OPENBLAS_NUM_THREADS`). Its GFLOPS
//! are `HPL_Tflops` in the `hpccoutf.txt` it writes, times 1000.
//!
//! The BLAS hpcc runs on is whatever `libblas.so.3` resolves to. Debian's
//! hpcc alone pulls in the reference BLAS (about 7 GFLOPS on a Zen 5 core),
//! which no row may be judged against: the tool then does not run, and
//! says to install `libopenblas0-pthread`. OpenBLAS 0.3.21 (Debian 12)
//! picks its kernels by the CPU's model and features (Cooperlake's AVX-512
//! ones on a Zen 4 with AVX-512 BF16, Haswell's AVX2 ones on a Zen 5),
//! while envbench's faer takes AVX-512 kernels at run time wherever the CPU
//! has them. Neither set is the faster on every CPU with AVX-512: on a
//! Zen 5 the SkylakeX ones (85 GFLOPS against 56 at n = 4000 on one
//! thread), on a Zen 4, which splits each AVX-512 operation in two, the
//! Haswell ones (32-41 against 34-36 at n = 1000). So each set the CPU can
//! run is given to hpcc by `OPENBLAS_CORETYPE` (which Debian's build, made
//! for every CPU, heeds), both run in every round, and each round is held
//! to the faster over the other rounds ([`Pick::Highest`]), whose kernels
//! the row names; on a CPU without
//! AVX2, OpenBLAS's own pick. Debian's serial OpenBLAS is
//! refused (one thread whatever the case's); its OpenMP build is given
//! `OMP_NUM_THREADS` too.

use crate::bench::reference::{Arg, Check, Cpus, Input, Pick, Prog, Read, Reference, Side, Tool};
use crate::results::params::key;
use crate::stats::band::Band;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// HPL's and hpcc's input: one problem of the case's n, blocks of 192,
/// one process (P = Q = 1); the rest as hpcc's example has it (hpcc sizes
/// its other tests from n: at n = 1000 the whole run takes under a second).
const HPCCINF: &str = "HPLinpack benchmark input file
envbench fidelity: cpu.lu against hpcc's HPL
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
192          NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
1            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                       Number of additional problem sizes for PTRANS
1200 10000 30000        values of N
0                       number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
";

/// How long `ldd` may take.
const LDD_WITHIN: Duration = Duration::from_secs(20);

/// hpcc on OpenBLAS with `env` added.
const fn hpcc(name: &'static str, env: &'static [(&'static str, Arg)], check: Check) -> Tool {
    Tool {
        name,
        program: Prog::Path("hpcc"),
        args: &[],
        env,
        on: Cpus::Any,
        read: Read::Imported {
            importer: "hpcc",
            file: Some("hpccoutf.txt"),
            bench: "cpu.hpcc_hpl",
            metric: "gflops",
            scale: 1.0,
        },
        processes: 3,
        input: Some(Input {
            file: "hpccinf.txt",
            text: HPCCINF,
        }),
        check: Some(check),
        on_dir: None,
        beside: None,
    }
}

const THREADS: Arg = Arg::Param {
    prefix: "",
    key: key::THREADS,
};

/// cpu.lu at one and two threads against hpcc's HPL, held to ±15 %: the
/// faster of OpenBLAS's SkylakeX kernels (where the CPU has AVX-512) and
/// its Haswell ones (where it has AVX2); OpenBLAS's own pick on a CPU with
/// neither.
pub(super) fn references() -> Vec<Reference> {
    let skylakex = hpcc(
        "hpcc HPL (OpenBLAS, SkylakeX kernels)",
        &[
            ("OPENBLAS_NUM_THREADS", THREADS),
            ("OMP_NUM_THREADS", THREADS),
            ("OPENBLAS_CORETYPE", Arg::Text("SkylakeX")),
        ],
        openblas_with_avx512,
    );
    let haswell = hpcc(
        "hpcc HPL (OpenBLAS, Haswell kernels)",
        &[
            ("OPENBLAS_NUM_THREADS", THREADS),
            ("OMP_NUM_THREADS", THREADS),
            ("OPENBLAS_CORETYPE", Arg::Text("Haswell")),
        ],
        openblas_with_avx2,
    );
    let own = hpcc(
        "hpcc HPL (OpenBLAS)",
        &[
            ("OPENBLAS_NUM_THREADS", THREADS),
            ("OMP_NUM_THREADS", THREADS),
        ],
        openblas_without_avx2,
    );
    [&[(key::THREADS, "1")], &[(key::THREADS, "2")]]
        .into_iter()
        .map(|params| Reference {
            params,
            metric: "gflops",
            band: Some(Band::new(0.85, 1.15)),
            tools: vec![skylakex, haswell, own],
            pick: Pick::Highest,
            envbench: Side::AS_PLANNED,
            information_if: None,
        })
        .collect()
}

/// The BLAS libraries `ldd` lists for a program: each `libblas.so.N` or
/// `libopenblas...` line's name and the path it resolves to (a library
/// `ldd` did not find has none: "not found").
fn blas_in(ldd: &str) -> Vec<(&str, &str)> {
    ldd.lines()
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(" => ")?;
            let path = rest
                .split_whitespace()
                .next()
                .filter(|p| p.starts_with('/'))?;
            (name.starts_with("libblas.so") || name.starts_with("libopenblas"))
                .then_some((name, path))
        })
        .collect()
}

/// Whether the BLAS `resolved` (each listed library's real path) is a
/// threaded OpenBLAS (Debian's pthread or OpenMP build: the case's
/// threads are its own); else why the row may not be judged against it.
fn judged_blas(resolved: &[PathBuf]) -> Result<(), String> {
    let Some(first) = resolved.first() else {
        return Err("ldd names no BLAS library that hpcc finds".to_string());
    };
    let text = |p: &PathBuf| p.to_string_lossy().into_owned();
    if let Some(p) = resolved.iter().find(|p| text(p).contains("openblas")) {
        if text(p).contains("serial") {
            return Err(format!(
                "hpcc runs on OpenBLAS's serial build ({}), one thread whatever the case's: \
                 install libopenblas0-pthread",
                p.display()
            ));
        }
        return Ok(());
    }
    Err(format!(
        "hpcc runs on {}, not OpenBLAS: no row is judged against the reference BLAS \
         (install libopenblas0-pthread)",
        first.display()
    ))
}

/// Whether `program` runs on OpenBLAS (its `ldd`).
fn openblas(program: &Path) -> Result<(), String> {
    let ldd = crate::cleanup::resolve("ldd").map_err(|e| {
        format!("ldd is not on this environment's PATH ({e}): hpcc's BLAS cannot be told")
    })?;
    let mut cmd = Command::new(ldd);
    cmd.arg(program);
    let ended = crate::bench::program::Program::new(
        cmd,
        format!("listing {}'s libraries with ldd", program.display()),
        Instant::now() + LDD_WITHIN,
    )
    .keep_stdout(64 * 1024)
    .output()
    .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&ended.stdout);
    let resolved: Vec<PathBuf> = blas_in(&text)
        .into_iter()
        .map(|(_, p)| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p)))
        .collect();
    judged_blas(&resolved)
}

/// The AVX-512 subsets OpenBLAS's SkylakeX kernels use.
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512cd")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx512() -> bool {
    false
}

/// Whether the CPU has AVX2 and FMA, which OpenBLAS's Haswell kernels use.
#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx2() -> bool {
    false
}

/// [`openblas`], on a CPU with AVX-512.
fn openblas_with_avx512(program: &Path) -> Result<(), String> {
    if !has_avx512() {
        return Err("this CPU has no AVX-512 for OpenBLAS's SkylakeX kernels".to_string());
    }
    openblas(program)
}

/// [`openblas`], on a CPU with AVX2.
fn openblas_with_avx2(program: &Path) -> Result<(), String> {
    if !has_avx2() {
        return Err("this CPU has no AVX2 for OpenBLAS's Haswell kernels".to_string());
    }
    openblas(program)
}

/// [`openblas`], on a CPU without AVX2, where OpenBLAS picks its kernels.
fn openblas_without_avx2(program: &Path) -> Result<(), String> {
    if has_avx2() {
        return Err(
            "this CPU has AVX2: the Haswell kernels' row takes OpenBLAS's own pick's place"
                .to_string(),
        );
    }
    openblas(program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn hpccs_output_is_read_by_its_importer_with_hpls_check() {
        // recorded here: Debian 12's hpcc 1.5.0 on OpenBLAS 0.3.21 (pthread),
        // n = 1000, one thread, this project's AMD EPYC VM (Zen 3)
        let out = include_str!("../../../../tests/fixtures/reference/hpccoutf.txt");
        let read = hpcc("hpcc", &[], openblas).read;
        let gflops = read.figure(out).unwrap();
        assert!((gflops - 33.9978).abs() < 1e-9, "{gflops}");
        // a wrong solution gives no figure, and says why
        let wrong = out.replace("HPL_RnormI=1.4837e-12", "HPL_RnormI=1.4837e+2");
        assert_eq!(read.figure(&wrong), None);
        let Read::Imported {
            importer,
            bench,
            metric,
            ..
        } = read
        else {
            panic!("hpcc's figure is read by its importer");
        };
        let why = crate::import::figure_in(importer, &wrong, bench, metric).unwrap_err();
        assert!(why.contains("residual"), "{why}");
        assert!(crate::import::figure_in(importer, "no summary", bench, metric).is_err());
    }

    #[test]
    fn the_input_takes_the_cases_n_and_keeps_hpls_line_numbers() {
        let case: BTreeMap<String, serde_json::Value> =
            [("n".to_string(), serde_json::json!(1000))].into();
        let text = crate::bench::reference::fill_text(HPCCINF, &case).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // HPL reads N on line 6, NB on 8, P and Q on 11 and 12
        assert!(lines[5].starts_with("1000 "), "{}", lines[5]);
        assert!(lines[7].starts_with("192 "), "{}", lines[7]);
        assert!(lines[10].starts_with("1 ") && lines[11].starts_with("1 "));
        assert!(lines[31].starts_with("#####"), "{}", lines[31]);
        assert_eq!(lines.len(), 36);
    }

    #[test]
    fn either_haswells_kernels_or_openblass_own_pick_runs_never_both() {
        // on any CPU exactly one of the two refuses it for the CPU's sake
        // (the other goes on to ldd, which finds no such program)
        let nowhere = Path::new("/nonexistent/hpcc");
        let cpu_said = [openblas_with_avx2(nowhere), openblas_without_avx2(nowhere)]
            .iter()
            .filter(|r| matches!(r, Err(e) if e.starts_with("this CPU has")))
            .count();
        assert_eq!(cpu_said, 1);
        let names: Vec<&str> = references()[0].tools.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "hpcc HPL (OpenBLAS, SkylakeX kernels)",
                "hpcc HPL (OpenBLAS, Haswell kernels)",
                "hpcc HPL (OpenBLAS)"
            ]
        );
        assert_eq!(references()[0].pick, Pick::Highest);
    }

    #[test]
    fn only_openblas_is_a_reference() {
        let ldd = "\tlinux-vdso.so.1 (0x00007ffc)\n\
                   \tlibblas.so.3 => /lib/x86_64-linux-gnu/libblas.so.3 (0x00007fc0)\n\
                   \tlibopenblas.so.0 => /lib/x86_64-linux-gnu/libopenblas.so.0 (0x00007fc1)\n\
                   \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fc2)\n";
        assert_eq!(
            blas_in(ldd),
            [
                ("libblas.so.3", "/lib/x86_64-linux-gnu/libblas.so.3"),
                ("libopenblas.so.0", "/lib/x86_64-linux-gnu/libopenblas.so.0")
            ]
        );
        let resolved = |ps: &[&str]| ps.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert!(judged_blas(&resolved(&[
            "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
        ]))
        .is_ok());
        let reference = judged_blas(&resolved(&[
            "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0",
        ]))
        .unwrap_err();
        assert!(reference.contains("not OpenBLAS"), "{reference}");
        assert!(reference.contains("libopenblas0-pthread"), "{reference}");
        assert!(judged_blas(&[]).unwrap_err().contains("no BLAS"));
        let serial = judged_blas(&resolved(&[
            "/usr/lib/x86_64-linux-gnu/openblas-serial/libblas.so.3",
        ]))
        .unwrap_err();
        assert!(serial.contains("serial build"), "{serial}");
        assert!(judged_blas(&resolved(&[
            "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"
        ]))
        .is_ok());
        // a library ldd did not find has no path
        assert!(blas_in("\tlibblas.so.3 => not found\n").is_empty());
    }
}
