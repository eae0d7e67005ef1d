/* envbench fidelity's reference for io.dd's O_DIRECT write: what envbench's
 * write does, and nothing more. A new file (O_CREAT|O_EXCL|O_DIRECT), a
 * 1 MiB buffer of random bytes on a huge page as envbench's (4 KiB-aligned
 * base pages where transparent huge pages are `never` or absent), and
 * before each write 8 bytes at the start of each 512-byte sector made new;
 * timed from the open file's first write to its close. Prints MB/s.
 *   reference FILE SIZE   (SIZE in bytes, or with KiB, MiB or GiB) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static long long bytes(const char *s) {
  char *end;
  long long n = strtoll(s, &end, 10);
  if (!strcmp(end, "KiB")) return n << 10;
  if (!strcmp(end, "MiB")) return n << 20;
  if (!strcmp(end, "GiB")) return n << 30;
  return *end ? -1 : n;
}

/* whether envbench asks for a huge page here: THP `always` or `madvise` */
static int thp(void) {
  char line[256] = "";
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  return strstr(line, "[always]") || strstr(line, "[madvise]");
}

int main(int argc, char **argv) {
  long long size = argc == 3 ? bytes(argv[2]) : -1, block = 1 << 20, done = 0;
  if (size <= 0) {
    fprintf(stderr, "usage: reference FILE SIZE\n");
    return 2;
  }
  unsigned char *buf = NULL;
  if (thp()) {
    size_t huge = 2 << 20;
    unsigned char *m = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      buf = (unsigned char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
      if (madvise(buf, huge, MADV_HUGEPAGE)) buf = NULL; /* base pages, as envbench then */
    }
  }
  if (!buf) {
    int rc = posix_memalign((void **)&buf, 4096, block);
    if (rc) {
      fprintf(stderr, "posix_memalign: %s\n", strerror(rc));
      return 1;
    }
  }
  uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid(), serial = 0;
  for (long i = 0; i < block; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    memcpy(buf + i, &x, 8);
  }
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_DIRECT, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  double t0 = now();
  while (done < size) {
    uint64_t base = x ^ (++serial << 24);
    for (long i = 0; i < block / 512; i++) {
      uint64_t v = base ^ (uint64_t)i;
      memcpy(buf + i * 512, &v, 8);
    }
    long long n = size - done < block ? size - done : block;
    ssize_t w = write(fd, buf, n);
    if (w != n) {
      if (w < 0)
        perror("write");
      else
        fprintf(stderr, "write: %zd of %lld bytes\n", w, n);
      unlink(argv[1]);
      return 1;
    }
    done += n;
  }
  if (close(fd)) {
    perror("close");
    unlink(argv[1]);
    return 1;
  }
  double t1 = now();
  unlink(argv[1]);
  printf("%.1f\n", done / (t1 - t0) / 1e6);
  return 0;
}
