// The process-wide cache of CUDA gemm plans (gemm_plan): the most recently used first.
#include <list>
#include <mutex>
#include <tuple>
#include <utility>

#include "ironkernels/gemm.hpp"

namespace ironkernels {
namespace {

using PlanKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, bool, int, GemmScaling, bool, double, int,
                           GemmBackend, GemmColumns>;

struct PlanCache {
  std::mutex mutex;
  std::list<std::pair<PlanKey, std::shared_ptr<GemmPlan>>> plans;  // most recently used first
};

// Never destroyed: plans would otherwise be destroyed after the CUDA runtime's own teardown.
PlanCache& plan_cache() {
  static PlanCache* cache = new PlanCache;
  return *cache;
}

}  // namespace

std::shared_ptr<GemmPlan> gemm_plan(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
                                    GemmContract contract, Device device, GemmBackend backend, GemmColumns columns) {
  const bool certified = contract.certified();
  const PlanKey key{m, n, k, trans_a, trans_b, certified ? 0 : contract.moduli,
                    certified ? GemmScaling::norm : contract.scaling, contract.native, contract.native ? 0.0 : contract.rtol,
                    device.id, backend, columns};
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto it = cache.plans.begin(); it != cache.plans.end(); ++it)
    if (it->first == key) {
      cache.plans.splice(cache.plans.begin(), cache.plans, it);
      return it->second;
    }
  // Constructed under the lock: a second caller of the same key waits for this plan, not a copy.
  auto plan = std::make_shared<GemmPlan>(m, n, k, trans_a, trans_b, contract, device, backend, columns);
  cache.plans.emplace_front(key, plan);
  if (cache.plans.size() > std::size_t(kGemmPlanCacheSize)) cache.plans.pop_back();
  return plan;
}

void gemm_plan_cache_clear() {
  PlanCache& cache = plan_cache();
  std::list<std::pair<PlanKey, std::shared_ptr<GemmPlan>>> dropped;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    dropped.swap(cache.plans);
  }  // destroyed outside the lock
}

}  // namespace ironkernels
