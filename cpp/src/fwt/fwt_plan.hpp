#pragma once
// A validated FWT call, reduced to what the kernels need: lines of 2^log_n elements, x_axis_stride
// (y_axis_stride) elements apart along the transformed axis, whose starts follow a collapsed batch of
// at most kFwtBatchCapacity dimensions (outer to inner). Complex arrays arrive as their real view
// (a trailing dimension of 2, the real and imaginary parts); integers as their unsigned type
// (two's-complement wrapping).
#include <cstdint>
#include <memory>
#include <vector>

#include "ironkernels/core/array.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels::detail {

constexpr int kFwtMaxBatchDims = 8;    // that a caller's array may leave after collapsing
constexpr int kFwtBatchCapacity = 12;  // the passes of a long transform add dimensions of their own

/// A caller's H_m (FwtOptions::hadamard), row-major ±1, shared by the plans of one call.
using FactorMatrix = std::shared_ptr<const std::vector<std::int8_t>>;

struct FwtPlan {
  const void* x = nullptr;
  void* y = nullptr;
  DType dtype = DType::float32;  // the element type transformed: float16/bfloat16/float32/float64/int32/int64
  Device device{};
  int log_n = 0;                 // N = factor · 2^log_n
  int factor = 1;                // 1, or 12, 20, 28, or a caller's m: H_N = H_factor ⊗ H_{2^log_n}
  /// The caller's H_factor (row-major ±1; its transpose for an inverse); null: the built-in one.
  FactorMatrix factor_matrix;
  std::int64_t x_axis_stride = 1, y_axis_stride = 1;  // elements
  std::int64_t rows = 0;                              // lines
  int batch_ndim = 0;
  std::int64_t batch_shape[kFwtBatchCapacity] = {};
  std::int64_t x_stride[kFwtBatchCapacity] = {};  // elements
  std::int64_t y_stride[kFwtBatchCapacity] = {};
  double scale = 1.0;          // floating types
  std::int64_t int_scale = 1;  // integer types (wrapping product)
  int skip_low_bits = 0;       // CUDA rows only: H_{N/2^s} ⊗ I_{2^s}, the lowest s bits untransformed
  FwtOrder order = FwtOrder::natural;

  bool is_integer() const { return dtype == DType::int32 || dtype == DType::int64; }
  bool scaled() const { return is_integer() ? int_scale != 1 : scale != 1.0; }
  bool unit_axis_stride() const { return x_axis_stride == 1 && y_axis_stride == 1; }

  /// Element offsets of line r in x and y.
  void row_offsets(std::int64_t r, std::int64_t& xo, std::int64_t& yo) const {
    xo = yo = 0;
    for (int d = batch_ndim - 1; d >= 0; --d) {
      const std::int64_t i = r % batch_shape[d];
      r /= batch_shape[d];
      xo += i * x_stride[d];
      yo += i * y_stride[d];
    }
  }
};

/// A caller's H_m checked (a square int8 host matrix of ±1, H·Hᵀ = m·I, m <= kFwtMaxUserFactor;
/// ValueError naming `op`'s hadamard), row-major, transposed on request; null for an empty view.
FactorMatrix checked_factor_matrix(const ArrayView& h, bool transpose, const char* op);

/// A caller's signs checked (N int8 values ±1 in host memory, any stride; ValueError naming `op`'s
/// signs), as a contiguous copy.
std::vector<std::int8_t> checked_signs(const ArrayView& signs, std::int64_t n, const char* op);

/// p in place on its output: y read as the input too.
inline FwtPlan in_place_on_y(FwtPlan p) {
  p.x = p.y;
  p.x_axis_stride = p.y_axis_stride;
  for (int d = 0; d < p.batch_ndim; ++d) p.x_stride[d] = p.y_stride[d];
  return p;
}

/// Drops size-1 dimensions of p's batch and merges neighbours that are contiguous in both x and y.
void collapse_batch(FwtPlan& p);

void fwt_cpu(const FwtPlan& plan);
/// y = D ∘ x along the lines of `lines` (n elements each, D the n signs ±1 in host memory): floating
/// values' sign bits flipped, integers negated (wrapping); float16/bfloat16 exactly.
void fwt_signs_cpu(const FwtPlan& lines, std::int64_t n, const std::int8_t* signs);
#if IRONKERNELS_WITH_CUDA
void fwt_cuda(const FwtPlan& plan, Stream stream);  // cuda/fwt/fwt_cuda.cu
void fwt_signs_cuda(const FwtPlan& lines, std::int64_t n, const std::int8_t* signs, Stream stream);  // cuda/fwt/fwt_rotation_passes.cu
#endif

}  // namespace ironkernels::detail
