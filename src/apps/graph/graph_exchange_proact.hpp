#pragma once
// The graph apps' proact exchange (graph_exchange_proact_cuda.cpp): the replicas are memcpy's,
// but a rank's rows leave in chunks while its kernel still runs. Per rank: counters the kernel's
// blocks bump as they finish rows (ReadyArg), and a copy stream that, behind everything the
// rank's stream waited for before the kernel, waits on each chunk's counter
// (proact::stream_wait_geq: no host round trip) and copies the chunk to every peer. The plan
// (which chunks, contributors, copy order) is graph_proact_plan.hpp's.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/graph/graph_kernels.hpp"
#include "apps/graph/graph_proact_plan.hpp"
#include "apps/graph/vec_layout.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::graph {

class ProactShipper {
 public:
  // rows_per_block: the mapping of the kernel that writes the vector (rows_per_block(lanes)).
  // chunk_request: bytes per chunk, rounded up to whole blocks (0: the default split; the app
  // resolved options and environment already: resolve_chunk). Throws gpsm::Error when a GPU of a
  // multi-GPU context cannot wait on device memory from a stream (no silent fallback to memcpy).
  ProactShipper(gps::Context& ctx, const VecLayout& l, std::int64_t rows_per_block, const std::string& name,
                std::uint64_t chunk_request);
  ~ProactShipper();
  ProactShipper(const ProactShipper&) = delete;
  ProactShipper& operator=(const ProactShipper&) = delete;

  // Rank r's kernel is about to be launched on its stream, after the phase's waits: a new
  // publication; returns the counters its blocks bump (empty where nothing ships).
  ReadyArg before_kernel(int r);
  // After the launch: rank r's chunk copies, from reps[r] to every reps[d] (the buffer's replicas),
  // on the copy stream; the rank's stream then waits for them, so the phase's event covers them.
  void after_kernel(int r, const std::vector<float*>& reps);
  const ChunkSplit& split(int r) const;
  // Rank r's counters (tests: after p publications, p x contributors each); empty where nothing
  // ships. Synchronizes the device.
  std::vector<std::uint32_t> counters(int r) const;

 private:
  struct Rank;
  gps::Context& ctx_;
  std::string name_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace gpsm::apps::graph
