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

// Chunk c's entry in the block's cache, or nullptr.
template <int kViews>
__device__ __forceinline__ const ChunkSpans<kViews>* cached_chunk(const ChunkSpans<kViews>* cached, std::int64_t c) {
  static_assert(kCachedChunks == 2, "cached_chunk looks at two slots");
  return cached[0].chunk == c ? cached : cached[1].chunk == c ? cached + 1 : nullptr;
}

}  // namespace gpsm::apps::cg
