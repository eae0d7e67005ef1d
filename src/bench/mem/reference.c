/* mem.stream's reference (envbench fidelity): STREAM's four kernels over
 * three arrays of N doubles, OpenMP's static schedule, first touch by the
 * owning thread; NTIMES iterations, the first discarded, three whole runs;
 * prints the median of the runs' best Triad rates in MB/s (24 bytes an
 * element). The arrays are page-aligned and ask for small pages, as
 * envbench's do (a malloc'd array starts 16 bytes into a page, and takes
 * huge pages where the host's THP mode is "always").
 *   reference N NTIMES   (threads: OMP_NUM_THREADS; N >= 1000, NTIMES >= 2) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static double *array(long n) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, n * sizeof(double)) != 0) {
    perror("posix_memalign");
    exit(1);
  }
#ifdef MADV_NOHUGEPAGE
  madvise(p, n * sizeof(double), MADV_NOHUGEPAGE);
#endif
  return p;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N NTIMES\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  int ntimes = atoi(argv[2]);
  if (n < 1000 || ntimes < 2) {
    fprintf(stderr, "N must be at least 1000 and NTIMES at least 2\n");
    return 2;
  }
  double *a = array(n), *b = array(n), *c = array(n);
  double q = 3.0, best[3];
  for (int run = 0; run < 3; run++) {
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }
    best[run] = 1e30;
    for (int k = 0; k < ntimes; k++) {
      double t;
#pragma omp parallel for schedule(static)
      for (long j = 0; j < n; j++) c[j] = a[j];
#pragma omp parallel for schedule(static)
      for (long j = 0; j < n; j++) b[j] = q * c[j];
#pragma omp parallel for schedule(static)
      for (long j = 0; j < n; j++) c[j] = a[j] + b[j];
      t = omp_get_wtime();
#pragma omp parallel for schedule(static)
      for (long j = 0; j < n; j++) a[j] = b[j] + q * c[j];
      t = omp_get_wtime() - t;
      if (k > 0 && t < best[run]) best[run] = t;
    }
  }
  /* median of three */
  double x = best[0], y = best[1], z = best[2], m = x > y ? (y > z ? y : (x > z ? z : x)) : (x > z ? x : (y > z ? z : y));
  if (a[n / 2] <= 0.0) return 1; /* keep the work observable */
  printf("%.1f\n", 24.0 * n / 1e6 / m);
  return 0;
}
