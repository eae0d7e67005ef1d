//! A blocked right-looking LU with partial pivoting and a look-ahead of one
//! panel, the schedule HPL uses: while the trailing matrix is updated with
//! panel k, the columns of panel k+1 are updated first and factored at once,
//! so the panel's mostly serial factorisation overlaps the parallel update
//! instead of idling the other threads. faer's recursive LU factors each
//! left panel on one thread while the rest wait; on two threads it gained
//! 1.46x from the second thread where HPL gained 1.69x (docs/log/fidelity.md).
//!
//! Each panel is factored by faer's LU on one thread; the trailing update
//! is faer's triangular solve and matrix product, split by columns into
//! pieces that idle threads take (rayon work stealing). Row interchanges
//! are kept as pairs of rows, rebuilt from faer's permutation of each
//! panel, and applied to the trailing columns with each piece's update and
//! to the factored columns on the left by the look-ahead.
//! See: HPL `src/pgesv/HPL_pdgesv0.c` and `HPL_pdgesvK2.c` for the
//! look-ahead schedule.

use dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::factor;
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_unit_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::prelude::*;
use faer::{Accum, MatMut, MatRef, Par};

/// The panel width: hpcc's HPL runs in `envbench fidelity` use NB = 192.
pub const BLOCK: usize = 192;

/// Column pieces per thread in a trailing update, so that a thread done
/// with the next panel finds work left to take.
const PIECES_PER_THREAD: usize = 4;

/// The narrowest column piece worth a task of its own.
const MIN_PIECE: usize = 64;

/// One row interchange: rows `.0` and `.1`, in the whole matrix's indices.
type Swap = (usize, usize);

/// Workspace for factoring n×n matrices, reused between solves.
pub struct Blocked {
    nb: usize,
    /// The row interchanges of every panel so far, in order.
    swaps: Vec<Swap>,
    panel: PanelScratch,
}

/// What factoring one panel needs, apart from the matrix.
struct PanelScratch {
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    /// Position of each of the panel's rows while its permutation is
    /// turned into interchanges, and the row at each position.
    position: Vec<usize>,
    row_at: Vec<usize>,
    stack: MemBuffer,
    /// The interchanges of the panel being factored.
    swaps: Vec<Swap>,
}

impl Blocked {
    /// Workspace for n×n matrices with panels `nb` columns wide.
    pub fn new(n: usize, nb: usize) -> Blocked {
        let nb = nb.clamp(1, n.max(1));
        Blocked {
            nb,
            swaps: Vec::with_capacity(n),
            panel: PanelScratch {
                perm: vec![0; n],
                perm_inv: vec![0; n],
                position: vec![0; n],
                row_at: vec![0; n],
                stack: MemBuffer::new(factor::lu_in_place_scratch::<usize, f64>(
                    n,
                    nb,
                    Par::Seq,
                    Default::default(),
                )),
                swaps: Vec::with_capacity(nb),
            },
        }
    }

    /// Factors the square `a` in place into L (unit lower, below the
    /// diagonal) and U, its rows interchanged as [`Blocked::solve`] replays
    /// them. With `threads` above one the look-ahead and the update run
    /// side by side (`rayon::join`) on the current pool, whose size sets
    /// the parallelism; `threads` sets how finely the update is split.
    pub fn factor(&mut self, mut a: MatMut<'_, f64>, threads: usize) {
        let n = a.nrows();
        assert_eq!(n, a.ncols(), "a square matrix");
        assert!(
            n <= self.panel.perm.len(),
            "a {n}×{n} matrix in a workspace made for {}",
            self.panel.perm.len()
        );
        let nb = self.nb;
        let Blocked {
            swaps,
            panel: scratch,
            ..
        } = self;
        swaps.clear();
        if n == 0 {
            return;
        }
        scratch.factor(a.rb_mut().submatrix_mut(0, 0, n, nb.min(n)), 0);
        swaps.extend_from_slice(&scratch.swaps);
        // where the interchanges of the panel at c0 start in `swaps`
        let mut from = 0;
        let mut c0 = 0;
        while c0 + nb < n {
            let c1 = c0 + nb;
            let c2 = (c1 + nb).min(n);
            let panel_swaps = &swaps[from..];
            let (left, right) = a.rb_mut().split_at_col_mut(c1);
            let (done, panel_cols) = left.split_at_col_mut(c0);
            let panel = panel_cols.rb().submatrix(c0, 0, n - c0, nb);
            let (mut next, rest) = right.split_at_col_mut(c2 - c1);
            let ahead = || {
                apply_swaps(done, panel_swaps);
                update(next.rb_mut(), panel, c0, panel_swaps);
                scratch.factor(next.submatrix_mut(c1, 0, n - c1, c2 - c1), c1);
            };
            if threads > 1 {
                let piece = rest
                    .ncols()
                    .div_ceil(threads * PIECES_PER_THREAD)
                    .max(MIN_PIECE);
                rayon::join(ahead, || {
                    update_in_pieces(rest, panel, c0, panel_swaps, piece)
                });
            } else {
                ahead();
                update(rest, panel, c0, panel_swaps);
            }
            from = swaps.len();
            swaps.extend_from_slice(&scratch.swaps);
            c0 = c1;
        }
        // The last panel's interchanges, to the columns on its left.
        apply_swaps(a.submatrix_mut(0, 0, n, c0), &swaps[from..]);
    }

    /// Solves for the right-hand sides `x` in place, with the factors
    /// [`Blocked::factor`] left in `lu`.
    pub fn solve(&self, lu: MatRef<'_, f64>, mut x: MatMut<'_, f64>, par: Par) {
        apply_swaps(x.rb_mut(), &self.swaps);
        solve_unit_lower_triangular_in_place(lu, x.rb_mut(), par);
        solve_upper_triangular_in_place(lu, x, par);
    }

    /// The panel width in use: the one asked for, or n where n is smaller.
    pub fn width(&self) -> usize {
        self.nb
    }

    /// The row interchanges of the last factorisation, in order.
    #[cfg(test)]
    pub fn swaps(&self) -> &[Swap] {
        &self.swaps
    }
}

impl PanelScratch {
    /// Factors the panel (the rows from `first_row` down) on one thread and
    /// leaves its row interchanges in `self.swaps`, in the whole matrix's
    /// row indices.
    fn factor(&mut self, panel: MatMut<'_, f64>, first_row: usize) {
        let m = panel.nrows();
        let (perm, perm_inv) = (&mut self.perm[..m], &mut self.perm_inv[..m]);
        factor::lu_in_place(
            panel,
            perm,
            perm_inv,
            Par::Seq,
            MemStack::new(&mut self.stack),
            Default::default(),
        );
        // faer returns the permutation: perm[i] is the row now at i. Replay
        // it as interchanges, at most one per position.
        self.swaps.clear();
        for i in 0..m {
            self.position[i] = i;
            self.row_at[i] = i;
        }
        for i in 0..m {
            let wanted = self.perm[i];
            let at = self.position[wanted];
            if at != i {
                let displaced = self.row_at[i];
                self.row_at[i] = wanted;
                self.row_at[at] = displaced;
                self.position[wanted] = i;
                self.position[displaced] = at;
                self.swaps.push((first_row + i, first_row + at));
            }
        }
    }
}

/// Interchanges rows of every column of `cols` (all the matrix's rows,
/// columns of a column-major matrix).
fn apply_swaps(mut cols: MatMut<'_, f64>, swaps: &[Swap]) {
    for j in 0..cols.ncols() {
        let col = cols
            .rb_mut()
            .col_mut(j)
            .try_as_col_major_mut()
            .expect("invariant: the columns of a column-major matrix are contiguous")
            .as_slice_mut();
        for &(r, s) in swaps {
            col.swap(r, s);
        }
    }
}

/// Updates the columns `cols` (all rows) with the factored panel that
/// starts at row and column `c0`: interchanges, U12 = L11⁻¹·A12, and
/// A22 −= L21·U12. On the calling thread.
fn update(mut cols: MatMut<'_, f64>, panel: MatRef<'_, f64>, c0: usize, swaps: &[Swap]) {
    if cols.ncols() == 0 {
        return;
    }
    apply_swaps(cols.rb_mut(), swaps);
    let (l11, l21) = panel.split_at_row(panel.ncols());
    let (_, below) = cols.split_at_row_mut(c0);
    let (mut u12, a22) = below.split_at_row_mut(panel.ncols());
    solve_unit_lower_triangular_in_place(l11, u12.rb_mut(), Par::Seq);
    matmul(a22, Accum::Add, l21, u12.rb(), -1.0, Par::Seq);
}

/// [`update`], split into pieces of about `piece` columns for the pool.
fn update_in_pieces(
    cols: MatMut<'_, f64>,
    panel: MatRef<'_, f64>,
    c0: usize,
    swaps: &[Swap],
    piece: usize,
) {
    if cols.ncols() <= piece {
        return update(cols, panel, c0, swaps);
    }
    let half = cols.ncols() / 2;
    let (l, r) = cols.split_at_col_mut(half);
    rayon::join(
        || update_in_pieces(l, panel, c0, swaps, piece),
        || update_in_pieces(r, panel, c0, swaps, piece),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    fn random(n: usize, seed: u64) -> Mat<f64> {
        super::super::random_system(n, seed).0
    }

    /// max |P·A − L·U| over the entries, with the interchanges replayed on A.
    fn reconstruction_error(a: &Mat<f64>, lu: &Mat<f64>, swaps: &[Swap]) -> f64 {
        let n = a.nrows();
        let mut pa = a.clone();
        apply_swaps(pa.as_mut(), swaps);
        let l = Mat::from_fn(n, n, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Greater => lu[(i, j)],
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Less => 0.0,
        });
        let u = Mat::from_fn(n, n, |i, j| if i <= j { lu[(i, j)] } else { 0.0 });
        let diff = &pa - &l * &u;
        (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| diff[(i, j)].abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn p_a_equals_l_u_for_widths_that_do_and_do_not_divide_n() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        // n = 300 with nb = 32 at 2 and 4 threads updates in several pieces
        // of at least 64 columns; 50 against 192 is one panel
        for (n, nb, threads) in [
            (7, 3, 2),
            (64, 16, 2),
            (100, 32, 1),
            (130, 64, 2),
            (300, 32, 2),
            (300, 32, 4),
            (97, 16, 4),
            (50, 192, 2),
        ] {
            let a = random(n, n as u64);
            let mut lu = a.clone();
            let mut f = Blocked::new(n, nb);
            pool.install(|| f.factor(lu.as_mut(), threads));
            let err = reconstruction_error(&a, &lu, f.swaps());
            assert!(err < 1e-12, "n={n} nb={nb} threads={threads}: {err:e}");
        }
    }

    #[test]
    fn one_and_two_threads_give_the_same_factors() {
        let (n, nb) = (150, 32);
        let a = random(n, 11);
        let (mut one, mut two) = (a.clone(), a.clone());
        let mut f = Blocked::new(n, nb);
        f.factor(one.as_mut(), 1);
        let swaps_one = f.swaps().to_vec();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| f.factor(two.as_mut(), 2));
        assert_eq!(swaps_one, f.swaps());
        let worst = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| (one[(i, j)] - two[(i, j)]).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-12, "{worst:e}");
    }

    #[test]
    fn solves_a_known_system_that_needs_an_interchange() {
        // A = [[0, 1], [2, 3]] needs row 1 as the first pivot; b = [1, 8] → x = [2.5, 1].
        let a = Mat::from_fn(2, 2, |i, j| [[0.0, 1.0], [2.0, 3.0]][i][j]);
        let mut lu = a.clone();
        let mut x = Mat::from_fn(2, 1, |i, _| [1.0, 8.0][i]);
        let mut f = Blocked::new(2, 1);
        f.factor(lu.as_mut(), 1);
        assert_eq!(f.swaps(), &[(0, 1)]);
        f.solve(lu.as_ref(), x.as_mut(), Par::Seq);
        assert!(
            (x[(0, 0)] - 2.5).abs() < 1e-14 && (x[(1, 0)] - 1.0).abs() < 1e-14,
            "{x:?}"
        );
    }
}
