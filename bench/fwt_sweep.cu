// Sweeps FWT kernel configurations (values per thread, register cap, input stages, corner-turn
// passes, split rows) on one GPU, to choose the table in cuda/fwt/fwt_table.cuh `launch_tile`. Each configuration
// transforms a 256 MB tensor of rows of 2^n; the output is checked against the first configuration
// of its (dtype, n) and timed (median of 20 launches, CUDA events) against cudaMemcpyAsync of the
// same bytes (256 MB, or FWT_SWEEP_MB).
//
// Build: cmake -B build -DIRONKERNELS_BUILD_BENCH=ON && cmake --build build --target fwt_sweep
// Run: ./fwt_sweep [dtype [n]]  (one line per configuration: dtype n K occ stages passes GB/s, its
// ratio to the copy measured just before the group, the largest difference to the group's first output)
// FWT_SWEEP_MATCH=table runs only the configurations whose label contains the string (the first of
// them is then the group's reference), e.g. the table alone on every group for an A/B of two builds.
// With FWT_SWEEP_SUSTAIN_MS=500 each configuration (and the copy) also runs back to back for that
// long: its GB/s, the board's watts and joules per GB moved under sustained load (NVML's energy
// counter, loaded at run time), where a power-capped GPU lowers its clocks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fwt/fwt_single_exchange.cuh"
#include "fwt/fwt_table.cuh"

namespace fg = ironkernels::detail::fwt_gpu;

namespace {
std::size_t tensor_bytes = std::size_t(256) << 20;  // FWT_SWEEP_MB overrides (e.g. whole rounds of a resident grid)
constexpr int kReps = 20;

void* d_x = nullptr;
void* d_y = nullptr;
cudaStream_t stream = nullptr;
std::vector<double> reference;  // first configuration's output of the current (dtype, n)
double copy_gbps = 0;

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) return double(__half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return double(__bfloat162float(v));
  else return double(v);
}
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
  else return T(v);
}
template <class T>
const char* name() {
  if constexpr (std::is_same_v<T, __half>) return "float16";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return "bfloat16";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else return "float64";
}

template <class F>
double median_ms(F&& launch) {
  for (int i = 0; i < 10; ++i) launch();  // also brings the clocks up after the host-side work
  // Events around each launch, the launches queued back to back (as bench/_common.py times them).
  std::vector<cudaEvent_t> ev(2 * kReps);
  for (auto& e : ev) IK_CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < kReps; ++i) {
    IK_CUDA_CHECK(cudaEventRecord(ev[2 * i], stream));
    launch();
    IK_CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], stream));
  }
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> ms(kReps);
  for (int i = 0; i < kReps; ++i) IK_CUDA_CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
  for (auto& e : ev) IK_CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return ms[kReps / 2];
}

// Board energy in joules since the driver loaded, through NVML opened at run time (no build dependency).
struct BoardEnergy {
  using Total = int (*)(void*, unsigned long long*);  // nvmlDeviceGetTotalEnergyConsumption: millijoules
  Total total = nullptr;
  void* device = nullptr;
  BoardEnergy() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto handle = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    total = reinterpret_cast<Total>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    if (!init || !handle || !total || init() != 0 || handle(0, &device) != 0) total = nullptr;
  }
  double joules() const {
    unsigned long long mj = 0;
    return total && total(device, &mj) == 0 ? double(mj) * 1e-3 : NAN;
  }
};

// Back to back for FWT_SWEEP_SUSTAIN_MS (0: skipped): " | sustained GB/s, W, J/GB" for the line.
template <class F>
void print_sustained(F&& launch, double ms_per_call) {
  static const int sustain_ms = [] {
    const char* env = std::getenv("FWT_SWEEP_SUSTAIN_MS");
    return env ? std::atoi(env) : 0;
  }();
  static const BoardEnergy energy;
  if (sustain_ms <= 0) return;
  const int calls = std::max(1, int(sustain_ms / ms_per_call));
  cudaEvent_t start, stop;
  IK_CUDA_CHECK(cudaEventCreate(&start));
  IK_CUDA_CHECK(cudaEventCreate(&stop));
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));
  const double j0 = energy.joules();
  IK_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < calls; ++i) launch();
  IK_CUDA_CHECK(cudaEventRecord(stop, stream));
  IK_CUDA_CHECK(cudaEventSynchronize(stop));
  const double j1 = energy.joules();
  float ms = 0;
  IK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  IK_CUDA_CHECK(cudaEventDestroy(start));
  IK_CUDA_CHECK(cudaEventDestroy(stop));
  const double gb = 2.0 * double(tensor_bytes) * calls * 1e-9;
  std::printf("  | sustained %7.1f GB/s %5.0f W %.4f J/GB", gb / (ms * 1e-3), (j1 - j0) / (ms * 1e-3), (j1 - j0) / gb);
}

template <class T>
void fill_input() {
  const std::size_t count = tensor_bytes / sizeof(T);
  std::vector<T> h(count);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;  // xorshift64: uniform in [-1, 1), fast enough for 256 MB
  for (auto& v : h) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    v = from_double<T>(double(state >> 11) * 0x1p-52 - 1.0);
  }
  IK_CUDA_CHECK(cudaMemcpy(d_x, h.data(), tensor_bytes, cudaMemcpyHostToDevice));
  reference.clear();
  auto copy = [] { IK_CUDA_CHECK(cudaMemcpyAsync(d_y, d_x, tensor_bytes, cudaMemcpyDeviceToDevice, stream)); };
  const double copy_ms = median_ms(copy);
  copy_gbps = 2.0 * double(tensor_bytes) / (copy_ms * 1e6);
  std::printf("%-8s cudaMemcpyAsync D2D %7.1f GB/s", name<T>(), copy_gbps);
  print_sustained(copy, copy_ms);
  std::printf("\n");
}

// Times `launch(args)` on rows of 2^LOG_N, checks its output against the group's first, prints a line.
const char* only_match = nullptr;  // FWT_SWEEP_MATCH: only the configurations whose label contains it
template <class T, int LOG_N, class Launch>
void measure(const char* label, Launch&& launch_with) {
  if (only_match && !std::strstr(label, only_match)) return;
  const std::int64_t rows = std::int64_t(tensor_bytes / sizeof(T)) >> LOG_N;
  fg::KernelArgs a{};
  a.x = d_x;
  a.y = d_y;
  a.rows = rows;
  a.log_n = LOG_N;
  a.batch_ndim = 1;
  a.shape[0] = rows;
  a.xs[0] = a.ys[0] = std::int64_t(1) << LOG_N;
  a.scale = 1.0;
  a.scaled = false;
  IK_CUDA_CHECK(cudaMemsetAsync(d_y, 0xff, tensor_bytes, stream));
  auto launch = [&] { launch_with(a); };
  const double ms = median_ms(launch);
  const std::size_t count = tensor_bytes / sizeof(T);
  std::vector<T> h(count);
  IK_CUDA_CHECK(cudaMemcpy(h.data(), d_y, tensor_bytes, cudaMemcpyDeviceToHost));
  double diff = 0;
  if (reference.empty()) {
    reference.resize(count);
    for (std::size_t i = 0; i < count; ++i) reference[i] = to_double(h[i]);
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      const double d = std::fabs(to_double(h[i]) - reference[i]) / (1.0 + std::fabs(reference[i]));
      diff = std::isnan(d) ? INFINITY : std::max(diff, d);
    }
  }
  const double gbps = 2.0 * double(tensor_bytes) / (ms * 1e6);
  std::printf("%-8s n=%2d %-58s %7.1f GB/s  %.3f of copy  diff %.2e", name<T>(), LOG_N, label, gbps, gbps / copy_gbps, diff);
  print_sustained(launch, ms);
  std::printf("\n");
  std::fflush(stdout);
}

// The library's choice for this dtype and N (launch_tile's table), the reference line of each group.
template <class T, int LOG_N>
void run_table() {
  measure<T, LOG_N>("table (launch_tile)", [](const fg::KernelArgs& a) {
    fg::launch_tile<T, 16 / sizeof(T), fg::kTableVectors<T>, LOG_N>(a, stream, 0);
  });
}

// The sweep's configuration booleans as the kernel's TileOption flags.
constexpr unsigned tile_options(bool bulk_store, bool lane_turn, bool chained_mma, bool split_top) {
  return (bulk_store ? fg::kBulkStore : 0u) | (lane_turn ? fg::kLaneTurn : 0u) | (chained_mma ? fg::kChainedMma : 0u) |
         (split_top ? fg::kSplitTop : 0u);
}

// One configuration of the tile kernel (launch_tile_config).
template <class T, int K, int LOG_N, int OCC, int STAGES, int PASSES = 1, bool BULK = false, bool LT = false,
          bool CHAINED = false>
void run() {
  constexpr int V = 16 / sizeof(T);
  char label[96];
  std::snprintf(label, sizeof label, "K=%2d occ=%2d stages=%2d passes=%d bulk=%d lane-turn=%d%s", K, OCC, STAGES, PASSES,
                int(BULK), int(LT), CHAINED ? " chained mma" : "");
  measure<T, LOG_N>(label, [](const fg::KernelArgs& a) {
    fg::launch_tile_config<T, V,
                           fg::tile_shape(K, LOG_N).occupancy(OCC).staged(STAGES).turn_in(PASSES)
                               .with(tile_options(BULK, LT, CHAINED, false)).code()>(a, stream, 0);
  });
}

// A split row (SPLIT_TOP): each half transformed in registers in turn, the first parked in shared
// memory, the row's top bit last.
template <class T, int K, int LOG_N, int OCC, int PASSES = 1, bool CHAINED = false, bool LT = false>
void run_split() {
  constexpr int V = 16 / sizeof(T);
  char label[96];
  std::snprintf(label, sizeof label, "split K=%2d occ=%2d passes=%d%s%s", K, OCC, PASSES, CHAINED ? " chained mma" : "",
                LT ? " lane-turn" : "");
  measure<T, LOG_N>(label, [](const fg::KernelArgs& a) {
    fg::launch_tile_config<T, V,
                           fg::tile_shape(K, LOG_N).occupancy(OCC).turn_in(PASSES)
                               .with(tile_options(false, LT, CHAINED, true)).code()>(a, stream, 0);
  });
}

// The single-exchange kernel (cuda/fwt/fwt_single_exchange.cuh): 16-bit rows of 2^12-2^15, a block
// per row.
template <class T, int LOG_N, int STAGES, bool SPLIT = false, bool DIRECT = false>
void run_single_exchange() {
  char label[96];
  std::snprintf(label, sizeof label, "single exchange, stages=%d%s%s", STAGES, SPLIT ? " split" : "",
                DIRECT ? " direct stores" : "");
  measure<T, LOG_N>(label, [](const fg::KernelArgs& a) {
    fg::launch_single_exchange<T, LOG_N, STAGES, SPLIT, DIRECT>(a, stream, 0);
  });
}

// The configurations of one (dtype, n): the table's first (the reference for the others' outputs),
// then the alternatives, among which the table's configuration may come again (a same-run repeat).
// Template arguments: vectors of 16 bytes per thread, warps per SM the register cap leaves room
// for (0 = no cap), input stages (0 = direct loads), corner-turn passes, bulk stores, lane turn,
// chained tensor-core stages.
template <class T, int LOG_N>
void sweep_16bit() {
  fill_input<T>();
  run_table<T, LOG_N>();
  if constexpr (LOG_N >= 8) {  // two chained tensor-core stages (no shuffles)
    run<T, 8, LOG_N, 24, 0, 1, false, false, true>();
    run<T, 8, LOG_N, 16, 0, 1, false, false, true>();
    if constexpr (LOG_N >= 12) run<T, 16, LOG_N, 0, 0, 1, false, false, true>();
    if constexpr (LOG_N >= 13) run<T, 16, LOG_N, 0, 1, 2, false, false, true>();
  }
  if constexpr (LOG_N >= 13) {  // split rows: halves of the chained 2^(n-1) kernels
    run_split<T, 8, LOG_N, 0, 1, true>();  // 64 KB parked + 64 KB turn: one block per SM
    if constexpr (LOG_N >= 14) run_split<T, 16, LOG_N, 8, 2, true>();  // two 4-warp blocks
  }
  constexpr bool staged = LOG_N >= 13;  // variants of the table's staged, bulk-stored lane-turn kernel
  if constexpr (staged) run<T, 16, LOG_N, 0, 2, 2, true, true>();  // two stages, the turn buffer bulk-stored
  if constexpr (staged) run<T, 16, LOG_N, 0, 2, 2, true>();
  if constexpr (staged) run<T, 16, LOG_N, 0, 2, 2, false, true>();  // lane turn, direct stores (512-byte segments)
  if constexpr (staged) run<T, 16, LOG_N, 0, 1, 2, true, true>();
  if constexpr (LOG_N >= 12 && LOG_N <= 14) run_single_exchange<T, LOG_N, 1>();  // unsplit
  if constexpr (LOG_N >= 12 && LOG_N <= 14) run_single_exchange<T, LOG_N, 1, false, true>();
  if constexpr (LOG_N >= 13) {  // split rows: both halves staged, each half's pipeline reads both
    run_single_exchange<T, LOG_N, 1, true>();
    run_single_exchange<T, LOG_N, 1, true, true>();
  }
  run<T, 8, LOG_N, 16, 0>();
  run<T, 8, LOG_N, 24, 0>();  // 80 registers: 25 warps per SM instead of 21
  if constexpr (LOG_N >= 11) run<T, 8, LOG_N, 16, 0, 1, false, true>();  // the lane turn needs the row's 8 vectors
  run<T, 4, LOG_N, 32, 0>();
  run<T, 8, LOG_N, 0, 0>();
  run<T, 4, LOG_N, 32, 1>();
  run<T, 8, LOG_N, 16, 1>();
  run<T, 8, LOG_N, 16, 2>();
  if constexpr (LOG_N >= 13) {  // 128 values per thread: one corner turn fewer
    run<T, 8, LOG_N, 16, 0, 1, true>();  // bulk stores after direct loads
    run<T, 16, LOG_N, 0, 0>();
    run<T, 16, LOG_N, 0, 1>();
    run<T, 16, LOG_N, 0, 1, 2>();  // the turn in two passes through half the shared memory
    run<T, 16, LOG_N, 0, 2, 2>();
  }
  if constexpr (LOG_N == 12) {  // one warp per row: a lane turn, but no corner turn to pass or bulk-store through
    run<T, 16, LOG_N, 0, 0, 1, false, true>();
    run<T, 16, LOG_N, 0, 1, 1, false, true>();
    run<T, 16, LOG_N, 0, 2, 1, false, true>();
  }
}

template <class T, int LOG_N>
void sweep_wide() {
  fill_input<T>();
  run_table<T, LOG_N>();
  // Variants around the table's configuration: k_cur and occ_cur are its vectors per thread and register
  // cap (at float32 2^15 and float64 2^14, those of the whole-row configuration before the split rows).
  constexpr bool two_pass = sizeof(T) == 4 && LOG_N == 15;
  constexpr int k_cur = two_pass ? 32 : LOG_N == 14 ? 16 : (sizeof(T) == 4 && LOG_N <= 9) ? 4 : 8;
  constexpr int occ_cur = k_cur <= 8 ? 32 : 0;
  // The table's configurations before versions 47 and 50 (split rows, then with the lane turn) and 49
  // (the float32 2^14 lane turn).
  if constexpr (sizeof(T) == 4 && LOG_N == 15) run<T, 32, LOG_N, 0, 1, 2>();
  if constexpr (LOG_N == 14) run<T, 16, LOG_N, 0, 0>();
  if constexpr (LOG_N >= 14) {  // split rows: halves of the 2^(n-1) kernels
    run_split<T, 16, LOG_N, 16, 2, false, true>();  // the lane turn in the corner turn's bytes
    run_split<T, 16, LOG_N, 16, 2>();
    run_split<T, 16, LOG_N, 0, 1>();
    run_split<T, 32, LOG_N, 8, 2>();
    run_split<T, 8, LOG_N, 32, 1>();
  }
  if constexpr (two_pass) {
    run<T, 32, LOG_N, 0, 1, 2, false, true>();
    run<T, 32, LOG_N, 0, 2, 2>();
    run<T, 32, LOG_N, 0, 0>();  // one pass, direct loads
    run<T, 32, LOG_N, 0, 1, 1, true>();  // one pass through a whole-row buffer, which takes the bulk store
    run<T, 16, LOG_N, 0, 0>();
    run<T, 16, LOG_N, 0, 1>();
    run<T, 16, LOG_N, 0, 1, 1, true>();
    run<T, 8, LOG_N, 32, 0>();
  } else {
    if constexpr (LOG_N >= 10) run<T, k_cur, LOG_N, occ_cur, 0, 1, false, true>();
    run<T, k_cur, LOG_N, occ_cur, 1>();
    if constexpr (k_cur == 8) run<T, 16, LOG_N, 0, 0>();
    if constexpr (k_cur != 8) run<T, 8, LOG_N, 32, 0>();
    if constexpr (k_cur == 8 && LOG_N <= 10) run<T, 4, LOG_N, 32, 0>();  // fewer values per thread
    if constexpr (LOG_N >= 14) run<T, 32, LOG_N, 0, 1, 2>();  // one corner turn fewer, in two passes
    if constexpr (LOG_N >= 14) run<T, 16, LOG_N, 0, 0, 1, true>();  // bulk stores
  }
}
const char* only_dtype = nullptr;
int only_n = -1;
template <class T, int LOG_N, class F>
void group(F&& sweep) {
  if (only_dtype && std::strcmp(only_dtype, name<T>()) != 0) return;
  if (only_n >= 0 && only_n != LOG_N) return;
  sweep();
}
#define SWEEP_16BIT(T, n) group<T, n>([] { sweep_16bit<T, n>(); })
#define SWEEP_WIDE(T, n) group<T, n>([] { sweep_wide<T, n>(); })
}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) only_dtype = argv[1];
  if (argc > 2) only_n = std::atoi(argv[2]);
  only_match = std::getenv("FWT_SWEEP_MATCH");
  if (const char* mb = std::getenv("FWT_SWEEP_MB")) {
    const long megabytes = std::atol(mb);
    if (megabytes <= 0) {
      std::fprintf(stderr, "FWT_SWEEP_MB=%s: expected a positive number of megabytes\n", mb);
      return 2;
    }
    tensor_bytes = std::size_t(megabytes) << 20;
  }
  IK_CUDA_CHECK(cudaMalloc(&d_x, tensor_bytes));
  IK_CUDA_CHECK(cudaMalloc(&d_y, tensor_bytes));
  IK_CUDA_CHECK(cudaStreamCreate(&stream));
  // The groups the last table change was decided on; add others as needed (each takes a few seconds).
  SWEEP_16BIT(__half, 10);
  SWEEP_16BIT(__half, 11);
  SWEEP_16BIT(__half, 12);
  SWEEP_16BIT(__half, 13);
  SWEEP_16BIT(__half, 14);
  SWEEP_16BIT(__half, 15);
  SWEEP_WIDE(float, 4);
  SWEEP_WIDE(float, 9);
  SWEEP_WIDE(float, 13);
  SWEEP_WIDE(float, 14);
  SWEEP_WIDE(float, 15);
  SWEEP_WIDE(double, 11);
  SWEEP_WIDE(double, 13);
  SWEEP_WIDE(double, 14);
  IK_CUDA_CHECK(cudaFree(d_x));
  IK_CUDA_CHECK(cudaFree(d_y));
  return 0;
}
