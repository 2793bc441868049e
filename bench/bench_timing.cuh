#pragma once
// Timing for the CUDA bench tools: the median of launches timed one at a time by CUDA events on the
// default stream (each synchronised), after warm-up launches.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/cuda_check.hpp"

template <class F>
double median_launch_ms(F&& launch, int warmups, int reps) {
  cudaEvent_t start, stop;
  IK_CUDA_CHECK(cudaEventCreate(&start));
  IK_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) launch();
  std::vector<float> times;
  for (int i = 0; i < reps; ++i) {
    IK_CUDA_CHECK(cudaEventRecord(start));
    launch();
    IK_CUDA_CHECK(cudaEventRecord(stop));
    IK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    IK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  IK_CUDA_CHECK(cudaEventDestroy(start));
  IK_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
