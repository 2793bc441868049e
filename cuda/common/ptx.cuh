#pragma once
// Typed wrappers of the PTX instructions the kernels use, one per instruction (or per fixed short
// sequence), each named for what it does and behind the architecture guard it needs. Shared by
// fwt, gemm and the bench tools. Off their architecture the wrappers of required instructions trap
// (callers select them at compile time and never reach them there); fences and waits become no-ops.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace ironkernels::detail::ptx {

// ------------------------------------------------------------------ addresses
/// The 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/// mapa: the generic address of the same shared-memory location in CTA `rank` of this cluster (sm_90+).
template <class C>
__device__ __forceinline__ C* map_cluster_rank(C* p, int rank) {
  std::uint64_t out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(reinterpret_cast<std::uint64_t>(p)), "r"(rank));
  return reinterpret_cast<C*>(out);
}
#endif

// ------------------------------------------------------------------ cluster barrier (sm_90+)
/// barrier.cluster.arrive.release.aligned: this thread's earlier memory accesses (shared memory of
/// the cluster's CTAs included) are ordered before the barrier completes.
__device__ __forceinline__ void cluster_arrive_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
/// barrier.cluster.wait.acquire.aligned: until every thread of the cluster has arrived; their
/// released accesses are visible after it.
__device__ __forceinline__ void cluster_wait_acquire() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
/// Both: a cluster-wide barrier with release/acquire ordering.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive_release();
  cluster_wait_acquire();
}

/// bar.sync id, threads: a barrier of `threads` threads (whole warps) on named barrier `id` (1 … 15;
/// 0 is __syncthreads'), for a subset of the block.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH__)
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#endif
}

/// %globaltimer: nanoseconds of the GPU's global timer.
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// ------------------------------------------------------------------ float min/max (sm_80+)
/// max.NaN.f32: the larger of a and b, NaN if either is NaN (fmaxf drops a NaN operand).
__device__ __forceinline__ float max_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float out;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(out) : "f"(a), "f"(b));
  return out;
#else
  return (a != a || b != b) ? __int_as_float(0x7fffffff) : fmaxf(a, b);
#endif
}

// ------------------------------------------------------------------ mma.sync (sm_80+)
/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: D = A·B + C, A 16×16 (row-major fragment: four
/// registers of two T), B 16×8 (column-major fragment), C and D float32. T is __half or __nv_bfloat16.
template <class T>
__device__ __forceinline__ void mma_m16n8k16_f32(float (&d)[4], const uint4& a, const std::uint32_t (&b)[2],
                                                 const float (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define IK_PTX_MMA_M16N8K16(AB)                                                                                    \
  asm("mma.sync.aligned.m16n8k16.row.col.f32." AB "." AB ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "           \
      "{%10,%11,%12,%13};"                                                                                         \
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                                             \
      : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]))
  if constexpr (std::is_same_v<T, __half>) IK_PTX_MMA_M16N8K16("f16");
  else IK_PTX_MMA_M16N8K16("bf16");
#undef IK_PTX_MMA_M16N8K16
#else
  __trap();
#endif
}

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: D = A·B + C. The registers hold float32 bit
/// patterns; the tensor cores read their top 19 bits (tf32) and ignore the 13 low mantissa bits.
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const float (&a)[4], const std::uint32_t (&b)[2],
                                                 const float (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#else
  __trap();
#endif
}

/// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: D = A·B + C in exact INT32 arithmetic (wrapping),
/// A 16×32 INT8 (row-major fragment: four registers of four values), B 32×8 (column-major: two).
__device__ __forceinline__ void mma_m16n8k32_s8(std::int32_t (&d)[4], const std::uint32_t (&a)[4],
                                                const std::uint32_t (&b)[2], const std::int32_t (&c)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#else
  __trap();
#endif
}

// ------------------------------------------------------------------ ldmatrix (sm_75+)
/// ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8×8 matrices of 16-bit elements (8 rows of 16 bytes
/// each) from shared memory; lanes 8i … 8i + 7 give the row addresses of matrix i, and lane t receives
/// in register i the 4 bytes (t % 4)·4 … of row t / 4 of matrix i.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&d)[4], const void* row) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(shared_address(row)));
#else
  __trap();
#endif
}

/// The same from a 32-bit shared-memory address (kernels that keep their addresses in that form).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&d)[4], unsigned row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(row_address));
#else
  __trap();
#endif
}

// ------------------------------------------------------------------ cp.async (sm_80+)
/// cp.async.cg.shared.global, 16 bytes, past L1; `valid == false` writes zeros and reads nothing.
/// Below sm_80 a plain copy.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(dst)), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
#else
  *static_cast<uint4*>(dst) = valid ? *static_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
}
/// cp.async.cg.shared.global, 16 bytes of which the first `bytes` (0 … 16) are read and the rest
/// written as zeros. Below sm_80 a plain copy.
__device__ __forceinline__ void cp_async_16_prefix(void* dst, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(dst)), "l"(src), "r"(bytes)
               : "memory");
#else
  for (int i = 0; i < 16; ++i) static_cast<unsigned char*>(dst)[i] = i < bytes ? static_cast<const unsigned char*>(src)[i] : 0;
#endif
}
/// The same to a 32-bit shared-memory address (sm_80+ only).
__device__ __forceinline__ void cp_async_16_prefix(unsigned dst_address, const void* src, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst_address), "l"(src), "r"(bytes) : "memory");
#else
  __trap();
#endif
}
/// cp.async.commit_group.
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
/// cp.async.wait_group PENDING: all but the newest PENDING commit groups have landed.
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

// ------------------------------------------------------------------ bulk copies (TMA engine, sm_90+)
/// fence.proxy.async.shared::cta: this thread's shared-memory writes become visible to the async proxy
/// (bulk copies).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
/// createpolicy.fractional.L2::evict_first.b64 with fraction 1: a cache policy for L2 hints.
__device__ __forceinline__ std::uint64_t create_policy_evict_first() {
  std::uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}
/// cp.async.bulk.global.shared::cta.bulk_group: `bytes` (a multiple of 16, both addresses 16-byte
/// aligned) from shared to global memory.
__device__ __forceinline__ void cp_async_bulk_shared_to_global(void* dst, const void* src, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(shared_address(src)),
               "r"(bytes) : "memory");
#else
  __trap();
#endif
}
/// The same with an L2 cache-policy hint (.L2::cache_hint).
__device__ __forceinline__ void cp_async_bulk_shared_to_global(void* dst, const void* src, unsigned bytes,
                                                               std::uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(dst),
               "r"(shared_address(src)), "r"(bytes), "l"(policy) : "memory");
#else
  __trap();
#endif
}
/// cp.async.bulk.commit_group.
__device__ __forceinline__ void cp_async_bulk_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
/// cp.async.bulk.wait_group.read 0: this thread's committed bulk copies have read their shared memory.
__device__ __forceinline__ void cp_async_bulk_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
}
/// cp.async.bulk.wait_group 0: this thread's committed bulk copies have completed.
__device__ __forceinline__ void cp_async_bulk_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}
/// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: `bytes` from global to shared
/// memory, completing as transaction bytes on the mbarrier `bar`.
__device__ __forceinline__ void cp_async_bulk_global_to_shared(void* dst, const void* src, unsigned bytes,
                                                               unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(dst)),
               "l"(src), "r"(bytes), "r"(shared_address(bar)) : "memory");
#else
  __trap();
#endif
}

// ------------------------------------------------------------------ mbarrier (sm_90+)
/// mbarrier.init.shared::cta.b64 with `count` expected arrivals.
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
#else
  __trap();
#endif
}
/// fence.mbarrier_init.release.cluster: initialised mbarriers become visible to the cluster (and the
/// async proxy).
__device__ __forceinline__ void fence_mbarrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
/// mbarrier.arrive.shared::cta.b64.
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
#else
  __trap();
#endif
}
/// mbarrier.arrive.expect_tx.shared::cta.b64: arrives and expects `bytes` of transactions.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}
/// mbarrier.try_wait.parity.shared::cta.b64 in a loop: until the phase of parity `parity` completes.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned long long* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred done;\n wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}" ::"r"(shared_address(bar)),
      "r"(parity) : "memory");
#else
  __trap();
#endif
}

// ------------------------------------------------------------------ tensor copies, wgmma, registers (sm_90a)
// The wgmma and setmaxnreg instructions exist only in sm_90a code (the arch-specific feature set).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define IK_PTX_SM90A 1
#endif

/// cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes: the box of the
/// 3-dimensional tensor map `map` (a __grid_constant__ kernel parameter) at coordinates (c0 innermost,
/// c1, c2) into shared memory at `dst`, completing as transaction bytes on `bar`; positions outside the
/// tensor read as zero.
__device__ __forceinline__ void tma_load_3d(void* dst, const void* map, int c0, int c1, int c2,
                                            unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(shared_address(bar))
      : "memory");
#else
  __trap();
#endif
}
/// The same from a 4-dimensional tensor map, at coordinates (c0 innermost, c1, c2, c3).
__device__ __forceinline__ void tma_load_4d(void* dst, const void* map, int c0, int c1, int c2, int c3,
                                            unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(
          shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(shared_address(bar))
      : "memory");
#else
  __trap();
#endif
}
/// prefetch.tensormap: the tensor map `map` (a kernel parameter) into the descriptor cache.
__device__ __forceinline__ void prefetch_tensor_map(const void* map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#endif
}

/// setmaxnreg.dec.sync.aligned.u32 / setmaxnreg.inc.sync.aligned.u32: this warpgroup's registers per
/// thread lowered / raised to COUNT (a multiple of 8 in 24 … 256).
template <int COUNT>
__device__ __forceinline__ void setmaxnreg_dec() {
#ifdef IK_PTX_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(COUNT));
#endif
}
template <int COUNT>
__device__ __forceinline__ void setmaxnreg_inc() {
#ifdef IK_PTX_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(COUNT));
#endif
}

/// wgmma.fence.sync.aligned: register accesses before it are ordered before the warpgroup's next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#ifdef IK_PTX_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
/// wgmma.commit_group.sync.aligned: the warpgroup's uncommitted wgmma become one group.
__device__ __forceinline__ void wgmma_commit_group() {
#ifdef IK_PTX_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
/// wgmma.wait_group.sync.aligned PENDING: all but the newest PENDING groups have completed.
template <int PENDING>
__device__ __forceinline__ void wgmma_wait_group() {
#ifdef IK_PTX_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
#endif
}
/// wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8: d (64 × 256 INT32, 128 registers per thread)
/// += A (64 × 32 INT8, K-major, shared-memory descriptor a) · B (32 × 256, K-major, descriptor b),
/// exact. Asynchronous: d is defined after wgmma_wait_group.
__device__ __forceinline__ void wgmma_m64n256k32_s8(std::int32_t (&d)[128], std::uint64_t a, std::uint64_t b) {
#ifdef IK_PTX_SM90A
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
      "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, "
      "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, "
      "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, "
      "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
      "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127 "
      "}, %128, %129, 1;"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]),
        "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]),
        "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]),
        "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]),
        "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]),
        "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]),
        "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),
        "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]),
        "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]),
        "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]),
        "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]),
        "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]),
        "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]),
        "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
        "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]),
        "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]),
        "+r"(d[126]), "+r"(d[127])
      : "l"(a), "l"(b));
#else
  __trap();
#endif
}

}  // namespace ironkernels::detail::ptx
