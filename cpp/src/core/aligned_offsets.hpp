#pragma once
// Consecutive 256-byte aligned regions of one device buffer (a workspace, a prepared operand, a
// drop-in call's allocation): take() gives the next region's offset, `total` the bytes taken so far.
#include <cstddef>

namespace ironkernels::detail {

struct AlignedOffsets {
  std::size_t total = 0;
  std::size_t take(std::size_t bytes) {
    const std::size_t at = total;
    total += (bytes + 255) / 256 * 256;
    return at;
  }
};

}  // namespace ironkernels::detail
