#pragma once
// The remote-access study's plain C++ half (the GPU-SM paper's §4, hypotheses H1-H5): the sweeps
// each test runs, the occupancy set through shared memory, the byte accounting of the timeline,
// and the reduction of the five tests' results to the machine model's RemoteStudy. The kernels
// and the tests that run them are in remote_kernels.cu and bench_remote_*.cu.
#include <cstdint>
#include <string>
#include <vector>

#include "gpsm/remote_study.hpp"
#include "gpsm/topology.hpp"
#include "scope/remote_layout.hpp"
#include "scope/results.hpp"

namespace gpsm::scope::remote {

// Test names (one per hypothesis) and their group.
inline constexpr const char* kGroup = "remote";
inline constexpr const char* kBandwidth = "remote.h1_bandwidth";
inline constexpr const char* kTimeline = "remote.h2_timeline";
inline constexpr const char* kIntensity = "remote.h3_intensity";
inline constexpr const char* kOccupancy = "remote.h4_occupancy";
inline constexpr const char* kCache = "remote.h5_readonly_cache";

const char* to_string(Distribution d);

// ---- the sweeps (quick: the GPU tests' and `--quick`'s short pass) ----

// H1: bytes each GPU reads or writes per launch.
std::uint64_t bandwidth_bytes(bool quick);

// H2-H4: an n x n float matrix in, one out; % of remote accesses per point; FLOPs per datum and
// blocks per SM (occupancy) per series.
struct MixSweep {
  std::uint32_t n = 0;
  std::vector<double> percents;     // ascending, first 0 (the all-local reference)
  std::vector<int> flops;           // even: work() does flops / 2 FMAs
  std::vector<int> blocks_per_sm;   // of kThreads threads; the largest is the SM's full occupancy
};
MixSweep intensity_sweep(bool quick);  // H3 (Fig 7): full occupancy, several FLOPs per datum
MixSweep occupancy_sweep(bool quick);  // H4 (Fig 8): 10 FLOPs per datum, several occupancies

// H2 (Figs 5-6): the paper's configuration, 20 % of reads and 10 % of writes remote, 10 FLOPs.
struct TimelineConfig {
  std::uint32_t n = 0;
  double read_percent = 20, write_percent = 10;
  int flops = 10;
  std::vector<double> fractions;  // of the bytes moved, ascending, last 1
};
TimelineConfig timeline_config(bool quick);

// H5 (Fig 9): n x n threads, each reads word (i mod words) of the structure, 10 FLOPs, writes its
// own output word.
struct CacheSweep {
  std::uint32_t n = 0;
  int flops = 10;
  std::vector<std::uint64_t> structure_bytes;  // powers of two, ascending
  std::vector<int> blocks_per_sm;
};
CacheSweep cache_sweep(bool quick);

// ---- occupancy (the paper lowers it with scratchpad memory each block asks for) ----

// Dynamic shared memory per block that leaves room for at most `blocks` blocks per SM: 0 when the
// threads alone allow no more (blocks >= max_by_threads), else smem_per_sm / blocks minus the
// per-block reservation, capped at max_per_block. Throws std::invalid_argument for blocks < 1.
std::uint64_t smem_for_blocks(int blocks, int max_by_threads, std::uint64_t smem_per_sm,
                              std::uint64_t reserved_per_block, std::uint64_t max_per_block);

// ---- H2: which bytes each block moves, and when the kernel had moved each share of them ----

struct BlockBytes {
  double remote = 0;  // bytes the block loads or stores over the link
  double all = 0;     // every byte it loads or stores
};
// Blocks in launch order (x fastest) of the n x n grid of kBlockX x kBlockY threads.
std::vector<BlockBytes> block_bytes(std::uint32_t n, Distribution d, std::uint32_t read_cut, std::uint32_t write_cut);

// Seconds from the first block's start at which the blocks that had ended had moved each fraction
// of the total (bytes[b] counted when block b ends). Sizes must agree; a fraction in (0, 1].
std::vector<double> fraction_times(const std::vector<unsigned long long>& start_ns,
                                   const std::vector<unsigned long long>& end_ns,
                                   const std::vector<double>& bytes, const std::vector<double>& fractions);

// ---- what the links allow ----

// Per-direction theoretical bandwidth between GPUs a and b from the topology's graph: a direct
// NVLink edge, else both GPUs' NVSwitch edges (the smaller), else both GPUs' PCIe edges (the
// smaller); 0 when the topology gives no estimate.
double link_peak_GBps(const gpsm::topo::Topology& t, int a, int b);

// ---- reduction to the machine model ----

// Median-time slowdown of each point against the series' 0 % point (1.0 for it); empty when the
// series has no 0 % point or its time is not positive.
std::vector<double> slowdowns(const Series& s);

// The largest percent p among `pts` such that every point at or below p is below 1 + tolerance.
double hidden_percent(const std::vector<model::RemoteSlowdownPoint>& pts, double tolerance);

// From st.curves: the H3 hidden shares (the smallest over the FLOPs at the highest occupancy) and
// H4's occupancy_to_hide (derive_study calls it; so does the simulator's prediction).
void summarize_curves(model::RemoteStudy& st);

// The study from the results (tests not ok, or absent, contribute nothing; only verified points
// count). Series params read: H1 "access" (read | write | read+write | copy), "pattern" (one |
// ring), "gpus", "initiator", "target"; H2 "distribution", "traffic" (remote | all),
// "slowdown"; H3/H4 "distribution", "flops_per_datum", "occupancy"; H5 "read" (ldg | ldcg),
// "where" (remote | local), "occupancy".
model::RemoteStudy derive_study(const std::vector<TestResult>& tests, double tolerance = 0.10);

// The terminal table of a study test's slowdowns (H3, H4) or times and ratios (H5); "" for the
// others (their generic table says it all).
std::string render_study_table(const TestResult& t);

}  // namespace gpsm::scope::remote
