// The runtime: build facts, CUDA devices, host/device buffers, copies and fills, events, the CPU ISA
// choice (IRONKERNELS_CPU_ISA) and the development overrides (IRONKERNELS_DEV_OVERRIDES).
#include "ironkernels/core/runtime.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "build_config.hpp"
#include "core/cpu_isa.hpp"
#include "core/dev_overrides.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/version.hpp"

#if IRONKERNELS_WITH_CUDA
#include "core/cuda_check.hpp"
#endif

namespace ironkernels {

namespace {
void* allocate_host(std::size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; free() releases it.
  void* p = std::aligned_alloc(kHostAlignment, (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
  if (!p) raise<Error>("host allocation of ", bytes, " bytes failed");
  return p;
}
}  // namespace

namespace detail {

const char* dev_override(const char* name) {
  static const bool enabled = [] {
    const char* env = std::getenv("IRONKERNELS_DEV_OVERRIDES");
    return env && std::strcmp(env, "1") == 0;
  }();
  return enabled ? std::getenv(name) : nullptr;
}

int dev_override_int(const char* name, int fallback) {
  const char* value = dev_override(name);
  return value ? std::atoi(value) : fallback;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return "avx512";
    case CpuIsa::avx2: return "avx2";
    default: return "baseline";
  }
}

CpuIsa active_cpu_isa() {
  static const CpuIsa isa = [] {
    CpuIsa best = CpuIsa::baseline;
#if defined(IRONKERNELS_X86_ISAS)
    __builtin_cpu_init();
    // The avx2 variant also converts float16 with F16C (-mf16c).
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
      best = CpuIsa::avx2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
      best = CpuIsa::avx512;
#endif
    if (const char* env = std::getenv("IRONKERNELS_CPU_ISA")) {
      CpuIsa want = best;
      if (!std::strcmp(env, "baseline")) want = CpuIsa::baseline;
      else if (!std::strcmp(env, "avx2")) want = CpuIsa::avx2;
      else if (!std::strcmp(env, "avx512")) want = CpuIsa::avx512;
      if (static_cast<int>(want) <= static_cast<int>(best)) best = want;  // never above the machine
    }
    return best;
  }();
  return isa;
}
}  // namespace detail

BuildInfo build_info() {
  BuildInfo b;
  b.version = IRONKERNELS_VERSION_STRING;
  b.cuda = IRONKERNELS_WITH_CUDA != 0;
  b.cuda_version = IRONKERNELS_BUILD_CUDA_VERSION;
  b.cuda_archs = IRONKERNELS_BUILD_CUDA_ARCHS;
  b.cublas = IRONKERNELS_HAVE_CUBLAS != 0;
  b.cpu_isas = IRONKERNELS_BUILD_CPU_ISAS;
  b.cpu_isa_active = detail::cpu_isa_name(detail::active_cpu_isa());
  return b;
}

#if IRONKERNELS_WITH_CUDA

std::vector<CudaDeviceInfo> cuda_devices() {
  std::vector<CudaDeviceInfo> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no GPU: not an error for a query
    return out;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    IK_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
    CudaDeviceInfo d;
    d.id = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.total_memory = p.totalGlobalMem;
    d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    d.driver_version = driver;
    d.runtime_version = runtime;
    out.push_back(std::move(d));
  }
  return out;
}

namespace {
// Why `device` cannot be used, from the device count: no driver, no GPU, or an id past the last one.
// Only asked once entering a device has failed, so the hot path pays nothing for it.
[[noreturn]] void raise_unusable_device(const Device& device, cudaError_t entered) {
  cudaGetLastError();
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (counted != cudaSuccess || count == 0)
    raise<ValueError>(device_name(device), " was asked for, but this process sees no usable CUDA device (",
                      cudaGetErrorName(counted != cudaSuccess ? counted : entered), ": ",
                      cudaGetErrorString(counted != cudaSuccess ? counted : entered),
                      "); accepted here: host arrays and device='cpu'. `ironkernels info` lists the GPUs it finds");
  if (device.id < 0 || device.id >= count)
    raise<ValueError>(device_name(device), " does not exist; this process sees ", count, " CUDA device",
                      count == 1 ? "" : "s", " (cuda:0 … cuda:", count - 1, ")");
  raise<CudaError>("entering ", device_name(device), " failed: ", cudaGetErrorName(entered), " (",
                   cudaGetErrorString(entered), ")");
}
}  // namespace

DeviceGuard::DeviceGuard(Device device) {
  if (device.type != DeviceType::cuda) return;
  if (const cudaError_t err = cudaGetDevice(&previous_); err != cudaSuccess) raise_unusable_device(device, err);
  if (previous_ != device.id) {
    if (const cudaError_t err = cudaSetDevice(device.id); err != cudaSuccess) raise_unusable_device(device, err);
  } else {
    previous_ = -1;
  }
}
DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Buffer::Buffer(std::size_t bytes, Device device) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  if (device.type == DeviceType::cuda) {
    DeviceGuard guard(device);
    IK_CUDA_CHECK(cudaMalloc(&data_, bytes));
  } else {
    data_ = allocate_host(bytes);
  }
}

void Buffer::release() noexcept {
  if (!data_) return;
  if (device_.type == DeviceType::cuda) {
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device_.id);
    cudaFree(data_);
    cudaSetDevice(prev);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes,
                Stream stream) {
  if (bytes == 0) return;
  if (dst_device.type == DeviceType::cpu && src_device.type == DeviceType::cpu) {
    std::memcpy(dst, src, bytes);
    return;
  }
  DeviceGuard guard(dst_device.type == DeviceType::cuda ? dst_device : src_device);
  IK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}

void fill_bytes(void* dst, Device device, int value, std::size_t bytes, Stream stream) {
  if (device.type == DeviceType::cpu) {
    std::memset(dst, value, bytes);
    return;
  }
  DeviceGuard guard(device);
  IK_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
}

void synchronize_stream(Stream stream, Device device) {
  if (device.type != DeviceType::cuda) return;
  DeviceGuard guard(device);
  IK_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

Event::Event(Device device) : device_(device) {
  if (device.type != DeviceType::cuda) raise<ValueError>("Event: device must be a CUDA device, got ", device_name(device));
  DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  IK_CUDA_CHECK(cudaEventCreate(&e));
  event_ = e;
}
Event::~Event() {
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}
void Event::record(Stream stream) {
  DeviceGuard guard(device_);
  IK_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)));
}
void Event::synchronize() { IK_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_))); }
float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  IK_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.event_),
                                     static_cast<cudaEvent_t>(event_)));
  return ms;
}

#else  // CPU-only build

namespace {
[[noreturn]] void no_cuda(const char* what) {
  raise<UnsupportedError>(what, ": this copy of ironkernels was built without CUDA");
}
}  // namespace

std::vector<CudaDeviceInfo> cuda_devices() { return {}; }
DeviceGuard::DeviceGuard(Device device) {
  if (device.type == DeviceType::cuda) no_cuda("DeviceGuard");
}
DeviceGuard::~DeviceGuard() = default;

Buffer::Buffer(std::size_t bytes, Device device) : bytes_(bytes), device_(device) {
  if (device.type == DeviceType::cuda) no_cuda("Buffer");
  if (bytes == 0) return;
  data_ = allocate_host(bytes);
}
void Buffer::release() noexcept {
  std::free(data_);
  data_ = nullptr;
}
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes,
                Stream) {
  if (dst_device.type != DeviceType::cpu || src_device.type != DeviceType::cpu) no_cuda("copy_bytes");
  if (bytes) std::memcpy(dst, src, bytes);
}
void fill_bytes(void* dst, Device device, int value, std::size_t bytes, Stream) {
  if (device.type != DeviceType::cpu) no_cuda("fill_bytes");
  std::memset(dst, value, bytes);
}
void synchronize_stream(Stream, Device device) {
  if (device.type == DeviceType::cuda) no_cuda("synchronize_stream");
}
Event::Event(Device) { no_cuda("Event"); }
Event::~Event() = default;
void Event::record(Stream) { no_cuda("Event"); }
void Event::synchronize() { no_cuda("Event"); }
float Event::elapsed_ms_since(const Event&) const { no_cuda("Event"); }

#endif

Buffer::~Buffer() { release(); }
Buffer::Buffer(Buffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), device_(o.device_) {}
Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = o.device_;
  }
  return *this;
}

}  // namespace ironkernels
