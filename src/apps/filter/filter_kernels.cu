// The image filter's kernels: a 32 x 8 block of threads per tile of 64 x 64 output pixels. The
// block loads the tile's input (with its (K-1)/2 apron, clamped at the borders, one row lookup per
// tile row per warp, the clamped columns computed once per thread) into shared memory once; then
// each thread computes 8 rows x 2 adjacent columns of outputs from it through filter_math.hpp's
// filter_tile_block, reading each input row of its columns once into registers. The earlier
// thread-per-pixel kernel loaded 25 values through L1 per pixel with 64-bit index math for each
// and reached ~0.51 TB/s on an H200; here a pixel costs its 25 multiplies and 25 adds (fixed: no
// FMA, for the reference's bits), ~4.5 shared loads, ~0.4 instructions of tile loading and, from
// DRAM, its 4-byte read and 4-byte write (the apron mostly hits L2). Compiled with --fmad=false
// (src/CMakeLists.txt) on top of filter_math.hpp's explicit rounding, so every paradigm gives the
// CPU reference's bits.
#include "apps/filter/filter_kernels.hpp"

#include <algorithm>
#include <type_traits>

#include "apps/filter/filter_math.hpp"
#include "apps/filter/filter_pass.hpp"
#include "apps/filter/filter_spec.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::filter {
namespace {

__constant__ float c_weights[kMaxFilterSide * kMaxFilterSide];

constexpr int kBx = 32, kBy = 8;                     // threads per block
constexpr int kTy = 8, kTx = 2;                      // output rows and columns per thread
constexpr int kTileW = kBx * kTx, kTileH = kBy * kTy;  // output pixels per tile: 64 x 64
// Tile columns a thread loads: ceil((64 + 63 - 1) / 32) at the largest filter.
constexpr int kColLoads = (kTileW + kMaxFilterSide - 1 + kBx - 1) / kBx;

// The shared tile of a side-k filter: (64 + k - 1)^2 floats, 18496 bytes at k = 5, 63504 at
// k = 63 (past the 48 KiB a launch may take without opting in: the launch opts in).
std::size_t tile_bytes(int k) {
  return static_cast<std::size_t>(kTileW + k - 1) * static_cast<std::size_t>(kTileH + k - 1) * sizeof(float);
}
constexpr std::size_t kDefaultSharedLimit = 48 * 1024;
// Blocks per SM the registers must allow (at most 64 per thread): 32 warps to hide the tile loads'
// latency behind other blocks' arithmetic.
constexpr int kMinBlocks = 4;

// The weights' two homes, each its own kernel (no per-tap choice): constant memory, or an array
// (replicated or remote) read through the read-only cache.
struct WtConstant {
  __device__ __forceinline__ float operator()(int t) const { return c_weights[t]; }
};
struct WtArray {
  const float* p;
  __device__ __forceinline__ float operator()(int t) const { return __ldg(p + t); }
};
// An array's K x K weights for a side known at compile time, read once per thread into registers
// (the constant ones are operands of the multiplies straight from the constant bank).
template <int KT>
struct WtRegs {
  float v[KT * KT];
  __device__ __forceinline__ explicit WtRegs(const WtArray& a) {
#pragma unroll
    for (int t = 0; t < KT * KT; ++t) v[t] = __ldg(a.p + t);
  }
  __device__ __forceinline__ float operator()(int t) const { return v[t]; }
};

// Rows of tiles in dispatch order: the first and the last swap places with the second, so that
// the two rows of tiles at a slab's edges (those that load halo rows from a neighbour, rdl, or
// store edge rows into it, p2p_inline; a halo of at most 31 rows touches only them, a tile being 64
// rows) are in the first wave and their link latency overlaps the interior's tiles instead of
// ending the pass.
__device__ __forceinline__ std::int64_t edges_first(std::int64_t by, std::int64_t n) {
  return n > 2 ? (by == 1 ? n - 1 : (by == n - 1 ? 1 : by)) : by;
}

// Tiles along y at most 65535 (the grid's limit); taller slabs loop over the rest.
dim3 grid_for(std::int64_t width, std::int64_t rows) {
  const std::int64_t by = std::min<std::int64_t>((rows + kTileH - 1) / kTileH, 65535);
  return dim3(static_cast<unsigned>((width + kTileW - 1) / kTileW), static_cast<unsigned>(by));
}

// The pass over rows [y0, y1): for each of this block's tiles, src.tile(lo, hi) is told the image
// rows [lo, hi) the tile reads and gives rows(gy), indexable by column; sink.tile(lo, hi) the rows
// it writes and gives out(x, y, v). Both are asked once per tile, so a paradigm's checks (a
// block lookup, a GPS span) cost one per tile or per row, never one per pixel.
template <int KT, class Taps, class Src, class Sink>
__device__ __forceinline__ void filter_tiles(std::int64_t width, std::int64_t height, std::int64_t y0, std::int64_t y1,
                                             const Taps& w, int k, const Src& src, const Sink& sink) {
  extern __shared__ __align__(16) float tile[];  // 8-byte pairs of filter_tile_block
  const int side = KT > 0 ? KT : k;
  const int r = (side - 1) / 2;
  const int pitch = kTileW + side - 1;
  const std::int64_t tx0 = static_cast<std::int64_t>(blockIdx.x) * kTileW;
  const int in_cols = static_cast<int>(std::min<std::int64_t>(kTileW, width - tx0)) + side - 1;
  // The clamped image columns of this thread's tile columns: the same for every row and tile.
  std::int64_t col[kColLoads];
#pragma unroll
  for (int m = 0; m < kColLoads; ++m) col[m] = clamp_index(tx0 - r + m * kBx + threadIdx.x, width);
  const int c = static_cast<int>(threadIdx.x) * kTx;  // this thread's first output column in the tile
  const std::int64_t x = tx0 + c;
  const int row0 = static_cast<int>(threadIdx.y) * kTy;
  const std::int64_t n = (y1 - y0 + kTileH - 1) / kTileH;
  for (std::int64_t by = blockIdx.y; by < n; by += gridDim.y) {
    const std::int64_t ty0 = y0 + edges_first(by, n) * kTileH;
    const int out_rows = static_cast<int>(std::min<std::int64_t>(kTileH, y1 - ty0));
    const int in_rows = out_rows + side - 1;  // never past the slab's rows and its halo
    if (by != blockIdx.y) __syncthreads();    // the previous tile's reads are done
    {
      const std::int64_t lo = std::max<std::int64_t>(ty0 - r, 0), hi = std::min<std::int64_t>(ty0 + out_rows + r, height);
      const auto rows = src.tile(lo, hi);
      for (int s = threadIdx.y; s < in_rows; s += kBy) {
        const auto row = rows(clamp_index(ty0 - r + s, height));
        float* dst = tile + s * pitch + threadIdx.x;
#pragma unroll
        for (int m = 0; m < kColLoads; ++m)
          if (m * kBx + static_cast<int>(threadIdx.x) < in_cols) dst[m * kBx] = row[col[m]];
      }
    }
    __syncthreads();
    // Tile rows and columns past the loaded ones hold stale values: they feed only outputs that
    // are dropped.
    if (row0 < out_rows && x < width) {
      float acc[kTy][kTx];
      filter_tile_block<KT, kTy, kTx>(tile, pitch, c, row0, w, k, acc);
      const auto out = sink.tile(ty0, ty0 + out_rows);
#pragma unroll
      for (int t = 0; t < kTy; ++t)
        if (row0 + t < out_rows) {
#pragma unroll
          for (int u = 0; u < kTx; ++u)
            if (u == 0 || x + u < width) out(x + u, ty0 + row0 + t, acc[t][u]);
        }
    }
  }
}

// The weights as the kernel reads them: an array's in registers where the side is known.
template <int KT, class Wts, class Body>
__device__ __forceinline__ void with_taps(const Wts& w, const Body& body) {
  if constexpr (KT > 0 && std::is_same_v<Wts, WtArray>) body(WtRegs<KT>(w));
  else body(w);
}

// Sources and sinks that need no per-tile check: the tile call returns themselves.
template <class F>
struct Same {
  F f;
  __device__ __forceinline__ const F& tile(std::int64_t, std::int64_t) const { return f; }
};

// A local pass's outputs: a tile that holds none of the rows p2p_inline also pushes into a
// neighbour's halo (all but a slab's first and last tile rows, and every tile of the other
// paradigms) stores with no per-pixel push checks.
struct LocalTileOut {
  const LocalPass* a;
  bool push;
  __device__ __forceinline__ void operator()(std::int64_t x, std::int64_t y, float v) const {
    if (push) local_store(*a, x, y, v);
    else a->out[(y - a->row_base) * a->width + x] = v;
  }
};
struct LocalOut {
  const LocalPass* a;
  __device__ __forceinline__ LocalTileOut tile(std::int64_t lo, std::int64_t hi) const {
    const bool push = (a->push_top != nullptr && lo < a->y0 + a->push_rows) ||
                      (a->push_bottom != nullptr && hi > a->y1 - a->push_rows);
    return LocalTileOut{a, push};
  }
};

// The pass structs are __grid_constant__: the sources and sinks point at them in parameter space
// instead of copying them to local memory.
template <int KT, class Wts>
__global__ void __launch_bounds__(kBx * kBy, kMinBlocks) local_pass(const __grid_constant__ LocalPass a, Wts w, int k) {
  with_taps<KT>(w, [&](const auto& taps) {
    filter_tiles<KT>(a.width, a.height, a.y0, a.y1, taps, k, Same<LocalRows>{LocalRows{a.in, a.width, a.row_base}},
                     LocalOut{&a});
  });
}

struct DistributedOut {
  const DistributedPass* a;
  __device__ __forceinline__ void operator()(std::int64_t x, std::int64_t y, float v) const {
    distributed_store(*a, x, y, v);
  }
};

template <int KT, class Wts>
__global__ void __launch_bounds__(kBx * kBy, kMinBlocks) distributed_pass(const __grid_constant__ DistributedPass a, Wts w, int k) {
  with_taps<KT>(w, [&](const auto& taps) {
    filter_tiles<KT>(a.width, a.height, a.y0, a.y1, taps, k, Same<DistributedRows>{DistributedRows{a.in, a.box, a.own_in}},
                     Same<DistributedOut>{DistributedOut{&a}});
  });
}

// A row of a GPS array: a replica's pointer (this GPU's, or the home's when every page of the
// row has the same subscribers) at the row's first element, else element loads.
struct GpsRow {
  const float* p;
  const gps::View<float>* v;
  std::uint64_t base;
  __device__ __forceinline__ float operator[](std::int64_t x) const {
    return p != nullptr ? p[x] : v->load(base + static_cast<std::uint64_t>(x));
  }
};

// The input rows of a tile: one span over all of them (one mask read per run of equal masks);
// where it has no single replica to read (the tile straddles pages of different subscribers),
// one span per row.
struct GpsTileRows {
  const gps::View<float>* in;
  const float* from;  // the tile span's replica (element 0), or nullptr
  std::uint64_t W;
  __device__ __forceinline__ GpsRow operator()(std::int64_t gy) const {
    const std::uint64_t b = static_cast<std::uint64_t>(gy) * W;
    const float* f = from != nullptr ? from : in->span(b, W).from;
    return GpsRow{f != nullptr ? f + b : nullptr, in, b};
  }
};
struct GpsSrc {
  const gps::View<float>* in;
  std::uint64_t W;
  __device__ __forceinline__ GpsTileRows tile(std::int64_t lo, std::int64_t hi) const {
    const std::uint64_t b = static_cast<std::uint64_t>(lo) * W;
    return GpsTileRows{in, in->span(b, static_cast<std::uint64_t>(hi - lo) * W).from, W};
  }
};

// The output rows of a tile: one span; a uniform one (every page with the same subscribers) puts
// each value to this replica and the others with no mask read, else store() per element.
struct GpsTileOut {
  const gps::View<float>* out;
  gps::View<float>::Span s;
  std::uint64_t W;
  __device__ __forceinline__ void operator()(std::int64_t x, std::int64_t y, float v) const {
    const std::uint64_t i = static_cast<std::uint64_t>(y) * W + static_cast<std::uint64_t>(x);
    out->store(s, i, v);
  }
};
struct GpsSink {
  const gps::View<float>* out;
  std::uint64_t W;
  __device__ __forceinline__ GpsTileOut tile(std::int64_t lo, std::int64_t hi) const {
    return GpsTileOut{out, out->span(static_cast<std::uint64_t>(lo) * W, static_cast<std::uint64_t>(hi - lo) * W), W};
  }
};

template <int KT, class Wts>
__global__ void __launch_bounds__(kBx * kBy, kMinBlocks) gps_pass(const __grid_constant__ GpsPass a, Wts w, int k) {
  const std::uint64_t W = static_cast<std::uint64_t>(a.width);
  with_taps<KT>(w, [&](const auto& taps) {
    filter_tiles<KT>(a.width, a.height, a.y0, a.y1, taps, k, GpsSrc{&a.in, W}, GpsSink{&a.out, W});
  });
}

// The side known at compile time for the common filters (unrolled loops), else a loop over k.
template <template <int> class Launch, class... A>
void by_side(int k, A&&... args) {
  if (k == 3) Launch<3>::run(args...);
  else if (k == 5) Launch<5>::run(args...);
  else Launch<0>::run(args...);
}

// Large filters' tiles take more than the default 48 KiB of shared memory: the kernel opts in
// (on the current device; cheap next to a pass of such a filter).
template <class Kernel>
void opt_in(Kernel* kernel, std::size_t bytes) {
  GPSM_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// A kernel of side KT with the weights where kw says.
#define GPSM_FILTER_LAUNCHER(Name, kernel, Pass)                                                          \
  template <int KT>                                                                                      \
  struct Name {                                                                                          \
    static void run(const Pass& a, const KernelWeights& kw, cudaStream_t st) {                           \
      const dim3 g = grid_for(a.width, a.y1 - a.y0), b(kBx, kBy);                                        \
      const std::size_t sh = tile_bytes(KT > 0 ? KT : kw.k);                                             \
      if (kw.p == nullptr) {                                                                             \
        if (sh > kDefaultSharedLimit) opt_in(kernel<KT, WtConstant>, sh);                                \
        kernel<KT, WtConstant><<<g, b, sh, st>>>(a, WtConstant{}, kw.k);                                 \
      } else {                                                                                           \
        if (sh > kDefaultSharedLimit) opt_in(kernel<KT, WtArray>, sh);                                   \
        kernel<KT, WtArray><<<g, b, sh, st>>>(a, WtArray{kw.p}, kw.k);                                   \
      }                                                                                                  \
    }                                                                                                    \
  };
GPSM_FILTER_LAUNCHER(LaunchLocal, local_pass, LocalPass)
GPSM_FILTER_LAUNCHER(LaunchDistributed, distributed_pass, DistributedPass)
GPSM_FILTER_LAUNCHER(LaunchGps, gps_pass, GpsPass)
#undef GPSM_FILTER_LAUNCHER

}  // namespace

void set_constant_weights(const std::vector<float>& w) {
  GPSM_CUDA(cudaMemcpyToSymbol(c_weights, w.data(), w.size() * sizeof(float)));
}

void launch_local_pass(const LocalPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchLocal>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

void launch_distributed_pass(const DistributedPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchDistributed>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

void launch_gps_pass(const GpsPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchGps>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

}  // namespace gpsm::apps::filter
