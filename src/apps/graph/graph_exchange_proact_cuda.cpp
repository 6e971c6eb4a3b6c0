#include "apps/graph/graph_exchange_proact.hpp"

#include <cuda_runtime.h>

#include "common/dev_buf.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"
#include "proact/stream_wait.hpp"

namespace gpsm::apps::graph {

struct ProactShipper::Rank {
  int dev = -1;
  ChunkSplit split;
  std::vector<ChunkCopy> copies;     // rank_copies: row order, the order blocks finish
  DevBuf<std::uint32_t> counters;    // one per chunk, zeroed once, never reset (see ready_value)
  std::uint32_t phase = 0;           // publications so far
  // One copy stream per peer (by rank; none for itself): copies to different peers run on
  // different copy engines at once. On one stream, 16 chunks x 3 peers of 64 KiB each took ~6.5 us
  // an operation in a row (4xH200, 8a20d5afb144: pagerank road:1024 proact 484 us, memcpy 65).
  std::vector<cudaStream_t> side;
  std::vector<cudaEvent_t> shipped;
  cudaEvent_t before = nullptr;

  ~Rank() {
    if (dev < 0) return;
    cudaSetDevice(dev);
    for (cudaStream_t x : side)
      if (x != nullptr) cudaStreamDestroy(x);
    for (cudaEvent_t e : shipped)
      if (e != nullptr) cudaEventDestroy(e);
    if (before != nullptr) cudaEventDestroy(before);
  }
};

ProactShipper::ProactShipper(gps::Context& ctx, const VecLayout& l, std::int64_t rows_per_block,
                             const std::string& name, std::uint64_t chunk_request)
    : ctx_(ctx), name_(name) {
  const int n = ctx.size();
  if (n > 1)
    for (int r = 0; r < n; ++r)
      if (const std::string w = proact::stream_wait_unsupported(ctx.device(r)); !w.empty())
        throw Error("gpsm: " + name + ": the proact paradigm ships each chunk of a rank's rows by copy engines "
                    "waiting on ready counters (stream memory operations), unsupported here: " + w);
  for (int r = 0; r < n; ++r) {
    auto k = std::make_unique<Rank>();
    k->dev = ctx.device(r);
    k->split = split_rank(l, r, rows_per_block, chunk_request);
    k->copies = rank_copies(l, r, k->split);
    if (!k->copies.empty()) {
      k->counters.alloc(k->dev, static_cast<std::size_t>(k->split.chunks()));
      GPSM_CUDA(cudaMemset(k->counters.p, 0, k->split.chunks() * sizeof(std::uint32_t)));
      k->side.assign(static_cast<std::size_t>(n), nullptr);
      k->shipped.assign(static_cast<std::size_t>(n), nullptr);
      for (const ChunkCopy& c : k->copies) {
        if (k->side[c.dst] != nullptr) continue;
        GPSM_CUDA(cudaStreamCreateWithFlags(&k->side[c.dst], cudaStreamNonBlocking));
        GPSM_CUDA(cudaEventCreateWithFlags(&k->shipped[c.dst], cudaEventDisableTiming));
      }
      GPSM_CUDA(cudaEventCreateWithFlags(&k->before, cudaEventDisableTiming));
    }
    ranks_.push_back(std::move(k));
  }
}

ProactShipper::~ProactShipper() = default;

const ChunkSplit& ProactShipper::split(int r) const { return ranks_.at(r)->split; }

std::vector<std::uint32_t> ProactShipper::counters(int r) const {
  const Rank& k = *ranks_.at(r);
  if (k.copies.empty()) return {};
  std::vector<std::uint32_t> out(static_cast<std::size_t>(k.split.chunks()));
  GPSM_CUDA(cudaSetDevice(k.dev));
  GPSM_CUDA(cudaDeviceSynchronize());
  GPSM_CUDA(cudaMemcpy(out.data(), k.counters.p, out.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return out;
}

// The event marks the rank's stream after the phase's waits (the other ranks' previous phase:
// the readers of the replicas' rows this rank overwrites), before its kernel.
ReadyArg ProactShipper::before_kernel(int r) {
  Rank& k = *ranks_.at(r);
  if (k.copies.empty()) return {};
  ++k.phase;
  GPSM_CUDA(cudaSetDevice(k.dev));
  GPSM_CUDA(cudaEventRecord(k.before, ctx_.stream(r)));
  ReadyArg a;
  a.counters = k.counters.p;
  a.blocks_per_chunk = k.split.blocks_per_chunk;
  a.rows_per_block = k.split.rows_per_block;
  return a;
}

// Enqueued after the kernel, so a hardware queue shared by both streams never holds the kernel
// behind the waits. Per peer stream, per chunk: one wait, then the copy to that peer.
void ProactShipper::after_kernel(int r, const std::vector<float*>& reps) {
  Rank& k = *ranks_.at(r);
  if (k.copies.empty()) return;
  GPSM_CUDA(cudaSetDevice(k.dev));
  const std::size_t n = k.side.size();
  for (std::size_t d = 0; d < n; ++d)
    if (k.side[d] != nullptr) GPSM_CUDA(cudaStreamWaitEvent(k.side[d], k.before, 0));
  std::vector<std::int64_t> waited(n, -1);
  for (const ChunkCopy& c : k.copies) {
    cudaStream_t s = k.side[c.dst];
    if (c.chunk != waited[c.dst]) {
      proact::stream_wait_geq(s, k.counters.p + c.chunk, ready_value(k.phase, c.contributors),
                                "graph proact: chunk ready");
      waited[c.dst] = c.chunk;
    }
    GPSM_CUDA(cudaMemcpyPeerAsync(reps[c.dst] + c.elem, ctx_.device(c.dst), reps[r] + c.elem, k.dev,
                                  static_cast<std::size_t>(c.elems) * sizeof(float), s));
  }
  for (std::size_t d = 0; d < n; ++d)
    if (k.side[d] != nullptr) {
      GPSM_CUDA(cudaEventRecord(k.shipped[d], k.side[d]));
      GPSM_CUDA(cudaStreamWaitEvent(ctx_.stream(r), k.shipped[d], 0));
    }
}

}  // namespace gpsm::apps::graph
