// One PE of the CG nvshmem paradigms: cpu_free_std's / cpu_free_pipe's persistent kernel
// (cg_persistent.cu, unchanged: the same block specialization, SpMV layout and arithmetic order,
// so the residual history is the CPU reference's) on this PE's rows, one process per GPU. What
// crosses GPUs lives on NVSHMEM's symmetric heap: the vector the peers push halo entries into
// (Standard: r; Pipelined: both w) and the reduction state (cg_sync.hpp's inboxes). The kernel's
// push table and its CgSync hold the peers' copies as nvshmem_ptr maps them (NVLink / PCIe P2P),
// so each pushed entry is one store into exactly the slot the peer's halo list gives it, and each
// reduction is the inbox exchange of cg_sync.hpp, all on the device: the host only launches the
// kernel and waits, as in the one-process paradigm. Between solves, nvshmem_barrier_all: every PE
// has restored its initial state (and its reduction state) before any PE's first push.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "apps/cg/cg_kernels.hpp"
#include "apps/cg/cg_rank_data.hpp"
#include "apps/cg/cg_sync.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "apps/cg/sell.hpp"
#include "cg_pe.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/settings.hpp"
#include "pe.hpp"

namespace gpsm::nvshmem_worker {

using namespace apps::cg;

namespace {

// The split and start the parent verifies against: the same deterministic code on the same entry.
struct CgProblem {
  Plan plan;
  Start start;
};
CgProblem build(const CgWorkerArgs& a) {
  const MatrixSpec spec = parse_spec(a.matrix);
  const Matrix m = load(spec);  // freed on return: the plan keeps this PE's (and every PE's) rows
  if (m.n < a.ranks) throw gpsm::Error(fmt::format("{} rows cannot be split over {} PEs", m.n, a.ranks));
  const auto parts = spec.balance_nnz ? split_rows_by_nnz(m.row_ptr, a.ranks) : split_rows(m.n, a.ranks);
  CgProblem p;
  p.plan = make_plan(m, parts, parse_spmv_choice(a.spmv.c_str()), parse_value_choice(a.values.c_str()),
                     a.variant, parse_rows_per_thread(a.rows_per_thread.c_str()), parse_index_choice(a.index.c_str()));
  p.start = make_start(m, p.plan, a.variant, spec.tol);
  return p;
}

}  // namespace

CgWorkerResult solve_cg(const CgWorkerArgs& a) {
  const CgProblem pr = build(a);
  const Plan& plan = pr.plan;
  const RankPlan& me = plan.rank[a.rank];
  const bool pipe = a.variant == Variant::pipelined;
  // Every PE allocates the same symmetric sizes: the largest PE's rows + halo slots.
  std::int64_t most = 1;
  for (const RankPlan& q : plan.rank) most = std::max(most, q.local_rows() + q.halo_size());
  const std::size_t vec_bytes = static_cast<std::size_t>(most) * sizeof(double);
  const int nvec = pipe ? 2 : 1;
  start_pe(PeStart{a.rank, a.ranks, a.device, a.uid_file, a.timeout_s},
           nvec * static_cast<std::uint64_t>(vec_bytes) + sizeof(CgSyncState) + 3 * 256);
  auto* state = static_cast<CgSyncState*>(symmetric_alloc(sizeof(CgSyncState), "the reduction state"));
  double* vec[2] = {nullptr, nullptr};
  for (int k = 0; k < nvec; ++k)
    vec[k] = static_cast<double*>(symmetric_alloc(vec_bytes, pipe ? "a w vector" : "the r vector"));

  CgWorkerResult res;
  res.rank = a.rank;
  res.ranks = a.ranks;
  res.device = a.device;
  res.row_begin = me.rows.begin;
  res.rows = me.local_rows();
  {
    Exchanged ext;
    if (pipe) ext.w[0] = vec[0], ext.w[1] = vec[1];
    else ext.r = vec[0];
    CgRankData data(a.device, plan, a.rank, pr.start, a.variant, a.iters, /*poison=*/true, ext);
    // The peers' copies, as this PE stores into them (its own: the symmetric address itself).
    std::vector<double*> base(2 * kMaxRanks, nullptr);
    CgSync sync;
    sync.self = state;
    for (int g = 0; g < a.ranks; ++g) {
      sync.all[g] = static_cast<CgSyncState*>(peer_address(state, a.rank, g));
      for (int par = 0; par < 2; ++par)
        base[par * kMaxRanks + g] = static_cast<double*>(peer_address(vec[pipe ? par : 0], a.rank, g));
    }
    const Pushes push = data.pushes(base, false);
    const int blocks = persistent_blocks(a.device, a.variant, data.matrix());
    sync.rank = a.rank;
    sync.ranks = a.ranks;
    sync.blocks = arriving_blocks(a.variant, blocks);
    sync.wait.timeout_ns = gps::wait_timeout_ns(gps::Settings::from_env().wait_timeout_ms);
    sync.wait.rank = a.rank;  // no host-mapped record: a timed-out wait prints and traps
    const FreeStd fs = pipe ? FreeStd{} : data.free_std(push, sync);
    const FreePipe fp = pipe ? data.free_pipe(push, sync) : FreePipe{};
    cudaStream_t st;
    GPSM_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int k = 0; k < a.warmup + a.reps; ++k) {
      data.init();
      GPSM_CUDA(cudaMemset(state, 0, sizeof(CgSyncState)));
      GPSM_CUDA(cudaDeviceSynchronize());
      // Every PE restored (and done with the previous solve, whose last reduction received every
      // peer's last store into this PE) before any PE's first store of this one.
      nvshmem_barrier_all();
      const auto t0 = std::chrono::steady_clock::now();
      if (!data.done_at_start()) {
        if (pipe) launch_free_pipe(fp, blocks, st);
        else launch_free_std(fs, blocks, st);
      }
      GPSM_CUDA(cudaStreamSynchronize(st));
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::int32_t it = -1;
      GPSM_CUDA(cudaMemcpy(&it, data.iterations(), sizeof(it), cudaMemcpyDeviceToHost));
      if (it < 0 || it > a.iters) throw gpsm::Error(fmt::format("the kernel recorded {} iterations", it));
      if (k >= a.warmup) {
        res.seconds.push_back(sec);
        res.iterations.push_back(it);
        res.last_iterations = it;
      }
    }
    res.rho.resize(static_cast<std::size_t>(res.last_iterations) + 1);
    GPSM_CUDA(cudaMemcpy(res.rho.data(), data.hist(), res.rho.size() * sizeof(double), cudaMemcpyDeviceToHost));
    res.x.resize(static_cast<std::size_t>(res.rows));
    GPSM_CUDA(cudaMemcpy(res.x.data(), data.x(), res.x.size() * sizeof(double), cudaMemcpyDeviceToHost));
    GPSM_CUDA(cudaStreamDestroy(st));
  }
  nvshmem_barrier_all();  // nobody still stores into this PE's heap
  for (int k = nvec - 1; k >= 0; --k) nvshmem_free(vec[k]);
  nvshmem_free(state);
  nvshmem_finalize();
  return res;
}

}  // namespace gpsm::nvshmem_worker
