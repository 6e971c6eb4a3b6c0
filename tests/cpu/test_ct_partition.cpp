// How PWLS-OS splits over GPUs: every view of a subset and every y-plane owned by exactly one GPU,
// balanced within one; readiness chunks that tile a GPU's slab (or residual share) in the order
// the producer finishes it, each counter's target its item count; the bytes each GPU sends per
// subset against a count of every element sent to every peer; and the figures docs/ct.md quotes
// for the seed's size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_partition.hpp"
#include "apps/ct/ct_subsets.hpp"

using namespace gpsm::apps::ct;

TEST(CtPartition, ViewsAndPlanesOwnedOnceAndBalanced) {
  for (const char* spec : {"small", "medium", "seed", "32x7x8:48x8x48:circular"})
    for (int gpus : {1, 2, 3, 4, 8, 16})
      for (int subsets : {1, 24}) {
        const Geometry g = parse_geometry(spec);
        const CtPartition p(g, gpus, subsets);
        // y-planes
        std::vector<int> owner(static_cast<std::size_t>(g.ny), 0);
        std::int64_t lo = g.ny, hi = 0;
        for (int r = 0; r < gpus; ++r) {
          const Span s = p.slab(r);
          for (std::int64_t y = s.begin; y < s.end; ++y) ++owner[static_cast<std::size_t>(y)];
          lo = std::min(lo, s.size()), hi = std::max(hi, s.size());
          if (r > 0) {
            EXPECT_EQ(s.begin, p.slab(r - 1).end);
          }
        }
        EXPECT_TRUE(std::all_of(owner.begin(), owner.end(), [](int o) { return o == 1; })) << spec << " " << gpus;
        EXPECT_LE(hi - lo, 1);
        // each subset's views
        std::vector<int> made(static_cast<std::size_t>(g.views), 0);
        for (int m = 0; m < subsets; ++m) {
          const std::vector<std::int32_t> v = subset_views(g.views, subsets, m);
          ASSERT_EQ(p.subset_size(m), static_cast<std::int64_t>(v.size()));
          std::int64_t vlo = g.views, vhi = 0, next = 0;
          for (int r = 0; r < gpus; ++r) {
            const Span s = p.view_share(m, r);
            EXPECT_EQ(s.begin, next);
            next = s.end;
            for (std::int64_t k = s.begin; k < s.end; ++k) ++made[static_cast<std::size_t>(v[k])];
            vlo = std::min(vlo, s.size()), vhi = std::max(vhi, s.size());
          }
          EXPECT_EQ(next, p.subset_size(m));
          EXPECT_LE(vhi - vlo, 1);
        }
        EXPECT_TRUE(std::all_of(made.begin(), made.end(), [](int o) { return o == 1; })) << spec << " " << gpus;
      }
  EXPECT_THROW(CtPartition(parse_geometry("small"), 0, 24), std::invalid_argument);
  EXPECT_THROW(CtPartition(parse_geometry("small"), 2, 289), std::invalid_argument);
}

TEST(CtPartition, ChunksTileTheSlabAndBecomeReadyInVoxelMajorOrder) {
  const Geometry g = parse_geometry("seed");
  const CtPartition p(g, 3, 24);
  for (std::int64_t chunk_bytes : {std::int64_t{1}, std::int64_t{16} << 10, std::int64_t{100000}, std::int64_t{1} << 30})
    for (int r = 0; r < 3; ++r) {
      const std::vector<Chunk> chunks = p.image_chunks(r, chunk_bytes);
      const std::int64_t columns = p.slab(r).size() * g.nx;
      // tile: consecutive, whole columns, bytes = columns * nz * 4
      std::int64_t at = 0;
      for (const Chunk& c : chunks) {
        EXPECT_EQ(c.items.begin, at);
        EXPECT_GE(c.items.size(), 1);
        EXPECT_EQ(c.byte_begin, at * g.nz * 4);
        EXPECT_EQ(c.bytes, c.items.size() * g.nz * 4);
        EXPECT_EQ(c.target, c.items.size());
        at = c.items.end;
      }
      EXPECT_EQ(at, columns);
      // Readiness: run the voxel-major producer's order (column after column) with one counter
      // per chunk; a chunk must turn ready exactly when its last column finishes, in chunk order.
      std::vector<std::int64_t> counter(chunks.size(), 0);
      const std::int64_t per = chunks.front().items.size();
      std::size_t ready = 0;
      for (std::int64_t col = 0; col < columns; ++col) {
        const std::size_t c = static_cast<std::size_t>(col / per);
        ASSERT_LT(c, chunks.size());
        ASSERT_TRUE(col >= chunks[c].items.begin && col < chunks[c].items.end);
        if (++counter[c] == chunks[c].target) {
          EXPECT_EQ(c, ready) << "chunk ready out of order";
          EXPECT_EQ(col, chunks[c].items.end - 1);
          ++ready;
        }
      }
      EXPECT_EQ(ready, chunks.size());
    }
  // the seed's 16 kB image chunks are 8 columns of 512 voxels
  EXPECT_EQ(p.image_chunks(0, 16 << 10).front().items.size(), 8);
  // residual chunks are whole views (a seed view is 227 kB): at least one per chunk
  EXPECT_EQ(p.residual_chunks(0, 0, 8 << 10).front().items.size(), 1);
  EXPECT_EQ(p.residual_chunks(0, 0, 1 << 20).front().items.size(), 4);
}

TEST(CtPartition, BytesSentMatchACountOfEveryElementToEveryPeer) {
  for (const char* spec : {"small", "32x7x8:48x8x48:circular"})
    for (int gpus : {1, 2, 3, 4, 5}) {
      const Geometry g = parse_geometry(spec);
      const int subsets = 24;
      const CtPartition p(g, gpus, subsets);
      std::int64_t iteration = 0;
      for (int m = 0; m < subsets; ++m) {
        const std::vector<std::int32_t> v = subset_views(g.views, subsets, m);
        std::int64_t subset = 0;
        for (int r = 0; r < gpus; ++r) {
          // count: each residual float of r's views, each voxel of r's planes, to each other GPU
          std::int64_t res = 0, img = 0;
          for (int peer = 0; peer < gpus; ++peer) {
            if (peer == r) continue;
            const Span s = p.view_share(m, r);
            for (std::int64_t k = s.begin; k < s.end; ++k)
              for (int row = 0; row < g.rows; ++row)
                for (int ch = 0; ch < g.channels; ++ch) res += sizeof(float);
            for (std::int64_t y = p.slab(r).begin; y < p.slab(r).end; ++y)
              for (int x = 0; x < g.nx; ++x) img += std::int64_t{g.nz} * sizeof(float);
          }
          EXPECT_EQ(p.residual_bytes_sent(m, r), res) << spec << " gpus " << gpus << " subset " << m;
          EXPECT_EQ(p.image_bytes_sent(r), img);
          subset += res + img;
        }
        EXPECT_EQ(p.subset_bytes(m), subset);
        iteration += subset;
      }
      EXPECT_EQ(p.iteration_bytes(), iteration);
      // the dissertation's model: (G - 1) * (sinogram + subsets * image) per iteration
      EXPECT_EQ(iteration, (gpus - 1) * (g.sinogram_cells() * 4 + subsets * g.voxels() * 4));
    }
}

TEST(CtPartition, SizeFiguresForTheDoc) {
  // The figures docs/ct.md quotes, printed so they come from this code.
  for (const char* spec : {"medium", "seed"}) {
    const Geometry g = parse_geometry(spec);
    for (int gpus : {2, 4, 8}) {
      const CtPartition p(g, gpus, 24);
      const double mb = 1e6;
      std::int64_t residual = 0, image = 0;
      for (int r = 0; r < gpus; ++r) residual += p.residual_bytes_sent(0, r), image += p.image_bytes_sent(r);
      EXPECT_EQ(residual + image, p.subset_bytes(0));
      std::printf("ct %s %d GPUs, 24 subsets: per subset residual %.1f MB (GPU 0 sends %.1f MB), image %.1f MB "
                  "(GPU 0 sends %.1f MB), total %.1f MB; per iteration %.2f GB\n",
                  spec, gpus, residual / mb, p.residual_bytes_sent(0, 0) / mb, image / mb, p.image_bytes_sent(0) / mb,
                  p.subset_bytes(0) / mb, p.iteration_bytes() / 1e9);
      if (g.label() == "512x512x512:7256x64x888:helical") {
        EXPECT_EQ(p.iteration_bytes(), std::int64_t{gpus - 1} * (7256LL * 64 * 888 * 4 + 24LL * 512 * 512 * 512 * 4));
      }
    }
  }
}
