// What a block's checked chunks ask their GPS views, taken once per launch instead of after each
// fence round, where the chains of dependent mask reads sat on the iteration's critical path. A
// span holds for the whole launch: subscriptions change only between kernels. Per view: whether
// the chunk's column range is all in this replica (its gathers may read it directly), and the
// span of the chunk's own rows. A block keeps kCachedChunks chunks; any further ones, and every
// chunk while tracking (every access must go through the view, which marks the pages), ask per
// iteration. Used by CG's gps (one view: r) and gps_pipe (two: w[0], w[1]); measured on 2xH200,
// asking once per launch took gps_pipe 11-12 % and gps 8-10 % off an iteration at 256^2 and 512^2.
#pragma once

#include <cstdint>
#include <type_traits>

#include "apps/cg/cg_math.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::cg {

template <int kViews>
struct ChunkSpans {
  std::int64_t chunk;  // -1: unused
  bool cols_local[kViews];
  gps::View<double>::Span rows[kViews];
};
constexpr int kCachedChunks = 2;
static_assert(std::is_trivially_copyable_v<ChunkSpans<2>>, "ChunkSpans lives in raw shared memory");

// Kernels hold the cache in raw shared bytes (Span's default member initializers would be a
// dynamic initialization, which __shared__ variables do not have):
//   __shared__ alignas(ChunkSpans<N>) unsigned char bytes[sizeof(ChunkSpans<N>) * kCachedChunks];
// Every slot unused; the barrier orders each thread's clear before thread 0 fills a slot.
template <int kViews>
__device__ __forceinline__ void clear_chunk_spans(ChunkSpans<kViews>* cached) {
  if (threadIdx.x < kCachedChunks) cached[threadIdx.x].chunk = -1;
  __syncthreads();
}

// Whether chunk c's gathers may read v's replica here: this GPU holds every page of the chunk's
// column range (never while tracking, whose loads must go through View::load). G: GpsStd or
// GpsPipe (tracking, col_range, first_row, a).
template <class G>
__device__ __forceinline__ bool chunk_cols_local(const G& g, const gps::View<double>& v, std::int64_t c) {
  if (g.tracking) return false;
  const std::int64_t lo = __ldg(g.col_range + 2 * c), hi = __ldg(g.col_range + 2 * c + 1);
  return v.local_span(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo + 1)) != nullptr;
}

// Chunk c's own rows in v as one span: one subscriber check for the chunk's pages.
template <class G>
__device__ __forceinline__ gps::View<double>::Span chunk_rows_span(const G& g, const gps::View<double>& v,
                                                                  std::int64_t c) {
  const std::int64_t chunk = chunk_rows(g.a.rows_per_thread), first = c * chunk;
  return v.span(static_cast<std::uint64_t>(g.first_row + first),
                static_cast<std::uint64_t>(min(chunk, static_cast<std::int64_t>(g.a.rows) - first)));
}

// Slot `slot` takes chunk c's answers for view k (block-collective: every thread asks, thread 0
// writes; the caller's barrier publishes the slot).
template <int kViews, class G>
__device__ __forceinline__ void take_chunk_spans(ChunkSpans<kViews>& slot, int k, const G& g, const gps::View<double>& v,
                                                 std::int64_t c) {
  const bool cl = chunk_cols_local(g, v, c);
  const gps::View<double>::Span rs = chunk_rows_span(g, v, c);
  if (threadIdx.x == 0) {
    slot.chunk = c;
    slot.cols_local[k] = cl;
    slot.rows[k] = rs;
  }
}

// Chunk c's entry in the block's cache, or nullptr.
template <int kViews>
__device__ __forceinline__ const ChunkSpans<kViews>* cached_chunk(const ChunkSpans<kViews>* cached, std::int64_t c) {
  static_assert(kCachedChunks == 2, "cached_chunk looks at two slots");
  return cached[0].chunk == c ? cached : cached[1].chunk == c ? cached + 1 : nullptr;
}

}  // namespace gpsm::apps::cg
