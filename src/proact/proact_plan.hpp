#pragma once
// `gpsm proact`: the synthetic-producer benchmark's configuration, results, derived figures
// (speedup over memcpy, overlap fraction, tracking slowdown), terminal table and results
// document (schema gpsm.results, tool "proact"; docs/results-schema.md). Plain C++: the GPU run
// is in engine_cuda.cpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "gpsm/topology.hpp"
#include "scope/results_file.hpp"
#include "scope/stats.hpp"
#include "proact/agent.hpp"
#include "proact/autotune.hpp"

namespace gpsm::proact {

enum class Pattern {
  one_to_all,  // rank 0 produces the whole array; ranks 1..N-1 receive it
  all_to_all,  // rank r produces slice r of N; every other rank receives it
};
const char* pattern_name(Pattern p);
Pattern parse_pattern(const std::string& s);  // "one_to_all" | "all_to_all"; throws gpsm::Error

// Bytes one producer block writes (PROACT dissertation §2.5.1).
inline constexpr std::uint64_t kBlockBytes = 4096;

struct ProactConfig {
  std::vector<int> devices;  // CUDA ordinals, rank order
  std::uint64_t bytes = 256ull << 20;
  Pattern pattern = Pattern::one_to_all;
  std::vector<Agent> agents;
  std::vector<std::uint64_t> chunks;  // chunk sizes of the chunked agents
  std::vector<int> threads;           // transfer threads of persistent / device_launch
  int reps = 5, warmup = 1;
  std::uint32_t seed = 1;
  std::uint32_t work = 0;             // compute iterations per word; 0: calibrated so compute ~= ratio x memcpy
  double compute_ratio = 1.0;         // calibration target: producer time / transfer time
  int ce_streams = 4;                 // copy_engine: streams per destination
  std::uint64_t ce_max_ops = 1024;    // copy_engine: most operations enqueued on one stream
  bool allow_ce_proxy = true;         // copy_engine: host proxy where stream memory ops are unsupported
  bool force_ce_proxy = false;        // copy_engine: the host proxy even where stream waits work
  std::uint64_t wait_timeout_ms = 10000;
  std::function<void(const std::string&)> progress;
};

// Throws gpsm::Error naming the bad setting and what to use instead.
void validate(const ProactConfig& c);
// "4K..16M" (powers of two, inclusive) or a comma list "64K,1M"; throws gpsm::Error whose
// message starts with `option` (the command and option the list came from).
std::vector<std::uint64_t> parse_chunk_list(const std::string& s, const std::string& option = "gpsm proact: --chunks");
// "256,1024"; throws gpsm::Error naming `what`.
std::vector<int> parse_int_list(const std::string& s, const char* what);
// The bytes rank r produces and their offset in the array.
struct Slice {
  std::uint64_t offset = 0, bytes = 0;
};
std::vector<Slice> producer_slices(const ProactConfig& c);  // one per rank; bytes 0: not a producer
// Bytes each rep must deliver: sum over producers of slice x destinations.
std::uint64_t useful_bytes(const ProactConfig& c);
// copy_engine operations on one stream for a chunk size (wait + copy per chunk).
std::uint64_t ce_ops_per_stream(const ProactConfig& c, std::uint64_t chunk_bytes);

// One configuration's reps (timed ones only; every rep, warm-ups included, was verified).
struct ConfigResult {
  Agent agent = Agent::memcpy;
  std::uint64_t chunk_bytes = 0;
  int threads = 0;
  std::string status = "ok";  // ok | skipped | failed
  std::string reason;         // why skipped / failed
  std::string mechanism;      // how it ran, e.g. "stream_wait_value" or "host_proxy" for copy_engine
  std::vector<double> total_s;  // producer start -> last chunk in every destination
  std::vector<double> tail_s;   // producer end -> last chunk delivered
  int reps_verified = 0;
};

struct Baselines {
  std::uint32_t work = 0;          // compute iterations per word used
  std::vector<double> compute_s;   // producer alone, no tracking, no transfers
  std::vector<double> transfer_s;  // the copies alone (cudaMemcpyPeerAsync of every slice to every destination)
  // producer with readiness counters (no agent, no transfers), per chunk size
  std::vector<std::pair<std::uint64_t, std::vector<double>>> tracked_s;
};

struct ProactRun {
  ProactConfig cfg;
  Baselines base;
  std::vector<ConfigResult> results;  // memcpy first (always run: the reference of every speedup)
  std::string ce_support;             // what the copy-engine check found
};

// Derived figures from medians of the same run; NaN where an input is missing.
double median_of(const std::vector<double>& v);
double speedup_over_memcpy(const ProactRun& r, const ConfigResult& c);
double overlap_fraction(const ProactRun& r, const ConfigResult& c);  // 1 - (total - compute) / transfer_alone
double tracking_slowdown(const ProactRun& r, std::uint64_t chunk_bytes);  // tracked / compute - 1

std::vector<SweepRecord> sweep_records(const ProactRun& r);  // ok results only
std::string render_table(const ProactRun& r);

using ProactMeta = scope::RunMeta;  // the results file's header fields (command, created, host, ...)
nlohmann::json proact_document(const ProactMeta& meta, const ProactRun& run, const topo::Topology& topo);

}  // namespace gpsm::proact
