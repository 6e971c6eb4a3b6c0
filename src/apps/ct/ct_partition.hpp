#pragma once
// How PWLS-OS splits over GPUs (PROACT dissertation §3.2.1 and Fig 3.4), per subset:
//   - forward projection (phase 1) splits the subset's views: GPU g makes the weighted residual
//     of views [k_begin, k_end) of the subset's list (a contiguous run of the subset's residual
//     buffer, [k][row][channel]) and sends that run to every other GPU, since every GPU's back
//     projection reads all of the subset's views;
//   - back projection, regularization and update (phases 2-4) split the y-planes: GPU g owns
//     planes [y_begin, y_end) of the image ([iy][ix][iz]: a contiguous slab), updates them and
//     sends the slab to every other GPU, since every GPU's next forward projection reads the
//     whole image.
// Both splits are contiguous and balanced: sizes differ by at most one view or plane, larger first.
//
// Readiness (PROACT's per-chunk counters): the voxel-major back projection finishes voxel columns
// (ix, iy) one after another in slab order, so a slab's chunks are runs of whole columns
// (chunk_bytes / (nz * 4) of them, at least one) and a chunk's counter counts its finished
// columns: the chunk may be sent when the count reaches its column count. The forward projector
// finishes whole views, so a residual chunk is a run of whole views and its counter counts
// finished views.
//
// Bytes: per subset, GPU g sends (G - 1) * its views * rows * channels * 4 in the residual
// exchange and (G - 1) * its planes * nx * nz * 4 in the image exchange (the dissertation's
// §3.4.1 scalability model sums these to (G - 1) * Size_sinogram and (G - 1) * Size_image).
#include <cstdint>
#include <vector>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

struct Span {
  std::int64_t begin = 0, end = 0;  // [begin, end)
  std::int64_t size() const { return end - begin; }
};

// parts contiguous spans covering [0, n), sizes differing by at most one (larger first); empty
// spans where parts > n. Throws std::invalid_argument unless parts >= 1 and n >= 0.
std::vector<Span> split_even(std::int64_t n, int parts);

struct Chunk {
  Span items;               // columns (image) or views (residual), relative to the owner's span
  std::int64_t byte_begin;  // in the owner's exchanged run (slab or residual share)
  std::int64_t bytes;
  std::int64_t target;      // the readiness counter's value when the chunk is complete (= items.size())
};

class CtPartition {
 public:
  // Throws std::invalid_argument unless 1 <= gpus and 1 <= subsets <= g.views.
  CtPartition(const Geometry& g, int gpus, int subsets);

  int gpus() const { return gpus_; }
  int subsets() const { return subsets_; }
  // The subset's view count and GPU r's run of it (positions in the subset's view list).
  std::int64_t subset_size(int m) const;
  Span view_share(int m, int r) const;
  // GPU r's y-planes.
  Span slab(int r) const { return slabs_[static_cast<std::size_t>(r)]; }

  std::int64_t view_bytes() const { return g_.cells_per_view() * 4; }   // one view's residual
  std::int64_t column_bytes() const { return std::int64_t{g_.nz} * 4; } // one voxel column
  std::int64_t plane_bytes() const { return std::int64_t{g_.nx} * column_bytes(); }

  // Bytes GPU r sends per subset m: residual exchange, image exchange (to all G - 1 others).
  std::int64_t residual_bytes_sent(int m, int r) const;
  std::int64_t image_bytes_sent(int r) const;
  // Summed over GPUs, for subset m and for one iteration (every subset once).
  std::int64_t subset_bytes(int m) const;
  std::int64_t iteration_bytes() const;

  // Readiness chunks of GPU r's slab (image) and of its share of subset m (residual); a chunk
  // of at least one column / view, whatever chunk_bytes asks.
  std::vector<Chunk> image_chunks(int r, std::int64_t chunk_bytes) const;
  std::vector<Chunk> residual_chunks(int m, int r, std::int64_t chunk_bytes) const;

 private:
  Geometry g_;
  int gpus_, subsets_;
  std::vector<Span> slabs_;
};

// Chunks over `items` items of item_bytes each, items_per_chunk = max(1, chunk_bytes / item_bytes).
std::vector<Chunk> make_chunks(std::int64_t items, std::int64_t item_bytes, std::int64_t chunk_bytes);

}  // namespace gpsm::apps::ct
