#pragma once
// Device memory ordered on a stream: allocated before the work queued after it, freed after it.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/cuda_check.hpp"

namespace ironkernels::detail {

class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    IK_CUDA_CHECK(cudaMallocAsync(&data_, bytes ? bytes : 1, stream));
  }
  ~StreamWorkspace() { cudaFreeAsync(data_, stream_); }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace ironkernels::detail
