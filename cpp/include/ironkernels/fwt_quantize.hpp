#pragma once
// Rotate and quantise in one call: r = scale · H · (signs ∘ x) along the last axis (H_N, or the
// block-diagonal H_block), then every group of r quantised with one scale, the way LLM inference
// feeds FP8 / INT / MX / NV block-scaled GEMMs. docs/fwt.md states each format's arithmetic; the
// element encodings are rounded to nearest even with the format's saturation.
#include <cstdint>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

enum class QuantFormat { float8_e4m3fn, float8_e5m2, int8, int4, mxfp4, nvfp4 };

/// Where the scale of row r, group c goes: row-major (…, N/group), or the swizzled tiles block-scaled
/// GEMMs read (cuBLASLt's and CUTLASS's): tiles of 128 rows × 4 groups in row-major tile order, within
/// a tile at (r % 32)·16 + (r / 32 % 4)·4 + c % 4, rows and groups padded with zeros to whole tiles
/// (scales then a flat array of that many entries).
enum class ScaleLayout { row_major, swizzled_128x4 };

struct FwtQuantizeOptions {
  QuantFormat to = QuantFormat::float8_e4m3fn;
  std::int64_t block = 0;  ///< the rotation: H_block on each run of `block` elements of a row; 0: the row
  /// Elements per scale along the row (a divisor of N); 0: the whole row. mxfp4 and nvfp4 fix it
  /// (32 and 16; 0 or that value).
  std::int64_t group = 0;
  bool normalized = true;  ///< the rotation scaled by 1/√(block, or N): orthonormal
  ScaleLayout scale_layout = ScaleLayout::row_major;
  ArrayView signs;         ///< empty, or N values ±1 (int8, host) multiplying x before the rotation
  ArrayView hadamard;      ///< empty, or a caller's m × m base matrix for rotations of m·2^k (FwtOptions::hadamard)
  /// nvfp4: > 0, the rotated tensor's largest magnitude as calibrated beforehand (the tensor scale
  /// 2688 / it; larger values saturate), so that x is read once; 0: this tensor's own (on CUDA a
  /// second read of x).
  double global_amax = 0.0;
};

/// x: (…, N) float16, bfloat16, float32 or float64, C-contiguous, N a length fwt takes (2^k or
/// m·2^k, m = 12, 20, 28 or the order of `hadamard`) or a multiple of `block`. q: (…, N) uint8 codes (float8), int8 (int8), or (…, N/2) uint8
/// pairs (int4, mxfp4, nvfp4: element 2i in the low nibble, 2i + 1 in the high one). scales: (…, N/group)
/// float32 (float8, int8, int4: value ≈ code · scale), uint8 E8M0 (mxfp4, blocks of 32) or uint8
/// E4M3 (nvfp4, blocks of 16); tensor_scale: float32 (1,), nvfp4's decode scale (value ≈ code ·
/// block scale · tensor scale; other formats: an empty view). Host arrays, or CUDA arrays on one
/// device (signs stay on the host; work queued on `stream`). Throws TypeError / ValueError before
/// writing anything.
void fwt_quantize(const ArrayView& x, const ArrayView& q, const ArrayView& scales, const ArrayView& tensor_scale,
                  const FwtQuantizeOptions& options = {}, Stream stream = nullptr);

}  // namespace ironkernels
