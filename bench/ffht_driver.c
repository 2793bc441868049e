/* Times a CPU FWT library that exports FFHT's C API (int fht_float(float*, int log_n) and
 * int fht_double(double*, int log_n), one row per call, in place) on a batch of rows.
 * The library is loaded at run time from the path given; no peer code is part of this project.
 *
 *   ffht_driver LIB {float32|float64} LOG2N MEGABYTES [OFFSET]
 *
 * The batch starts OFFSET bytes (default 0) past a 64-byte boundary.
 * After one warm-up pass it prints "ready", then for each line read from stdin times one pass over
 * the batch and prints its ns per element, so that the caller can interleave these passes with its
 * own (both see the same state of the machine). Ends at end of input.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: %s LIB float32|float64 LOG2N MEGABYTES [OFFSET]\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  const int f64 = strcmp(argv[2], "float64") == 0, log_n = atoi(argv[3]);
  const size_t es = f64 ? 8 : 4, n = (size_t)1 << log_n;
  size_t rows = ((size_t)atoi(argv[4]) << 20) / (n * es);
  if (rows < 1) rows = 1;
  int (*fht)(void*, int) = (int (*)(void*, int))dlsym(lib, f64 ? "fht_double" : "fht_float");
  if (!fht) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  const size_t offset = argc == 6 ? (size_t)atoi(argv[5]) : 0;
  unsigned char* buf = (unsigned char*)aligned_alloc(64, (rows * n * es + offset + 63) / 64 * 64) + offset;
  for (size_t i = 0; i < rows * n; ++i) {
    double v = (double)rand() / RAND_MAX - 0.5;
    if (f64) ((double*)buf)[i] = v; else ((float*)buf)[i] = (float)v;
  }
  char line[16];
  for (int r = -1; r < 0 || fgets(line, sizeof line, stdin); ++r) { /* r = -1: warm-up */
    double t0 = now_ns();
    for (size_t i = 0; i < rows; ++i)
      if (fht(buf + i * n * es, log_n)) return 1;
    const double t = (now_ns() - t0) / (double)(rows * n);
    /* Keep magnitudes bounded: H·H = N·I, so rescale after each pass (untimed). */
    for (size_t i = 0; i < rows * n; ++i) {
      if (f64) ((double*)buf)[i] /= (double)n; else ((float*)buf)[i] /= (float)n;
    }
    if (r < 0) printf("ready\n");
    else printf("%.6f\n", t);
    fflush(stdout);
  }
  return 0;
}
