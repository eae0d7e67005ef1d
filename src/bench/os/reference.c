/* The os family's reference programs for `envbench fidelity`, compiled here
 * by the environment's cc. Each prints one figure on stdout.
 *   getppid N     ns per raw getppid (what perf bench syscall basic times)
 *   mix N         ns per UnixBench syscall-mix loop: close(dup), getpid, getuid, umask
 *   fork          us per process: 100 children that pause, then killed and
 *                 reaped (seed 003's method; one run per process)
 *   pingpong A B  us per round trip of one byte, parent on CPU A, child on B
 *   spawn PATH    fork+exec+wait of `PATH exit` per second, median of 5 runs of 30
 *                 after 100 ms of untimed spawns */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return sched_setaffinity(0, sizeof s, &s);
}

/* fork, exec `path exit`, wait; 0 when it exited 0 */
static int spawn_once(const char *path) {
  pid_t p = fork();
  if (p < 0) return 1;
  if (p == 0) {
    execl(path, "envbench-tiny", "exit", (char *)NULL);
    _exit(127);
  }
  int status;
  return waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv) {
  double v[5];
  if (argc < 2) return 2;
  if (strcmp(argv[1], "getppid") == 0 || strcmp(argv[1], "mix") == 0) {
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    int fd = open("/dev/null", O_RDONLY);
    int probe = fd < 0 ? -1 : dup(fd);
    if (fd < 0 || probe < 0 || n <= 0) return 1;
    close(probe);
    double t0 = now();
    if (argv[1][0] == 'g') {
      for (long i = 0; i < n; i++) syscall(SYS_getppid);
    } else {
      for (long i = 0; i < n; i++) { close(dup(fd)); syscall(SYS_getpid); getuid(); umask(022); }
    }
    printf("%.4f\n", (now() - t0) * 1e9 / n);
    return 0;
  }
  if (strcmp(argv[1], "fork") == 0) {
    enum { N = 100 };
    pid_t pids[N];
    double t0 = now();
    int made = 0;
    for (; made < N; made++) {
      pids[made] = fork();
      if (pids[made] == 0) for (;;) pause();
      if (pids[made] < 0) break;
    }
    double us = (now() - t0) * 1e6 / N;
    for (int i = 0; i < made; i++) kill(pids[i], SIGKILL);
    for (int i = 0; i < made; i++) waitpid(pids[i], NULL, 0);
    if (made < N) return 3;
    printf("%.3f\n", us);
    return 0;
  }
  if (strcmp(argv[1], "pingpong") == 0 && argc > 3) {
    int a = atoi(argv[2]), b = atoi(argv[3]), n = 20000;
    int down[2], up[2];
    if (pipe(down) || pipe(up)) return 1;
    pid_t p = fork();
    if (p == 0) {
      if (pin(b)) _exit(2);
      close(down[1]);
      close(up[0]);
      char c;
      while (read(down[0], &c, 1) == 1)
        if (write(up[1], &c, 1) != 1) break;
      _exit(0);
    }
    if (pin(a)) return 2;
    close(down[0]);
    close(up[1]);
    char c = 1;
    for (int r = 0; r < 5; r++) {
      double t0 = now();
      for (int i = 0; i < n; i++)
        if (write(down[1], &c, 1) != 1 || read(up[0], &c, 1) != 1) return 3;
      v[r] = (now() - t0) * 1e6 / n;
    }
    close(down[1]);
    waitpid(p, NULL, 0);
  } else if (strcmp(argv[1], "spawn") == 0 && argc > 2) {
    /* untimed spawns for 100 ms first: a fresh process's first spawns are
       slower (envbench's spawner warms up the same way) */
    double warm = now();
    while (now() - warm < 0.1)
      if (spawn_once(argv[2])) return 4;
    for (int r = 0; r < 5; r++) {
      int n = 30;
      double t0 = now();
      for (int i = 0; i < n; i++)
        if (spawn_once(argv[2])) return 4;
      v[r] = n / (now() - t0);
    }
  } else {
    return 2;
  }
  qsort(v, 5, sizeof v[0], cmp);
  printf("%.3f\n", v[2]);
  return 0;
}
