#pragma once
// What this build contains, what the machine offers, and the few owning device resources
// (buffers, events) the library and its tools need. Everything is RAII; nothing here synchronizes
// unless its name says so.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

struct BuildInfo {
  std::string version;
  bool cuda = false;          ///< built with the CUDA backend
  std::string cuda_version;   ///< nvcc version used ("" without CUDA)
  std::string cuda_archs;     ///< CMAKE_CUDA_ARCHITECTURES, comma separated
  bool cublas = false;        ///< cuBLAS found at build time
  std::string cpu_isas;       ///< CPU kernel variants compiled in (baseline,avx2,avx512)
  std::string cpu_isa_active; ///< the variant chosen on this machine
};
BuildInfo build_info();

struct CudaDeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0, runtime_version = 0;
};
/// CUDA devices visible to this process; empty without CUDA, driver or GPU (never throws for that).
std::vector<CudaDeviceInfo> cuda_devices();

/// Threads used by CPU kernels across a batch. Default: IRONKERNELS_NUM_THREADS, else all cores.
int cpu_threads();
void set_cpu_threads(int n);

/// Owns device (or host) memory; freed on destruction. Host memory starts on a kHostAlignment
/// boundary (malloc gives 16 bytes, where every 64-byte vector load of the CPU kernels straddles
/// two cache lines).
constexpr std::size_t kHostAlignment = 64;
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::size_t bytes, Device device);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  const Device& device() const { return device_; }

 private:
  void release() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_{};
};

/// Copies `bytes` between host and/or device memory, ordered on `stream` (synchronous for host-to-host).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes,
                Stream stream);
/// Fills `bytes` of device or host memory with the byte `value`.
void fill_bytes(void* dst, Device device, int value, std::size_t bytes, Stream stream);
void synchronize_stream(Stream stream, Device device);

/// A CUDA event for timing work on a stream.
class Event {
 public:
  explicit Event(Device device);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(Stream stream);
  void synchronize();
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const;

 private:
  void* event_ = nullptr;
  Device device_{};
};

/// Makes `device` current for the scope (CUDA devices only) and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ironkernels
