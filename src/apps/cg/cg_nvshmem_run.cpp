#include "apps/cg/cg_nvshmem_run.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "apps/stencil/nvshmem_launch.hpp"

namespace gpsm::apps::cg {

namespace {
// An environment choice as the worker takes it: "" for automatic (unset or "auto").
std::string chosen(const char* env) { return env != nullptr && std::string(env) != "auto" ? env : ""; }
}  // namespace

CgWorkerArgs cg_worker_args(const RunRequest& req, Variant v, int iters, int r, const char* spmv_env,
                            const char* values_env, const char* rows_env, const char* index_env) {
  CgWorkerArgs a;
  a.variant = v;
  a.matrix = req.problem.graph;
  a.spmv = chosen(spmv_env);
  a.values = chosen(values_env);
  a.index = chosen(index_env);
  a.rows_per_thread = chosen(rows_env);
  a.iters = iters;
  a.rank = r;
  a.ranks = static_cast<int>(req.devices.size());
  a.device = req.devices.at(static_cast<std::size_t>(r));
  a.warmup = req.warmup;
  a.reps = req.reps;
  return a;
}

CgGathered run_cg_nvshmem(const RunRequest& req, const Plan& plan, Variant v, int iters) {
  const char* spmv = std::getenv("GPSM_CG_SPMV");
  const char* values = std::getenv("GPSM_CG_VALUES");
  const char* rows = std::getenv("GPSM_CG_ROWS_PER_THREAD");
  const char* index = std::getenv("GPSM_CG_INDEX");
  std::vector<CgWorkerResult> results;
  jacobi::run_nvshmem_workers(
      jacobi::kNvshmemCgWorkerName, req.devices,
      [&](int r, const std::string& uid, const std::string& out, int timeout) {
        CgWorkerArgs a = cg_worker_args(req, v, iters, r, spmv, values, rows, index);
        a.uid_file = uid;
        a.out_file = out;
        a.timeout_s = timeout;
        return to_args(a);
      },
      [&](int, const std::string& out) { results.push_back(read_cg_result(out)); }, req.progress);
  return gather_cg_results(results, plan, iters, req.reps);
}

}  // namespace gpsm::apps::cg
