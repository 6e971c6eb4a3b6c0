#pragma once
// The graph apps' proact paradigm in plain C++ (CPU-tested; graph_exchange_cuda.cpp enqueues it,
// graph_kernels.cu counts): a rank's owned rows of a published vector split into chunks, how many
// kernel blocks write each chunk (its contributors), and the copies that ship each chunk to the
// peers once its counter says every contributor is done (PROACT dissertation Algorithm 1, with a
// counter that only grows instead of one reset every phase).
//
// The kernels map blocks to rows explicitly: block b of rank r's kernel writes its local rows
// [b rows_per_block, (b + 1) rows_per_block) clipped to the rank's rows (no grid-stride loop), so
// which blocks write a chunk is known on the host. Chunks are whole blocks (chunk c is blocks
// [c blocks_per_chunk, (c + 1) blocks_per_chunk)): every block bumps exactly one counter,
// counters[b / blocks_per_chunk], and the kernel needs no chunk loop.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/graph/vec_layout.hpp"
#include "apps/harness/app.hpp"

namespace gpsm::apps::graph {

// Threads per block of every graph kernel (graph_kernels.cu launches with it).
constexpr int kGraphThreads = 256;
// Rows one block writes: pagerank and sssp give each row `lanes` threads (a power of two <= 32),
// sgd (als) one thread per row (lanes = 1).
std::int64_t rows_per_block(int lanes);

// Smaller chunks: a copy's fixed cost dominates. The synthetic producer's sweep on 4xH200
// (8a20d5afb144, results/nvidia-h200-x4/...) put copy_engine below memcpy under 2 MiB chunks
// (1 MiB 0.95x, 2 MiB 1.29x, 16 MiB 1.73x); `gpsm bench --proact-chunk` overrides.
constexpr std::uint64_t kMinChunkBytes = 2 * 1024 * 1024;
constexpr std::uint64_t kTargetChunks = 16;          // enough to overlap, few enough waits and copies

// Blocks per chunk for a rank whose kernel has `blocks` blocks of `block_bytes` each.
// request_bytes == 0: about kTargetChunks chunks (8 to 16 whenever the rows fill 8 minimum
// chunks), none smaller than kMinChunkBytes (one chunk for a small part). Otherwise chunks of
// request_bytes rounded up to whole blocks. At least 1.
std::int64_t blocks_per_chunk(std::int64_t blocks, std::uint64_t block_bytes, std::uint64_t request_bytes);

// One rank's rows cut into chunks of whole blocks.
struct ChunkSplit {
  std::int64_t rows = 0;              // the rank's rows
  std::int64_t rows_per_block = 1;
  std::int64_t blocks_per_chunk = 1;
  int width = 1;                      // floats per row

  std::int64_t blocks() const { return (rows + rows_per_block - 1) / rows_per_block; }
  std::int64_t chunks() const { return (blocks() + blocks_per_chunk - 1) / blocks_per_chunk; }
  std::int64_t chunk_rows() const { return rows_per_block * blocks_per_chunk; }
  std::int64_t first_row(std::int64_t c) const { return c * chunk_rows(); }
  std::int64_t end_row(std::int64_t c) const;
  std::uint64_t chunk_bytes() const;  // of a full chunk
  // The counter block b bumps: the kernel's formula (graph_kernels.cu).
  std::int64_t chunk_of_block(std::int64_t b) const { return b / blocks_per_chunk; }
  // Blocks that write chunk c: its counter grows by this much per publication.
  std::uint32_t contributors(std::int64_t c) const;
};

// Rank r's split of layout l (rows: l.part_rows(r); empty for a rank without rows).
ChunkSplit split_rank(const VecLayout& l, int r, std::int64_t rows_per_block, std::uint64_t request_bytes);

// Counter value at which chunk c is ready in publication `phase` (1, 2, ...): every contributor
// bumped it once per publication so far. Modulo 2^32: the stream wait compares cyclically
// ((int32)(counter - value) >= 0), and the counter never runs more than one publication
// (contributors < 2^31) behind the value waited for.
std::uint32_t ready_value(std::uint32_t phase, std::uint32_t contributors);
// The host model of that wait (tests): whether a counter reads ready for `value`.
bool counter_reached(std::uint32_t counter, std::uint32_t value);

// One copy of rank r's publication: elements [elem, elem + elems) of the vector (slot order,
// inside r's rows) from r's copy to dst's, after the wait for `chunk`'s counter.
struct ChunkCopy {
  std::int64_t chunk = 0;
  std::uint32_t contributors = 0;
  int dst = 0;
  std::int64_t elem = 0, elems = 0;
};
// Rank r's copies, in the order its blocks finish their rows: chunk by chunk ascending, each chunk
// to every other rank, peers rotated from r + 1 (so that the ranks do not all send to rank 0
// first). Empty on one rank or for a rank without rows.
std::vector<ChunkCopy> rank_copies(const VecLayout& l, int r, const ChunkSplit& s);

// GPSM_GRAPH_PROACT_CHUNK (bytes; K, M suffixes) as a chunk request: 0 when unset or empty.
// Throws gpsm::Error naming the variable for anything else than a positive size.
std::uint64_t parse_chunk_request(const std::string& text);

// The chunk the proact exchange is built with: gpsm bench's request when it names a size
// (--proact-chunk, a cache entry, a --proact-tune point), else GPSM_GRAPH_PROACT_CHUNK
// (env_value: its text, nullptr when unset; kept for scripts that set it), else 0 (the default
// split, blocks_per_chunk). The source keeps what the bench said (e.g. why a cache entry was not
// used) and adds what decided. A request for the memcpy or inline agent is returned as it is (no
// chunks: GPSM_GRAPH_PROACT_CHUNK does not apply).
ProactChunk resolve_chunk(const ProactChunk& asked, const char* env_value);

}  // namespace gpsm::apps::graph
