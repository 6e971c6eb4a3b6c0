#pragma once
// What `gpsm scope`'s remote-access study (tests remote.h1_* .. remote.h5_*; the GPU-SM paper's
// hypotheses H1-H5, Figs 4-9) found, as the machine model keeps it: remote load and store
// bandwidth alone and concurrent, how fast a kernel asks for remote data when its remote accesses
// are batched or spread, which share of remote accesses a kernel hides, at which occupancy, and
// what the read-only cache does for a small remotely read structure. JSON: the machine model's
// optional "remote_study" object (docs/machine-model.md).
//
// Plain C++. Units: GB/s = 1e9 B/s, percents 0..100, occupancy 0..1, times in microseconds.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

namespace gpsm::model {

// One measured (distribution, FLOPs per datum, occupancy) curve of H3 or H4: kernel slowdown
// (time / time with no remote access, same series) per % of remote accesses.
struct RemoteSlowdownPoint {
  double remote_percent = 0;
  double slowdown = 1;  // 1.0: as fast as all-local
};
struct RemoteSlowdownCurve {
  std::string test;          // "remote.h3_intensity" or "remote.h4_occupancy"
  std::string distribution;  // "batch" (remote rows: first blocks) or "spread" (remote columns)
  double flops_per_datum = 0;
  double occupancy = 0;      // resident threads per SM / the SM's maximum, as CUDA's calculator gave it
  std::vector<RemoteSlowdownPoint> points;  // ascending remote_percent, the first at 0 % (slowdown 1)
  // The largest measured % whose slowdown, and that of every smaller measured %, is below
  // 1 + RemoteStudy::tolerance: the share of remote accesses this kernel hides.
  double hidden_percent = 0;
};

// H5: one structure size and occupancy, the kernel's time with each way of reading it.
struct RemoteCachePoint {
  double structure_bytes = 0;
  double occupancy = 0;
  double remote_ldg_us = 0;   // remote, through the read-only cache (__ldg / const __restrict__)
  double remote_ldcg_us = 0;  // remote, L1 bypassed (__ldcg): no read-only cache
  double local_ldg_us = 0;    // the structure in the GPU's own memory (0: not measured)
};

struct RemoteStudy {
  std::string src, dst;        // the GPU running the kernels, the GPU whose memory they reach
  double tolerance = 0.10;     // the slowdown counted as hidden (GPU-SM: < 10 %)
  // H1 (Fig 4), 0 where not measured: one GPU alone, its loads, its stores, both at once, and
  // cudaMemcpyPeer of the same bytes; `gpus` GPUs at once, each reaching its ring neighbour.
  double read_GBps = 0, write_GBps = 0, read_write_GBps = 0, copy_GBps = 0;
  int concurrent_gpus = 0;
  double concurrent_read_GBps = 0, concurrent_write_GBps = 0;
  // H2 (Fig 6): the fastest rate at which the kernel moved remote bytes (over one tenth of them),
  // remote rows (batch) vs remote columns (spread); and the kernel's slowdown in each.
  double batch_peak_remote_GBps = 0, spread_peak_remote_GBps = 0;
  double batch_timeline_slowdown = 0, spread_timeline_slowdown = 0;
  // H3 (Fig 7): the smallest hidden_percent over the FLOPs per datum measured at full occupancy.
  double batch_hidden_percent = 0, spread_hidden_percent = 0;
  // H4 (Fig 8): the lowest occupancy whose spread curve hides as much as the highest occupancy
  // measured (0: none hides anything).
  double occupancy_to_hide = 0;
  // H5 (Fig 9): at the highest occupancy, ldcg time / ldg time for the smallest structure, and the
  // largest structure for which the read-only cache still saves >= tolerance (0: never).
  double cache_speedup_smallest = 0;
  double cache_helps_up_to_bytes = 0;
  std::vector<RemoteSlowdownCurve> curves;
  std::vector<RemoteCachePoint> cache;

  bool empty() const;  // nothing measured: the model writes no "remote_study"
};

nlohmann::json to_json(const RemoteStudy& s);
// Validates every field; throws std::runtime_error "machine model: remote_study.<path>: <why>".
RemoteStudy remote_study_from_json(const nlohmann::json& j);

}  // namespace gpsm::model
