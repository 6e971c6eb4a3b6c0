#pragma once
// The parent side of CG's nvshmem paradigms (nvshmem_std, nvshmem_pipe): one gpsm-nvshmem-cg
// worker per GPU (tools/gpsm-nvshmem-cg: the persistent kernel of cpu_free_std / cpu_free_pipe in
// one NVSHMEM PE per process), launched and waited for by the stencils' launcher
// (apps/stencil/nvshmem_launch.hpp), their results gathered into the run's Solve for the app to
// verify against the CPU reference. Plain C++, no CUDA: this process holds no context for it.
#include "apps/cg/cg_worker_proto.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "apps/harness/app.hpp"

namespace gpsm::apps::cg {

// req.warmup + req.reps solves of req.problem.graph (the --size entry, which every worker builds
// again) split as `plan` (the parent's: each worker's rows are checked against it), variant v,
// at most `iters` iterations; GPSM_CG_SPMV, GPSM_CG_VALUES, GPSM_CG_INDEX and GPSM_CG_ROWS_PER_THREAD
// are passed on. Throws gpsm::Error when a worker is
// missing, cannot start, fails, hangs past the timeout or reports results that do not fit.
CgGathered run_cg_nvshmem(const RunRequest& req, const Plan& plan, Variant v, int iters);

// The worker's arguments for rank r (what run_cg_nvshmem passes; tested on the CPU).
CgWorkerArgs cg_worker_args(const RunRequest& req, Variant v, int iters, int r, const char* spmv_env,
                            const char* values_env = nullptr, const char* rows_env = nullptr,
                            const char* index_env = nullptr);

}  // namespace gpsm::apps::cg
