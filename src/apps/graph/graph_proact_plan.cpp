#include "apps/graph/graph_proact_plan.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "proact/chunk_math.hpp"

namespace gpsm::apps::graph {

std::int64_t rows_per_block(int lanes) {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0)
    throw Error(fmt::format("gpsm: {} lanes per row: a power of two from 1 to 32 expected", lanes));
  return kGraphThreads / lanes;
}

std::int64_t blocks_per_chunk(std::int64_t blocks, std::uint64_t block_bytes, std::uint64_t request_bytes) {
  if (block_bytes == 0) throw Error("gpsm: blocks_per_chunk: zero block bytes");
  using proact::ceil_div;
  if (request_bytes > 0) return static_cast<std::int64_t>(std::max<std::uint64_t>(1, ceil_div(request_bytes, block_bytes)));
  const std::uint64_t for_target = ceil_div(static_cast<std::uint64_t>(std::max<std::int64_t>(blocks, 1)), kTargetChunks);
  const std::uint64_t for_min = ceil_div(kMinChunkBytes, block_bytes);
  return static_cast<std::int64_t>(std::max<std::uint64_t>({1, for_target, for_min}));
}

std::int64_t ChunkSplit::end_row(std::int64_t c) const { return std::min(rows, (c + 1) * chunk_rows()); }

std::uint64_t ChunkSplit::chunk_bytes() const {
  return static_cast<std::uint64_t>(chunk_rows()) * width * sizeof(float);
}

// The engine's mapping (proact/chunk_math.hpp) over the rank's bytes: block b writes
// [b block_bytes, (b + 1) block_bytes), chunk c is [c chunk_bytes, (c + 1) chunk_bytes).
std::uint32_t ChunkSplit::contributors(std::int64_t c) const {
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(width) * sizeof(float);
  const proact::ChunkGeometry g{static_cast<std::uint64_t>(rows) * row_bytes, chunk_bytes(),
                                  static_cast<std::uint64_t>(rows_per_block) * row_bytes};
  return g.writers(static_cast<std::uint64_t>(c));
}

ChunkSplit split_rank(const VecLayout& l, int r, std::int64_t rows_per_block, std::uint64_t request_bytes) {
  if (rows_per_block < 1) throw Error("gpsm: split_rank: rows per block must be positive");
  ChunkSplit s;
  s.rows = l.part_rows(r);
  s.rows_per_block = rows_per_block;
  s.width = l.width;
  s.blocks_per_chunk =
      blocks_per_chunk(s.blocks(), static_cast<std::uint64_t>(rows_per_block) * l.width * sizeof(float), request_bytes);
  return s;
}

std::uint32_t ready_value(std::uint32_t phase, std::uint32_t contributors) { return phase * contributors; }

bool counter_reached(std::uint32_t counter, std::uint32_t value) {
  return static_cast<std::int32_t>(counter - value) >= 0;
}

std::vector<ChunkCopy> rank_copies(const VecLayout& l, int r, const ChunkSplit& s) {
  std::vector<ChunkCopy> out;
  const int n = l.ranks();
  if (n == 1 || s.rows == 0) return out;
  for (std::int64_t c = 0; c < s.chunks(); ++c)
    for (int k = 1; k < n; ++k) {
      ChunkCopy x;
      x.chunk = c;
      x.contributors = s.contributors(c);
      x.dst = (r + k) % n;
      x.elem = l.first_elem(r) + s.first_row(c) * l.width;
      x.elems = (s.end_row(c) - s.first_row(c)) * l.width;
      out.push_back(x);
    }
  return out;
}

std::uint64_t parse_chunk_request(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  const std::string rest(end);
  std::uint64_t scale = 0;  // 0: not a size
  if (rest.empty()) scale = 1;
  else if (rest == "K" || rest == "k") scale = 1024;
  else if (rest == "M" || rest == "m") scale = 1024 * 1024;
  if (end == text.c_str() || scale == 0 || v == 0 || text[0] == '-')
    throw Error(fmt::format("gpsm: GPSM_GRAPH_PROACT_CHUNK={}: a positive byte count expected (suffix K or M allowed)",
                            text));
  return static_cast<std::uint64_t>(v) * scale;
}

ProactChunk resolve_chunk(const ProactChunk& asked, const char* env_value) {
  if (asked.bytes > 0 || asked.agent == proact::Agent::memcpy || asked.agent == proact::Agent::inline_store)
    return asked;
  const std::string prefix = asked.source.empty() ? "" : asked.source + "; ";
  if (env_value != nullptr && *env_value != '\0') {
    const std::uint64_t b = parse_chunk_request(env_value);
    return {b, prefix + fmt::format("GPSM_GRAPH_PROACT_CHUNK={} ({} B)", env_value, b)};
  }
  return {0, prefix + fmt::format("the default chunk (about {} per GPU, at least {} KiB, whole kernel blocks)",
                                  kTargetChunks, kMinChunkBytes / 1024)};
}

}  // namespace gpsm::apps::graph
