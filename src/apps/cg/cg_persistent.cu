// The CPU-free CG kernels (cpu_free_std, cpu_free_pipe, infinite): one persistent cooperative
// kernel per GPU runs every iteration; halos are pushed by the blocks that compute them, into
// the peers' memory; the reductions and the barrier across GPUs are cg_sync.hpp's. The structure
// is the thesis' Listing 3.1 ("GPU-Centric Communication Schemes: When CPUs Take a Back Seat",
// ch. 3): the time loop on the GPU, a block specialized for the reduction while the others run
// SpMV, device-side synchronization within and across GPUs. Chunks go to blocks round-robin:
// claiming them from a counter would put an atomic round trip per chunk on the critical path.
#include <algorithm>
#include <string>
#include <type_traits>

#include "apps/cg/cg_device.cuh"
#include "apps/cg/cg_kernels.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

// Standard CG. Per iteration k: phase 2k, SpMV (q = A p_k, p_k formed on the fly, and the halo
// slots' p_k) with the (p, q) partials -> reduction 2k; phase 2k + 1, x and r updates with the
// (r, r) partials and r's halo pushes -> reduction 2k + 1, which also orders the pushes before the
// next SpMV reads them. Nothing overlaps a reduction here, so its communication block is the
// GPU's last block to arrive, and every block computes.
// Resident blocks per SM asked of ptxas for the Standard kernel. Rows of fewer than 8 nonzeros
// (the sliced SpMV's batch of kL <= 4 entries): 4, i.e. at most 64 registers. Without a minimum,
// ptxas gave it 74 (3 blocks: a quarter fewer warps to hide the SpMV's and the update's memory
// latency); at 64 it spills only scalars refilled between the phases (sm_90 SASS), none in the
// loads' batches. Wider rows: 3, what ptxas chose without a minimum (72-80 registers); capped at
// 64 their batches would spill, and a minimum of 1 let ptxas take 142-153 registers (1 block).
template <int kL>
constexpr int free_std_min_blocks() { return kL <= 4 ? 4 : 3; }

// kKeepQ (FreeStd::q_slots > 0, q_storage.hpp): q kept in the block's shared memory between the
// phases. A template argument, not a run-time flag: as a flag its slot arithmetic made the default
// (table values, 32-bit columns, kL = 4) kernel spill 8/28 bytes where it spilled none (ptxas).
template <int kL, class V, class Ix, bool kKeepQ>
__global__ void __launch_bounds__(kThreads, free_std_min_blocks<kL>()) free_std_kernel(FreeStd f) {
  extern __shared__ double sq[];
  __shared__ double vals[4];
  const DevMatrix a = f.a;
  const CgSync sync = f.sync;
  const std::int64_t items = std_spmv_items(a), chunk = chunk_rows(a.rows_per_thread);
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  double rho = f.rho0, beta = 0.0, alpha = 0.0;
  std::uint64_t seq = 0;
  int par = 0;
  for (int k = 0;; ++k) {
    par = k & 1;
    // x_k = x_{k-1} + alpha_{k-1} p_{k-1} here, where the SpMV reads p_{k-1} anyway (k > 0).
    // With q kept (kKeepQ) the block's j-th chunk stages q in slot j, which the update phase
    // reads: both phases take the block's chunks in the same order.
    for (std::int64_t it = blockIdx.x, j = 0; it < items; it += gridDim.x, ++j) {
      if (it < a.chunks)
        std_spmv_step<kL, V, Ix>(a, f.v, par, beta, it, f.part[0], kKeepQ ? sq + j * chunk : sq, k > 0, alpha, kKeepQ);
      else
        std_halo_step(a, f.v, par, beta, it - a.chunks);
    }
    if (sync.arrive(seq, false)) sync.send(seq, f.part[0], a.chunks, 1);
    sync.receive(seq, 1, vals);
    ++seq;
    const double pq = vals[0];
    if (pq == 0.0) {  // x already holds x_k
      if (lead) *f.iterations = k;
      return;
    }
    alpha = cg_ratio(rho, pq);
    bool pushed = false;
    for (std::int64_t c = blockIdx.x, j = 0; c < a.chunks; c += gridDim.x, ++j)
      pushed = std_update_step(a, f.v, par, alpha, c, f.part[1], f.push, false, kKeepQ ? sq + j * chunk : nullptr) || pushed;
    if (sync.arrive(seq, pushed)) sync.send(seq, f.part[1], a.chunks, 1);
    sync.receive(seq, 1, vals);
    ++seq;
    const double rr = vals[0];
    const bool stop = cg_done(rr, f.threshold) || k + 1 == f.iters;
    if (lead) {
      f.hist[k + 1] = rr;
      if (stop) *f.iterations = k + 1;
    }
    if (stop) break;
    beta = cg_ratio(rr, rho);
    rho = rr;
  }
  // The last x update: x_{k+1} = x_k + alpha_k p_k (this block's chunks).
  for (std::int64_t c = blockIdx.x; c < a.chunks; c += gridDim.x) std_x_step(a, f.v, 1 - par, alpha, c);
}

// Pipelined CG. Block 0 is the communication block: per iteration i it waits until every other
// block has finished iteration i - 1 (their (r, r), (w, r) partials and w pushes done) and sends
// the GPU's sums of reduction i to every GPU's inbox; it computes nothing else. The other blocks
// wait for the same count (this GPU's w is then complete), run n = A w on their chunks that read
// no halo entry while block 0 talks to the peers, stage up to pipe_slots chunks of n in shared
// memory, receive the sums from their GPU's inbox (before any chunk that reads halo entries, and
// before the updates; every block derives gamma, delta and the stop decision from them alike), and
// update their chunks: z, s, p, x, r, the next w, its partials and its pushes.
// CgSync::receive out of line: the Pipelined kernel takes it at three places, and inlined there
// it raised the kernel from 78 to 106 registers (kL = 4; 3 to 2 blocks per SM, 23 % slower on one
// H200). Called, and with 3 blocks per SM asked (what ptxas gave every kL before), 80 registers,
// spills only for kL = 8 (as before). The Standard kernel keeps it inline (two places, no cost).
__device__ __noinline__ void receive_call(const CgSync& sync, std::uint64_t s, int count, double* out) {
  sync.receive(s, count, out);
}

template <int kL, class V, class Ix>
__global__ void __launch_bounds__(kThreads, 3) free_pipe_kernel(FreePipe f) {
  extern __shared__ double slots[];
  __shared__ double vals[4];
  const DevMatrix a = f.a;
  const CgSync sync = f.sync;  // sync.blocks: the computing blocks, gridDim.x - 1
  const int nslots = pipe_slots(a.rows_per_thread);
  const std::int64_t chunk = chunk_rows(a.rows_per_thread);
  const std::int32_t first_boundary = a.chunks - f.boundary_chunks;
  const bool comm = blockIdx.x == 0;
  const std::int32_t worker = static_cast<std::int32_t>(blockIdx.x) - 1, workers = static_cast<std::int32_t>(gridDim.x) - 1;
  double gamma_prev = 0.0, alpha_prev = 0.0;
  bool pushed = false;
  for (int i = 0;; ++i) {
    const std::uint64_t seq = static_cast<std::uint64_t>(i);
    bool have = false;  // this block holds reduction i's sums
    if (!comm) sync.arrive(seq, pushed);
    sync.wait_local(seq);
    if (comm) sync.send(seq, f.part, a.chunks, 2);
    pushed = false;
    double alpha = 0, beta = 0;
    bool stop = false;
    auto learn = [&]() {  // block-collective; every block decides alike from the same sums
      if (!have) receive_call(sync, seq, 2, vals);
      have = true;
      stop = i == f.iters || cg_done(vals[0], f.threshold);
      if (!stop) stop = !pipe_scalars(i, vals[0], vals[1], gamma_prev, alpha_prev, alpha, beta);
    };
    if (comm) {
      learn();
      if (threadIdx.x == 0) {
        f.hist[i] = vals[0];
        if (stop) *f.iterations = i;
      }
    }
    const double* w = pick(f.v.w, i & 1);
    // This block's chunks: order[worker], order[worker + workers], ... (interior ones first).
    for (std::int32_t idx = worker; !comm && idx < a.chunks;) {
      std::int32_t mine[4];
      int got = 0;
      for (; got < nslots && idx < a.chunks; ++got, idx += workers) {
        if (idx >= first_boundary && !have) learn();  // the peers' halo entries have landed
        if (stop) break;
        const std::int32_t c = f.order[idx];
        double* slot = slots + got * chunk;
        pipe_spmv_step<kL, V, Ix>(a, w, c, [&](std::int64_t off, double v) { slot[off] = v; });
        mine[got] = c;
      }
      if (!have) learn();
      if (stop) break;
      __syncthreads();  // the lanes' n values in shared memory
      for (int g = 0; g < got; ++g) {
        const double* slot = slots + g * chunk;
        const std::int64_t first = static_cast<std::int64_t>(mine[g]) * chunk;
        pushed = pipe_update_step(a, f.v, i & 1, alpha, beta, mine[g],
                                  [&](std::int64_t row) { return slot[row - first]; }, f.part, f.push) ||
                 pushed;
      }
      __syncthreads();  // before the slots are refilled
    }
    learn();
    if (stop) break;
    gamma_prev = vals[0];
    alpha_prev = alpha;
  }
}

}  // namespace

const void* free_kernel(bool pipelined, int lanes, EntryKind kind, bool keep_q) {
  const void* k = nullptr;
  with_shape(lanes, kind, [&](auto l, auto v, auto ix) {
    constexpr int kL = decltype(l)::value;
    using V = decltype(v);
    using Ix = decltype(ix);
    k = pipelined ? reinterpret_cast<const void*>(free_pipe_kernel<kL, V, Ix>)
        : keep_q  ? reinterpret_cast<const void*>(free_std_kernel<kL, V, Ix, true>)
                  : reinterpret_cast<const void*>(free_std_kernel<kL, V, Ix, false>);
  });
  return k;
}

std::size_t free_smem(bool pipelined, int rows_per_thread, int q_slots) {
  const std::size_t chunk = static_cast<std::size_t>(chunk_rows(rows_per_thread)) * sizeof(double);
  return pipelined ? chunk * static_cast<std::size_t>(pipe_slots(rows_per_thread))
                   : chunk * static_cast<std::size_t>(std::max(1, q_slots));
}

int free_blocks(int device, bool pipelined, int lanes, EntryKind kind, int rows_per_thread, std::int64_t items) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaSetDevice(device));
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, free_kernel(pipelined, lanes, kind), kThreads,
                                                          free_smem(pipelined, rows_per_thread)));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw gpsm::Error("gpsm: cg: the persistent kernel does not fit on an SM of device " + std::to_string(device));
  // Pipelined: one communication block besides the computing ones.
  const std::int64_t want = std::max<std::int64_t>(1, items) + (pipelined ? 1 : 0);
  return static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(per_sm) * sms, want));
}

int std_q_slots(int device, const void* kernel, QStorage q, std::int64_t chunks, int blocks, int rows_per_thread) {
  if (q != QStorage::shared || blocks < 1) return 0;
  GPSM_CUDA(cudaSetDevice(device));
  cudaFuncAttributes attr{};
  GPSM_CUDA(cudaFuncGetAttributes(&attr, kernel));
  constexpr std::size_t kNoOptIn = 48u << 10;  // a block's shared memory without cudaFuncAttributeMaxDynamicSharedMemorySize
  const std::size_t room = attr.sharedSizeBytes < kNoOptIn ? kNoOptIn - attr.sharedSizeBytes : 0;
  const int slots = q_slots_for(q, chunks, blocks, chunk_rows(rows_per_thread), room);
  if (slots == 0) return 0;
  // Only if every block stays resident with the larger allocation (the launch is cooperative).
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, free_smem(false, rows_per_thread, slots)));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return static_cast<std::int64_t>(per_sm) * sms >= blocks ? slots : 0;
}

void launch_free_std(const FreeStd& f, int blocks, cudaStream_t st) {
  FreeStd arg = f;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(free_kernel(false, f.a.lanes, f.a.kind(), f.q_slots > 0), dim3(static_cast<unsigned>(blocks)),
                                        dim3(kThreads), args, free_smem(false, f.a.rows_per_thread, f.q_slots), st));
}

void launch_free_pipe(const FreePipe& f, int blocks, cudaStream_t st) {
  FreePipe arg = f;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(free_kernel(true, f.a.lanes, f.a.kind()), dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                                        args, free_smem(true, f.a.rows_per_thread), st));
}

}  // namespace gpsm::apps::cg
