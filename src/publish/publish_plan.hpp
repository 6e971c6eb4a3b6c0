#pragma once
// Host side of `gpsm publish` (the GPS publish microbenchmark), plain C++ so CPU tests reach it:
// the store patterns (which words each GPU stores, in which order), the expected-value model the
// replicas are checked against, the per-rep seeds, and the result table / JSON assembly.
//
// Every GPU stores its own disjoint share of one replicated uint32 array that all GPUs subscribe
// to, so each store must reach the N-1 other replicas:
//   coalesced  GPU r stores the contiguous block [r*share, (r+1)*share), share = words / N;
//              a warp stores one 128-byte line.
//   strided    one word per 128-byte line: GPU r stores word line*32 + r of every line (GPUs
//              interleave inside each line: false sharing must be safe).
//   random     words are partitioned by owner = hash(word, seed) % N; GPU r stores `stores`
//              distinct words it owns, chosen and ordered pseudo-randomly (a seeded list).
// Value model: before a (pattern, mode) run every replica holds pattern_word(w, init_seed); rep k
// stores pattern_word(w, seed_k) into every stored word, so afterwards word w must read
// pattern_word(w, seed_k) if some GPU stores it (in `local`, only if this GPU stores it) and
// pattern_word(w, init_seed) otherwise. Seeds differ from rep to rep, so stale data cannot pass.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpsm/gps/config.hpp"
#include "common/pattern.hpp"

namespace gpsm::scope {
struct TestResult;
}
namespace gpsm::topo {
struct Topology;
}

namespace gpsm::bench {

enum class Pattern : std::uint8_t { coalesced, strided, random };
// The four gps::PublishMode values measured, plus `local`: the same kernel storing into a plain
// per-device buffer with no publishing (the no-communication bound). `decoupled` first learns each
// chunk's store count from two untimed reps under tracking (every GPU also reads every page then,
// so every GPU stays subscribed to every page), as a user's iterative kernel would.
enum class BenchMode : std::uint8_t { inline_store, combine, bulk, decoupled, local };

const char* pattern_name(Pattern p);  // "coalesced" | "strided" | "random"
const char* test_name(Pattern p);     // "publish_coalesced" | "publish_strided" | "publish_random"
const char* mode_name(BenchMode m);   // "inline" | "combine" | "bulk" | "decoupled" | "local"
inline bool publishes(BenchMode m) { return m != BenchMode::local; }
gps::PublishMode to_publish_mode(BenchMode m);  // throws std::invalid_argument for local

// Comma-separated names or "all" (also "strided-4B", "random-4B"); throws std::invalid_argument
// naming the bad one. Duplicates collapse; the order is always the canonical one (for modes:
// inline first, the reference of the "vs inline" ratio).
std::vector<Pattern> parse_patterns(const std::string& s);
std::vector<BenchMode> parse_modes(const std::string& s);

// What `gpsm publish` was asked to run.
struct PublishConfig {
  std::vector<int> devices;            // CUDA ordinals; rank r is devices[r]
  std::uint64_t bytes = 256ull << 20;  // array size
  std::uint64_t random_stores = 0;     // stores per GPU for `random`; 0: words / N / 4
  int reps = 7;
  int warmup = 2;
  std::uint32_t seed = 1;
  std::uint64_t bulk_max_copies = 250000;  // skip bulk where one fence would issue more copies; 0: no limit
  std::vector<Pattern> patterns;
  std::vector<BenchMode> modes;
  std::function<void(const std::string&)> progress;  // short status lines (may be empty)
};
constexpr int kMinReps = 5;
// Throw std::invalid_argument with one clear line. validate_options needs no GPU: size not a
// multiple of 128 bytes, below 4 KiB or 16 GiB and up (the GPS array limit); reps < 5; warmup < 0;
// no pattern or mode. validate_config adds the devices (2 to gps::kMaxDevices) and the random
// stores per GPU (at most half of the words / N a GPU owns).
void validate_options(const PublishConfig& c);
void validate_config(const PublishConfig& c);
std::uint64_t default_random_stores(std::uint64_t words, int gpus);  // words / gpus / 4 (>= 1)

// index(k) = base + k * stride: coalesced (stride 1) and strided (stride 32) without a list, so
// the kernel reads no index memory. Shared by the kernel and the host model.
struct AffineIndex {
  std::uint64_t base = 0, stride = 1;
  GPSM_HD std::uint64_t operator()(std::uint64_t k) const { return base + k * stride; }
};

struct PatternPlan {
  Pattern pattern = Pattern::coalesced;
  int gpus = 0;
  std::uint64_t words = 0;
  std::vector<std::uint64_t> count;              // stores per GPU (every rep)
  std::vector<AffineIndex> affine;               // coalesced, strided: per GPU
  std::vector<std::vector<std::uint64_t>> list;  // random: per GPU, word indices in store order

  std::uint64_t index(int rank, std::uint64_t k) const;  // the k-th word GPU `rank` stores
  std::uint64_t total_stores() const;
  // Bytes each rep must deliver to other replicas: stores x 4 B x (N - 1).
  std::uint64_t useful_bytes() const { return total_stores() * 4u * static_cast<std::uint64_t>(gpus - 1); }
};

// Owner of `word` among `gpus` for the random pattern.
int random_owner(std::uint64_t word, int gpus, std::uint32_t seed);
// Throws std::invalid_argument when random_stores exceeds the words some GPU owns.
PatternPlan make_plan(Pattern p, int gpus, std::uint64_t words, std::uint64_t random_stores, std::uint32_t seed);

// One bit per word (u32 per 32 words): words GPU `rank` stores, or that any GPU stores (rank -1).
// The layout of the runtime's dirty bitmap (one u32 per line).
std::vector<std::uint32_t> stored_bitmap(const PatternPlan& plan, int rank);

// Maximal runs of set bits (across u32 boundaries).
std::uint64_t count_runs(const std::vector<std::uint32_t>& bits);
// Copy-engine copies (cudaMemcpyPeerAsync, issued from the host) the bulk mode makes at one
// fence: gps::plan_bulk copies each maximal run of a source's dirty words to each other
// subscriber, so with every GPU subscribed to every page: sum over GPUs of runs x (N-1).
// Scattered stores make one copy per word: strided over 256 MiB on 4 GPUs is 24M copies a fence.
std::uint64_t bulk_copies_per_fence(const PatternPlan& plan);

GPSM_HD bool bit_set(const std::uint32_t* bits, std::uint64_t w) { return ((bits[w >> 5] >> (w & 31u)) & 1u) != 0u; }
GPSM_HD std::uint32_t expected_word(std::uint64_t w, const std::uint32_t* bits, std::uint32_t seed,
                                    std::uint32_t init_seed) {
  return gpsm::pattern_word(w, bit_set(bits, w) ? seed : init_seed);
}

// Seeds: the initial fill of a pattern's runs, and one per rep (warm-ups, timed reps, the
// counting rep) of a (pattern, mode) run; each differs from the one before it and from the init.
std::uint32_t initial_seed(std::uint32_t run_seed, Pattern p);
std::vector<std::uint32_t> rep_seeds(std::uint32_t run_seed, Pattern p, BenchMode m, int count);
std::vector<std::uint32_t> initial_array(std::uint64_t words, std::uint32_t init_seed);

struct Mismatch {
  std::uint64_t count = 0;
  std::uint64_t first = 0;  // first wrong word (valid when count > 0)
  std::uint32_t got = 0, want = 0;
};
Mismatch check_words(const std::uint32_t* data, std::uint64_t words, const std::uint32_t* bits, std::uint32_t seed,
                     std::uint32_t init_seed);

// ---- results ------------------------------------------------------------------------------

struct LinkCount {
  bool counted = false;  // false for local (nothing published) or when the counting rep failed
  std::uint64_t useful_bytes = 0, link_bytes = 0, messages = 0, fence_rounds = 0;  // runtime's LinkStats
};

// One (pattern, mode) measurement.
struct ModeResult {
  Pattern pattern = Pattern::coalesced;
  BenchMode mode = BenchMode::inline_store;
  std::vector<int> devices;
  std::uint64_t array_bytes = 0;
  std::vector<std::uint64_t> stores_per_gpu;
  std::uint64_t useful_bytes = 0;  // per rep: stores x 4 x (N-1)
  std::vector<double> time_s;      // raw per-rep seconds (launch -> fence returned); empty when failed
  bool verified = false;           // every rep passed the device check and the last the full check
  std::string failure;             // non-empty: what went wrong (times dropped)
  std::string skipped;             // non-empty: not run, and why (bulk over --bulk-max-copies)
  LinkCount link;                  // from the extra untimed counting rep
  int reps_checked = 0;            // reps that passed verification (warm-ups and counting rep included)
  std::vector<std::uint64_t> learned_chunks;  // decoupled: per GPU, chunks its stores complete (Array::learned_chunks)

  bool ok() const { return failure.empty() && skipped.empty() && verified && !time_s.empty(); }
  bool failed() const { return skipped.empty() && !ok(); }
  std::uint64_t total_stores() const;
};

double median_s(const ModeResult& r);       // NaN unless ok()
double goodput_gbps(const ModeResult& r);   // useful bytes / median time / 1e9; NaN unless ok()
// This mode's goodput over inline's for the same pattern in `all` (NaN if either is missing or failed).
double vs_inline(const std::vector<ModeResult>& all, const ModeResult& r);

// One gpsm.results test per pattern (publish_coalesced, ...), a series per mode; a pattern with a
// failed mode is a failed test (no figures), like `gpsm scope`; skipped modes have no series (a
// pattern whose every mode was skipped is waived).
std::vector<gpsm::scope::TestResult> to_test_results(const std::vector<ModeResult>& all);
// Terminal tables, one per pattern.
std::string render_table(const std::vector<ModeResult>& all);

struct PublishMeta {
  std::string command, created, device_kind, hostname, cpu_model;
  int logical_cpus = 0;
  double duration_s = 0;
};
// The gpsm.results v1 document with tool "publish" (docs/results-schema.md, "gpsm publish"):
// to_test_results(all), each test with the modes skipped in it ("skipped": [{mode, reason}]).
nlohmann::json publish_document(const PublishMeta& meta, const PublishConfig& cfg, const gpsm::topo::Topology& topo,
                                const std::vector<ModeResult>& all);

}  // namespace gpsm::bench
