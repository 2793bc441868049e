#pragma once
// Stand-in data for timing INT8 products (their speed depends on the data: an all-zero product draws
// less power): pseudo-random bytes from a hash of each index.
#include <cstdint>

namespace ironkernels::detail {

static __global__ void fill_pseudo_random_kernel(std::int8_t* p, std::int64_t count) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    std::uint32_t h = std::uint32_t(i) * 0x9E3779B1u ^ std::uint32_t(i >> 32);
    h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12;
    p[i] = static_cast<std::int8_t>(h >> 24);
  }
}

}  // namespace ironkernels::detail
