#include "apps/ct/ct_partition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/even_parts.hpp"

namespace gpsm::apps::ct {

std::vector<Span> split_even(std::int64_t n, int parts) {
  if (parts < 1 || n < 0)
    throw std::invalid_argument("ct: cannot split " + std::to_string(n) + " into " + std::to_string(parts) + " parts");
  std::vector<Span> out(static_cast<std::size_t>(parts));
  for (int p = 0; p < parts; ++p) out[p] = Span{even_part_begin(n, parts, p), even_part_begin(n, parts, p + 1)};
  return out;
}

std::vector<Chunk> make_chunks(std::int64_t items, std::int64_t item_bytes, std::int64_t chunk_bytes) {
  const std::int64_t per = std::max<std::int64_t>(1, chunk_bytes / item_bytes);
  std::vector<Chunk> out;
  for (std::int64_t b = 0; b < items; b += per) {
    const std::int64_t e = std::min(items, b + per);
    out.push_back({{b, e}, b * item_bytes, (e - b) * item_bytes, e - b});
  }
  return out;
}

CtPartition::CtPartition(const Geometry& g, int gpus, int subsets) : g_(g), gpus_(gpus), subsets_(subsets) {
  if (gpus < 1) throw std::invalid_argument("ct: " + std::to_string(gpus) + " GPUs; use 1 or more");
  if (subsets < 1 || subsets > g.views)
    throw std::invalid_argument("ct: " + std::to_string(subsets) + " subsets for " + std::to_string(g.views) +
                                " views; use 1 to " + std::to_string(g.views) + " subsets");
  slabs_ = split_even(g.ny, gpus);
}

std::int64_t CtPartition::subset_size(int m) const {
  // views m, m + M, ... below views (ct_subsets.hpp)
  return (g_.views - m + subsets_ - 1) / subsets_;
}

Span CtPartition::view_share(int m, int r) const { return split_even(subset_size(m), gpus_)[r]; }

std::int64_t CtPartition::residual_bytes_sent(int m, int r) const {
  return (gpus_ - 1) * view_share(m, r).size() * view_bytes();
}

std::int64_t CtPartition::image_bytes_sent(int r) const { return (gpus_ - 1) * slab(r).size() * plane_bytes(); }

std::int64_t CtPartition::subset_bytes(int m) const {
  std::int64_t s = 0;
  for (int r = 0; r < gpus_; ++r) s += residual_bytes_sent(m, r) + image_bytes_sent(r);
  return s;
}

std::int64_t CtPartition::iteration_bytes() const {
  std::int64_t s = 0;
  for (int m = 0; m < subsets_; ++m) s += subset_bytes(m);
  return s;
}

std::vector<Chunk> CtPartition::image_chunks(int r, std::int64_t chunk_bytes) const {
  return make_chunks(slab(r).size() * g_.nx, column_bytes(), chunk_bytes);
}

std::vector<Chunk> CtPartition::residual_chunks(int m, int r, std::int64_t chunk_bytes) const {
  return make_chunks(view_share(m, r).size(), view_bytes(), chunk_bytes);
}

}  // namespace gpsm::apps::ct
