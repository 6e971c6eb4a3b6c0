#pragma once
// The PROACT profiler's decision (PROACT dissertation §2.3.1, Table 2.2): from recorded sweep
// records (agent x chunk size x transfer threads -> time) pick the configuration to use, preferring
// the simpler mechanism when times are within a noise margin; prune chunk sizes the machine model
// predicts to be initiation- or tail-bound before sweeping; cache the choices in a readable JSON
// file keyed by (machine, app, size). Plain C++.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "gpsm/machine_model.hpp"
#include "proact/agent.hpp"

namespace gpsm::proact {

// One measured configuration: the median end-to-end time of its reps (producer start -> every
// destination holds the data). chunk_bytes and threads are 0 where they do not apply.
struct SweepRecord {
  Agent agent = Agent::memcpy;
  std::uint64_t chunk_bytes = 0;
  int threads = 0;
  double time_s = 0;
};

struct TuneChoice {
  Agent agent = Agent::memcpy;
  std::uint64_t chunk_bytes = 0;
  int threads = 0;
  double time_s = 0;       // the chosen configuration's time
  double best_time_s = 0;  // the fastest record's time (the choice is within margin of it)
  std::string why;         // one line: what won and what it beat
};

// The fastest record, unless a record within (1 + margin) x its time is simpler: then, among the
// records within the margin, the simplest agent (simplicity_rank), then the fewest threads, then
// the largest chunk (fewer initiations), then the fastest. Throws gpsm::Error for no records, a
// record with a non-positive or non-finite time, or a margin outside [0, 1).
TuneChoice choose_config(const std::vector<SweepRecord>& records, double margin = 0.03);

// Chunk sizes worth sweeping on a path with the given transfer-time model (t = c + bytes/bw,
// fitted by gpsm scope, e.g. the ce_peer path gpu0->gpu1): a chunk is dropped as initiation-bound
// when its predicted bandwidth is below min_efficiency x the bandwidth of one transfer of
// total_bytes, and as tail-bound when one chunk alone would take more than max_tail_fraction of
// the whole transfer. Never returns an empty list: if every size is dropped, the one with the best
// predicted efficiency among those not tail-bound (or the smallest) is kept.
struct ChunkPrune {
  std::vector<std::uint64_t> kept;
  struct Dropped {
    std::uint64_t chunk_bytes;
    std::string reason;
  };
  std::vector<Dropped> dropped;
};
ChunkPrune prune_chunk_sizes(const model::PiecewiseFit& path, std::uint64_t total_bytes,
                             const std::vector<std::uint64_t>& chunks, double min_efficiency = 0.25,
                             double max_tail_fraction = 0.25);
// The model's copy-engine path between two GPUs ("gpu<src>" -> "gpu<dst>", mechanism ce_peer,
// uni), or nullptr when the model lacks it.
const model::PathModel* peer_path(const model::MachineModel& m, int src, int dst);

// ---- the choice cache (schema "gpsm.proact_cache", version 1; docs/proact.md) ----
struct CacheKey {
  std::string machine;  // e.g. GPSM_DEVICE_KIND or the host name + GPU name
  std::string app;      // e.g. "synthetic:one_to_all:4gpu"
  std::uint64_t size = 0;
  bool operator==(const CacheKey& o) const { return machine == o.machine && app == o.app && size == o.size; }
};
// The cache key's machine: GPSM_DEVICE_KIND when set (device_kind non-null and non-empty: the
// lent machine's kind, the same on every host of that kind), else "<hostname>:<GPU name>".
// `gpsm proact --tune` and `gpsm bench --proact-tune / --proact-cache` both key by it.
std::string machine_key(const char* device_kind, const std::string& hostname, const std::string& gpu_name);
struct CacheEntry {
  CacheKey key;
  TuneChoice choice;
  double margin = 0;
  int records = 0;  // sweep records the choice was made from
  std::string created, gpsm_commit;
};
class TuneCache {
 public:
  const CacheEntry* find(const CacheKey& k) const;
  void put(const CacheEntry& e);  // replaces the entry with the same key
  const std::vector<CacheEntry>& entries() const { return entries_; }

 private:
  std::vector<CacheEntry> entries_;
};

inline constexpr const char* kCacheSchema = "gpsm.proact_cache";
inline constexpr int kCacheSchemaVersion = 1;
nlohmann::json to_json(const TuneCache& c);
// Validates schema, version and every field; throws gpsm::Error naming the field path.
TuneCache cache_from_json(const nlohmann::json& j);
// A missing file is an empty cache; an unreadable or invalid one throws gpsm::Error naming it.
TuneCache load_cache(const std::string& path);
void save_cache(const TuneCache& c, const std::string& path);  // throws gpsm::Error when it cannot write

// The cache as a markdown table in the style of the PROACT dissertation's Table 2.2 (the profiler's
// chosen configuration per app): machine, app, size, agent, chunk, threads, time, best time,
// records, why; rows sorted by machine, app, size; '-' where a field does not apply
// (cache_table.cpp).
std::string render_cache_table(const TuneCache& c);
// `gpsm report` / `gpsm proact --show-cache`: the table of the cache file `path` under a heading
// naming it, with what the columns mean. Throws gpsm::Error as load_cache does (a missing file too).
std::string render_cache_file(const std::string& path);

}  // namespace gpsm::proact
