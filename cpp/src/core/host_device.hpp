#pragma once
// IRONKERNELS_HD marks arithmetic that the CPU reference and the CUDA kernels share, so that both
// compute it the same way: inline on the host, forced inline on the device.
#if defined(__CUDACC__)
#define IRONKERNELS_HD __host__ __device__ __forceinline__
#else
#define IRONKERNELS_HD inline
#endif
