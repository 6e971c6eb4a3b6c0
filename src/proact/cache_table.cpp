// The choice cache as a PROACT dissertation Table 2.2-style markdown table (autotune.hpp).
#include <algorithm>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "scope/results.hpp"
#include "proact/autotune.hpp"

namespace gpsm::proact {

namespace {

std::string cell(std::string s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}

std::string bytes_cell(std::uint64_t b) {
  return b == 0 ? "-" : fmt::format("{} ({} B)", gpsm::format_size(b), b);
}

}  // namespace

std::string render_cache_table(const TuneCache& c) {
  std::vector<const CacheEntry*> rows;
  for (const auto& e : c.entries()) rows.push_back(&e);
  std::stable_sort(rows.begin(), rows.end(), [](const CacheEntry* a, const CacheEntry* b) {
    return std::tie(a->key.machine, a->key.app, a->key.size) < std::tie(b->key.machine, b->key.app, b->key.size);
  });
  std::string t =
      "| machine | app | size | agent | chunk | threads | time | best time | records | why |\n"
      "|---|---|---:|---|---:|---:|---:|---:|---:|---|\n";
  if (rows.empty()) return t + "| (no entries) | | | | | | | | | |\n";
  for (const CacheEntry* e : rows) {
    const TuneChoice& ch = e->choice;
    t += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f} us | {:.1f} us | {} | {} |\n", cell(e->key.machine),
                     cell(e->key.app), bytes_cell(e->key.size), agent_name(ch.agent),
                     chunked(ch.agent) ? bytes_cell(ch.chunk_bytes) : std::string("-"),
                     ch.threads > 0 ? std::to_string(ch.threads) : std::string("-"), ch.time_s * 1e6,
                     ch.best_time_s * 1e6, e->records, cell(ch.why));
  }
  return t;
}

std::string render_cache_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("gpsm: no such cache file " + path);
  const TuneCache c = load_cache(path);
  return fmt::format(
      "## PROACT choices: {}\n\n"
      "The profiler's chosen configuration per (machine, app, size), as in the PROACT dissertation's Table 2.2. "
      "size: the cache key's bytes (synthetic producer: bytes produced per run; bench apps: the bytes of the "
      "arrays the app publishes, docs/proact.md); time: the chosen configuration's median (synthetic: producer "
      "start to every destination holding the data; bench apps: per iteration); best time: the fastest "
      "configuration measured; records: configurations the choice was made from (1: the decomposition fixes the "
      "chunk, nothing was swept).\n\n{}",
      path, render_cache_table(c));
}

}  // namespace gpsm::proact
