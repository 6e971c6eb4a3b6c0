// PWLS-OS across GPUs (ct_multi.hpp): the one-GPU kernels (ct_kernels.hpp) on each GPU's share,
// and the exchanges of the paradigm between the phases.
//
// Why no copy overwrites memory a peer still reads (the exchanges of `copies` and `proact` are
// full barriers: every GPU's stream waits for every copy of an exchange before its next phase):
//   - residual buffer b (subsets alternate b): the copies of subset m into a peer's buffer b are
//     issued after this GPU's forward projection of m, which waited for the image exchange of
//     m - 1, which waited for the peer's update of m - 1, after its update of m - 2, the last
//     reader of its buffer b;
//   - image buffers: the update of m writes x_next (this GPU's slab) and its slab goes into the
//     peers' x_next; a peer reads x_next last as x_cur of m - 1, and this GPU's update of m starts
//     after the residual exchange of m, after the peer's forward projection of m, after its
//     update of m - 1. proact copies chunk by chunk during the update, behind the same barrier.
// `elided` has no copies and no cross-GPU ordering at all.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_gps_kernels.hpp"
#include "apps/ct/ct_gpu.hpp"
#include "apps/ct/ct_kernels.hpp"
#include "apps/ct/ct_multi.hpp"
#include "apps/ct/ct_partition.hpp"
#include "apps/ct/ct_projector.hpp"
#include "apps/ct/ct_subsets.hpp"
#include "apps/harness/gps_link_bytes.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "gpsm/gps/settings.hpp"
#include "proact/stream_wait.hpp"
#include "proact/stream_watch.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpsm::apps::ct {

const char* exchange_name(CtExchange e) {
  switch (e) {
    case CtExchange::copies: return "copies";
    case CtExchange::nccl: return "nccl";
    case CtExchange::proact: return "proact";
    case CtExchange::elided: return "elided";
    case CtExchange::gps: return "gps";
  }
  return "?";
}

namespace {

template <class T>
void upload(DevBuf<T>& b, int device, const T* h, std::size_t n) {
  b.alloc(device, n);
  GPSM_CUDA(cudaMemcpy(b.p, h, n * sizeof(T), cudaMemcpyHostToDevice));
}

struct Rank {
  int dev = -1;
  cudaStream_t st = nullptr;  // the context's stream of this rank
  DevBuf<ViewPose> poses;
  DevBuf<std::int32_t> lists;  // every subset's views, subset m at offset[m]
  DevBuf<float> y, w, d, own_x[2], own_res[2];
  float* x[2] = {};    // the image buffers: own_x, or the replicas of the gps paradigm's arrays
  float* res[2] = {};  // the residual buffers: own_res, or the replicas of its arrays
  DevBuf<std::uint32_t> ready;         // proact: one counter per image chunk of the slab
  DevBuf<float> ax;                    // gps: A x of this GPU's views (the residual is stored through a view)
  std::vector<cudaStream_t> out;       // [peer]: copies to that peer (own index null)
  std::vector<cudaEvent_t> sent;       // [peer]: after the latest copies to that peer
  cudaEvent_t phase = nullptr;         // after (copies) / before (proact) this rank's latest phase
  std::vector<Chunk> chunks;           // proact
  std::vector<std::uint32_t> expect;   // proact: each chunk's counter value the next copy waits for
  proact::StreamWaits waits;           // proact: the stream waits, for the bounded host wait
  ForwardSplit split;                  // phase 1's column splits and their scratch
  DevBuf<double> scratch;
  // Per-phase timing: per subset four marks on the rank's stream (before the forward projection,
  // after it, before the update, after it) and one after the last subset; read after the
  // iteration's host clock stops.
  std::vector<cudaEvent_t> marks;
  PhaseTimes sum;  // summed over the solve's iterations
};

}  // namespace

struct MultiGpuPwls::Impl {
  gps::Context& ctx;
  Geometry g;
  PwlsSettings s;
  MultiOptions o;
  CtPartition part;
  int n;
  int tile_rows;
  Penalty pen{};
  std::vector<std::size_t> offset;
  std::vector<int> order;
  std::vector<Rank> ranks;
  DevBuf<float> ax;  // rank 0: A x of every view (d's setup, the cost)
  DevBuf<double> sums;
  ForwardSplit every_split;  // rank 0's projection of every view
  DevBuf<double> every_scratch;
  std::unique_ptr<NcclComms> comms;
  gps::Array<float> gimg[2], gres[2];  // gps: the image and residual buffers as GPS arrays
  bool tracked = false;                // gps: subscriptions learned (the first solve's first pass)
  double gps_link_bytes = 0;           // gps: link bytes of one iteration, counted by the runtime
  std::shared_ptr<const std::vector<float>> curvature;  // d = A^T W A 1, as every rank holds it
  std::int64_t per = 1;  // proact: columns per image chunk
  int cur = 0;           // the image buffer holding the current iterate
  int parity = 0;        // the residual buffer of the current subset

  int iterations_timed = 0;  // iterations `sum` covers

  Impl(gps::Context& c, const Geometry& geo, const Scan& scan, const PwlsSettings& set, MultiOptions opt)
      : ctx(c), g(geo), s(set), o(opt), part(geo, c.size(), set.subsets), n(c.size()),
        tile_rows(forward_tile_rows(geo.rows, geo.channels)) {
    if (n > g.ny)
      throw std::invalid_argument(fmt::format("ct: {} GPUs for {} y-planes; use at most {} GPUs", n, g.ny, g.ny));
    if (o.curvature && o.curvature->size() != static_cast<std::size_t>(g.voxels()))
      throw std::invalid_argument(fmt::format("ct: the given d = A^T W A 1 has {} values for an image of {} voxels",
                                              o.curvature->size(), g.voxels()));
    const std::vector<ViewPose> poses = view_poses(g);
    std::vector<std::int32_t> lists;
    std::int64_t largest = 0;
    for (int m = 0; m < s.subsets; ++m) {
      offset.push_back(lists.size());
      const std::vector<std::int32_t> v = subset_views(g.views, s.subsets, m);
      lists.insert(lists.end(), v.begin(), v.end());
      largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(v.size()));
    }
    offset.push_back(lists.size());
    order = subset_order(s.subsets);
    const std::size_t voxels = static_cast<std::size_t>(g.voxels());
    const std::size_t res_cells = static_cast<std::size_t>(largest * g.cells_per_view());
    ranks.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      k.dev = ctx.device(r);
      k.st = ctx.stream(r);
      upload(k.poses, k.dev, poses.data(), poses.size());
      upload(k.lists, k.dev, lists.data(), lists.size());
      upload(k.y, k.dev, scan.y.data(), scan.y.size());
      upload(k.w, k.dev, scan.w.data(), scan.w.size());
      k.d.alloc(k.dev, voxels);
      for (int b = 0; b < 2; ++b) {
        if (o.exchange == CtExchange::gps) {
          if (r == 0) {  // a user's arrays: a replica on every GPU, subscriptions learned in solve()
            gps::AllocOptions ao;
            ao.name = b == 0 ? "ct_image_a" : "ct_image_b";
            gimg[b] = ctx.alloc<float>(voxels, ao);
            ao.name = b == 0 ? "ct_residual_a" : "ct_residual_b";
            gres[b] = ctx.alloc<float>(res_cells, ao);
          }
          k.x[b] = gimg[b].view(r).local();
          k.res[b] = gres[b].view(r).local();
        } else {
          k.own_x[b].alloc(k.dev, voxels);
          k.own_res[b].alloc(k.dev, res_cells);
          k.x[b] = k.own_x[b].p;
          k.res[b] = k.own_res[b].p;
        }
      }
      if (o.exchange == CtExchange::gps) k.ax.alloc(k.dev, res_cells);
      std::int64_t share = 0;  // the largest run of views this rank forward-projects
      for (int m = 0; m < s.subsets; ++m) share = std::max(share, part.view_share(m, r).size());
      k.split.splits = share > 0 ? forward_splits_for(g, tile_rows, static_cast<int>(share), device_sms(k.dev)) : 1;
      if (const std::size_t doubles = forward_scratch_doubles(k.split.splits, static_cast<int>(share), g.cells_per_view());
          doubles > 0) {
        k.scratch.alloc(k.dev, doubles);
        k.split.scratch = k.scratch.p;
      }
      GPSM_CUDA(cudaSetDevice(k.dev));
      k.marks.assign(static_cast<std::size_t>(4 * s.subsets + 1), nullptr);
      for (cudaEvent_t& e : k.marks) GPSM_CUDA(cudaEventCreate(&e));
    }
    // d = A^T W A 1 on rank 0, as pwls_os_gpu computes it (or as given), then copied to every rank.
    Rank& z = ranks[0];
    GPSM_CUDA(cudaSetDevice(z.dev));
    ax.alloc(z.dev, static_cast<std::size_t>(g.sinogram_cells()));
    every_split.splits = forward_splits_for(g, tile_rows, g.views, device_sms(z.dev));
    if (every_split.splits > 1) {
      every_scratch.alloc(z.dev, forward_scratch_doubles(every_split.splits, g.views, g.cells_per_view()));
      every_split.scratch = every_scratch.p;
    }
    sums.alloc(z.dev, 2);
    if (o.curvature) {
      curvature = o.curvature;  // its size checked above, before anything was allocated
    } else {
      DevBuf<std::int32_t> every;
      const std::vector<std::int32_t> all = all_views(g);
      upload(every, z.dev, all.data(), all.size());
      const std::vector<float> ones(voxels, 1.0f);
      GPSM_CUDA(cudaMemcpy(z.x[0], ones.data(), voxels * sizeof(float), cudaMemcpyHostToDevice));
      launch_forward_project(g, z.poses.p, z.x[0], every.p, g.views, tile_rows, ax.p, z.st, every_split);
      launch_scale(ax.p, z.w.p, g.sinogram_cells(), z.st);
      launch_back_project(g, z.poses.p, ax.p, every.p, g.views, 0, g.ny, z.d.p, z.st);
      auto d = std::make_shared<std::vector<float>>(voxels);
      GPSM_CUDA(cudaMemcpyAsync(d->data(), z.d.p, voxels * sizeof(float), cudaMemcpyDeviceToHost, z.st));
      GPSM_CUDA(cudaStreamSynchronize(z.st));
      curvature = std::move(d);
    }
    for (int r = o.curvature ? 0 : 1; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ranks[r].dev));
      GPSM_CUDA(cudaMemcpy(ranks[r].d.p, curvature->data(), voxels * sizeof(float), cudaMemcpyHostToDevice));
    }
    pen = make_penalty(g, s, *curvature);

    if (n == 1 || o.exchange == CtExchange::elided || o.exchange == CtExchange::gps) return;
    if (o.exchange == CtExchange::nccl) {
      comms = std::make_unique<NcclComms>(ctx);
      return;
    }
    if (o.exchange == CtExchange::proact) {
      per = std::max<std::int64_t>(1, o.chunk_bytes / part.column_bytes());
      for (int r = 0; r < n; ++r) {
        Rank& k = ranks[static_cast<std::size_t>(r)];
        if (const std::string why = proact::stream_wait_unsupported(k.dev); !why.empty())
          throw Error(fmt::format("gpsm: ct proact: the image chunks go by copy engines waiting on readiness "
                                  "counters (stream memory operations), unsupported on CUDA device {}: {}",
                                  k.dev, why));
        k.chunks = part.image_chunks(r, o.chunk_bytes);
        k.ready.alloc(k.dev, std::max<std::size_t>(1, k.chunks.size()));
        k.expect.assign(k.chunks.size(), 0);
      }
    }
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      GPSM_CUDA(cudaSetDevice(k.dev));
      k.out.assign(static_cast<std::size_t>(n), nullptr);
      k.sent.assign(static_cast<std::size_t>(n), nullptr);
      GPSM_CUDA(cudaEventCreateWithFlags(&k.phase, cudaEventDisableTiming));
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        GPSM_CUDA(cudaStreamCreateWithFlags(&k.out[q], cudaStreamNonBlocking));
        GPSM_CUDA(cudaEventCreateWithFlags(&k.sent[q], cudaEventDisableTiming));
      }
    }
  }

  ~Impl() {
    for (Rank& k : ranks) {
      cudaSetDevice(k.dev);
      for (cudaStream_t s : k.out)
        if (s != nullptr) cudaStreamSynchronize(s), cudaStreamDestroy(s);
      for (cudaEvent_t e : k.sent)
        if (e != nullptr) cudaEventDestroy(e);
      if (k.phase != nullptr) cudaEventDestroy(k.phase);
      for (cudaEvent_t e : k.marks)
        if (e != nullptr) cudaEventDestroy(e);
    }
  }

  const std::int32_t* views(const Rank& k, int m) const { return k.lists.p + offset[static_cast<std::size_t>(m)]; }
  int count(int m) const {
    return static_cast<int>(offset[static_cast<std::size_t>(m) + 1] - offset[static_cast<std::size_t>(m)]);
  }

  // Every rank's next work waits for every copy just enqueued (to it, and from it).
  void join() {
    for (int q = 0; q < n; ++q) {
      Rank& k = ranks[static_cast<std::size_t>(q)];
      GPSM_CUDA(cudaSetDevice(k.dev));
      for (int r = 0; r < n; ++r) {
        if (r == q) continue;
        GPSM_CUDA(cudaStreamWaitEvent(k.st, ranks[static_cast<std::size_t>(r)].sent[q], 0));
        GPSM_CUDA(cudaStreamWaitEvent(k.st, k.sent[r], 0));
      }
    }
  }

  // Rank r's part [begin, end) (floats) of buffer buf(rank) goes to every other rank's buf.
  void copies(const std::function<float*(Rank&)>& buf, const std::function<Span(int)>& part_of) {
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span e = part_of(r);
      GPSM_CUDA(cudaSetDevice(k.dev));
      GPSM_CUDA(cudaEventRecord(k.phase, k.st));
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        GPSM_CUDA(cudaStreamWaitEvent(k.out[q], k.phase, 0));
        if (e.size() > 0)
          GPSM_CUDA(cudaMemcpyAsync(buf(ranks[static_cast<std::size_t>(q)]) + e.begin, buf(k) + e.begin,
                                    static_cast<std::size_t>(e.size()) * sizeof(float), cudaMemcpyDefault, k.out[q]));
        GPSM_CUDA(cudaEventRecord(k.sent[q], k.out[q]));
      }
    }
    join();
  }

  // The same by NCCL: one in-place broadcast per owner, all in one group.
  void gather(const std::function<float*(Rank&)>& buf, const std::function<Span(int)>& part_of) {
#if GPSM_HAVE_NCCL
    GPSM_NCCL(ncclGroupStart());
    for (int root = 0; root < n; ++root) {
      const Span e = part_of(root);
      if (e.size() == 0) continue;
      for (int q = 0; q < n; ++q) {
        Rank& k = ranks[static_cast<std::size_t>(q)];
        float* p = buf(k) + e.begin;
        GPSM_NCCL(ncclBroadcast(p, p, static_cast<std::size_t>(e.size()), ncclFloat, root, (*comms)[q], k.st));
      }
    }
    GPSM_NCCL(ncclGroupEnd());
#else
    (void)buf, (void)part_of;
    throw Error(kNcclMissing);
#endif
  }

  void exchange(const std::function<float*(Rank&)>& buf, const std::function<Span(int)>& part_of) {
    if (n == 1 || o.exchange == CtExchange::elided) return;
    if (o.exchange == CtExchange::nccl)
      gather(buf, part_of);
    else
      copies(buf, part_of);
  }

  // Phases 2-4 with the slab's chunks pushed to every peer as their counters fill (proact, n > 1).
  // Every rank's update is launched before any copy is enqueued: the chunks' waits and copies take
  // the host ~2 us each (64 per peer at medium on 2 GPUs), which would otherwise delay the next
  // rank's update by that much every subset. The waits still reach the copy streams long before
  // the first chunk is ready (a few tenths of the update).
  void update_proact(int m, std::size_t after_update) {
    const int nx = 1 - cur;
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span sl = part.slab(r);
      GPSM_CUDA(cudaSetDevice(k.dev));
      GPSM_CUDA(cudaEventRecord(k.phase, k.st));  // the copies start behind what the update waited for
      launch_update_planes_counted(g, pen, k.d.p, s.subsets, k.x[cur], k.poses.p, k.res[parity], views(k, m),
                                   count(m), static_cast<int>(sl.begin), static_cast<int>(sl.end), k.x[nx],
                                   k.ready.p, per, k.st);
      GPSM_CUDA(cudaEventRecord(k.marks[after_update], k.st));
      for (std::size_t c = 0; c < k.chunks.size(); ++c) k.expect[c] += static_cast<std::uint32_t>(k.chunks[c].target);
    }
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span sl = part.slab(r);
      GPSM_CUDA(cudaSetDevice(k.dev));
      const std::int64_t slab0 = sl.begin * g.nx * g.nz;  // the slab's first float
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        cudaStream_t cs = k.out[q];
        GPSM_CUDA(cudaStreamWaitEvent(cs, k.phase, 0));
        float* dst = ranks[static_cast<std::size_t>(q)].x[nx] + slab0;
        const float* src = k.x[nx] + slab0;
        for (std::size_t c = 0; c < k.chunks.size(); ++c) {
          const Chunk& ch = k.chunks[c];
          proact::stream_wait_geq(cs, k.ready.p + c, k.expect[c], "ct proact: image chunk ready", &k.waits);
          GPSM_CUDA(cudaMemcpyAsync(dst + ch.byte_begin / 4, src + ch.byte_begin / 4, static_cast<std::size_t>(ch.bytes),
                                    cudaMemcpyDefault, cs));
        }
        GPSM_CUDA(cudaEventRecord(k.sent[q], cs));
      }
    }
    join();
  }

  // Mark `i` of this iteration on every rank's stream (per-phase timing).
  void mark(std::size_t i) {
    for (Rank& k : ranks) {
      GPSM_CUDA(cudaSetDevice(k.dev));
      GPSM_CUDA(cudaEventRecord(k.marks[i], k.st));
    }
  }

  // Subset m, the `at`-th of the iteration.
  // gps: whether rank r reads array a from its local replica (it subscribes to every page and
  // tracking is off: every load would be local), else through its view (View::load).
  bool reads_local(const gps::Array<float>& a, int r) const {
    return a.holds_every_page(r);
  }

  // Subset m as a user of GPS arrays writes it: each phase stores its part through the views,
  // then a stream-ordered fence (fence_async: the drain enqueued on the streams, no host wait)
  // publishes it to every subscriber before any GPU's next phase.
  void subset_gps(int m, std::size_t at) {
    const std::int64_t cells = g.cells_per_view();
    mark(4 * at);
    for (int r = 0; r < n; ++r) {  // phase 1
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span sh = part.view_share(m, r);
      if (sh.size() == 0) continue;
      GPSM_CUDA(cudaSetDevice(k.dev));
      const std::int32_t* v = views(k, m) + sh.begin;
      const int c = static_cast<int>(sh.size());
      if (reads_local(gimg[cur], r))
        launch_forward_project(g, k.poses.p, k.x[cur], v, c, tile_rows, k.ax.p, k.st, k.split);
      else
        launch_forward_project_gps(g, k.poses.p, gimg[cur].view(r), v, c, tile_rows, k.ax.p, k.st, k.split);
      launch_weighted_residual_gps(g, k.y.p, k.w.p, v, c, k.ax.p, gres[parity].view(r), sh.begin * cells, k.st);
    }
    mark(4 * at + 1);
    ctx.fence_async();
    const int nx = 1 - cur;
    mark(4 * at + 2);
    for (int r = 0; r < n; ++r) {  // phases 2-4
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span sl = part.slab(r);
      GPSM_CUDA(cudaSetDevice(k.dev));
      const bool local = reads_local(gimg[cur], r) && reads_local(gres[parity], r);
      launch_update_planes_gps(g, pen, k.d.p, s.subsets, gimg[cur].view(r), local ? k.x[cur] : nullptr, k.poses.p,
                               gres[parity].view(r), local ? k.res[parity] : nullptr, views(k, m), count(m),
                               static_cast<int>(sl.begin), static_cast<int>(sl.end), gimg[nx].view(r), k.st);
    }
    mark(4 * at + 3);
    ctx.fence_async();
    cur = nx;
    parity = 1 - parity;
  }

  void subset(int m, std::size_t at) {
    if (o.exchange == CtExchange::gps) return subset_gps(m, at);
    const std::int64_t cells = g.cells_per_view();
    mark(4 * at);
    for (int r = 0; r < n; ++r) {  // phase 1
      Rank& k = ranks[static_cast<std::size_t>(r)];
      const Span sh = part.view_share(m, r);
      if (sh.size() == 0) continue;
      GPSM_CUDA(cudaSetDevice(k.dev));
      float* out = k.res[parity] + sh.begin * cells;
      launch_forward_project(g, k.poses.p, k.x[cur], views(k, m) + sh.begin, static_cast<int>(sh.size()), tile_rows,
                             out, k.st, k.split);
      launch_weighted_residual(g, k.y.p, k.w.p, views(k, m) + sh.begin, static_cast<int>(sh.size()), out, k.st);
    }
    mark(4 * at + 1);
    const int b = parity;
    exchange([b](Rank& k) { return k.res[b]; },
             [&](int r) {
               const Span sh = part.view_share(m, r);
               return Span{sh.begin * cells, sh.end * cells};
             });
    const int nx = 1 - cur;
    mark(4 * at + 2);
    if (o.exchange == CtExchange::proact && n > 1) {
      update_proact(m, 4 * at + 3);
    } else {
      for (int r = 0; r < n; ++r) {  // phases 2-4
        Rank& k = ranks[static_cast<std::size_t>(r)];
        const Span sl = part.slab(r);
        GPSM_CUDA(cudaSetDevice(k.dev));
        launch_update_planes(g, pen, k.d.p, s.subsets, k.x[cur], k.poses.p, k.res[parity], views(k, m), count(m),
                             static_cast<int>(sl.begin), static_cast<int>(sl.end), k.x[nx], k.st);
      }
      mark(4 * at + 3);
      const std::int64_t plane = std::int64_t{g.nx} * g.nz;
      exchange([nx](Rank& k) { return k.x[nx]; },
               [&](int r) {
                 const Span sl = part.slab(r);
                 return Span{sl.begin * plane, sl.end * plane};
               });
    }
    cur = nx;
    parity = 1 - parity;
  }

  void wait_all() {
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      GPSM_CUDA(cudaSetDevice(k.dev));
      if (o.exchange == CtExchange::proact && n > 1)
        GPSM_CUDA(proact::bounded_stream_wait(k.st, k.waits, ctx.settings().wait_timeout_ms,
                                              fmt::format("ct proact: rank {}'s iteration", r)));
      else
        GPSM_CUDA(cudaStreamSynchronize(k.st));
    }
  }

  // Adds the iteration's phase times (its marks, every rank idle) to each rank's sum.
  void add_phase_times() {
    for (Rank& k : ranks) {
      const auto ms = [&](std::size_t a, std::size_t b) {
        float t = 0;
        GPSM_CUDA(cudaEventElapsedTime(&t, k.marks[a], k.marks[b]));
        return static_cast<double>(t);
      };
      for (std::size_t at = 0; at < static_cast<std::size_t>(s.subsets); ++at) {
        k.sum.forward_ms += ms(4 * at, 4 * at + 1);
        k.sum.residual_exchange_ms += ms(4 * at + 1, 4 * at + 2);
        k.sum.update_ms += ms(4 * at + 2, 4 * at + 3);
        k.sum.image_exchange_ms += ms(4 * at + 3, 4 * at + 4);
      }
    }
    ++iterations_timed;
  }

  // The cost and RMSE of rank 0's current image (untimed).
  void record(PwlsRun& run, const std::vector<float>& truth, std::vector<float>& host) {
    Rank& z = ranks[0];
    GPSM_CUDA(cudaSetDevice(z.dev));
    DevBuf<std::int32_t>& every = all_;
    const float* image = z.x[cur];
    if (o.exchange == CtExchange::gps) {
      // Rank 0's replica is current only on the pages it subscribes to (after learning, the
      // pages it reads): the image is each page from its home, staged on rank 0 for the cost.
      gimg[cur].download_coherent(host.data());
      if (coherent0.p == nullptr) coherent0.alloc(z.dev, host.size());
      GPSM_CUDA(cudaMemcpy(coherent0.p, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
      image = coherent0.p;
    }
    GPSM_CUDA(cudaMemsetAsync(sums.p, 0, 2 * sizeof(double), z.st));
    launch_forward_project(g, z.poses.p, image, every.p, g.views, tile_rows, ax.p, z.st, every_split);
    launch_data_term(ax.p, z.y.p, z.w.p, g.sinogram_cells(), sums.p, z.st);
    launch_penalty_pairs(g, pen, image, sums.p + 1, z.st);
    double h[2];
    GPSM_CUDA(cudaMemcpyAsync(h, sums.p, sizeof(h), cudaMemcpyDeviceToHost, z.st));
    if (o.exchange != CtExchange::gps)
      GPSM_CUDA(cudaMemcpyAsync(host.data(), image, host.size() * sizeof(float), cudaMemcpyDeviceToHost, z.st));
    GPSM_CUDA(cudaStreamSynchronize(z.st));
    run.cost.push_back(0.5 * h[0] + pen.beta * h[1]);
    if (!truth.empty()) run.rmse_hu.push_back(rmse_hu(host, truth));
  }
  DevBuf<std::int32_t> all_;  // rank 0: every view, for the cost's projection
  DevBuf<float> coherent0;    // gps: rank 0's copy of the coherent image, for the cost
};

MultiGpuPwls::MultiGpuPwls(gps::Context& ctx, const Geometry& g, const Scan& scan, const PwlsSettings& s,
                           MultiOptions o)
    : p_(std::make_unique<Impl>(ctx, g, scan, s, o)) {
  const std::vector<std::int32_t> all = all_views(g);
  upload(p_->all_, ctx.device(0), all.data(), all.size());
}

MultiGpuPwls::~MultiGpuPwls() = default;

PwlsRun MultiGpuPwls::solve(const std::vector<float>& x0, int iterations, const std::vector<float>& truth,
                            std::vector<double>* seconds, Record record) {
  Impl& p = *p_;
  if (x0.size() != static_cast<std::size_t>(p.g.voxels()))
    throw std::invalid_argument(fmt::format("ct: x0 of {} voxels for a {}-voxel image", x0.size(), p.g.voxels()));
  p.cur = 0;
  p.parity = 0;
  p.iterations_timed = 0;
  for (Rank& k : p.ranks) k.sum = {};
  if (p.o.exchange == CtExchange::gps) {
    for (int b = 0; b < 2; ++b) p.gimg[b].upload(x0);  // every replica (the fence first)
    // One GPU learns nothing: it already subscribes to every page (an array starts fully
    // replicated), and no byte crosses a link (gps_link_bytes stays 0; ~50 s saved at the seed).
    if (!p.tracked && p.n > 1) {
      // The subscriptions learned from one untimed iteration (each subset once: every page of the
      // image and of the residual buffers a GPU reads or writes), as a user would learn them.
      p.ctx.tracking_start();
      for (std::size_t at = 0; at < p.order.size(); ++at) p.subset(p.order[at], at);
      p.mark(4 * p.order.size());
      p.ctx.tracking_stop();
      p.tracked = true;
      // Link bytes of one more untimed iteration, counted by the runtime (counting costs time).
      gps::ArrayBase* arrays[] = {&p.gimg[0], &p.gimg[1], &p.gres[0], &p.gres[1]};
      p.gps_link_bytes = counted_link_bytes(arrays, [&] {
        for (std::size_t at = 0; at < p.order.size(); ++at) p.subset(p.order[at], at);
        p.mark(4 * p.order.size());
        p.ctx.fence();
      });
      p.cur = 0;
      p.parity = 0;
      for (int b = 0; b < 2; ++b) p.gimg[b].upload(x0);
    }
  }
  for (Rank& k : p.ranks) {
    if (p.o.exchange == CtExchange::gps) continue;  // uploaded above
    GPSM_CUDA(cudaSetDevice(k.dev));
    // Both buffers: the elided run never fills the peers' slabs, which then stay x0, not garbage.
    for (int b = 0; b < 2; ++b)
      GPSM_CUDA(cudaMemcpy(k.x[b], x0.data(), x0.size() * sizeof(float), cudaMemcpyHostToDevice));
    if (!k.chunks.empty()) {  // counters only grow within a solve (ct_ready.hpp)
      GPSM_CUDA(cudaMemset(k.ready.p, 0, k.chunks.size() * sizeof(std::uint32_t)));
      std::fill(k.expect.begin(), k.expect.end(), 0u);
    }
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  PwlsRun run;
  const bool keep = record == Record::every_iteration;
  std::vector<float> host(keep ? x0.size() : 0);
  if (keep) p.record(run, truth, host);
  for (int it = 0; it < iterations; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t at = 0; at < p.order.size(); ++at) p.subset(p.order[at], at);
    p.mark(4 * p.order.size());
    p.wait_all();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (seconds != nullptr) seconds->push_back(sec);
    p.add_phase_times();
    if (keep) p.record(run, truth, host);
  }
  run.x = std::move(host);
  return run;
}

std::string MultiGpuPwls::timing() const {
  const Impl& p = *p_;
  std::string t = fmt::format(
      "host wall clock of each iteration's {} subset updates (enqueue to every GPU idle), exchanges included; "
      "setup, d = A^T W A 1 and the cost and RMSE after each iteration (on GPU 0) excluded",
      p.s.subsets);
  if (p.n == 1) return t;
  switch (p.o.exchange) {
    case CtExchange::copies:
      t += "; residual rows and image slabs by cudaMemcpyAsync to every peer after each phase (a stream per peer)";
      break;
    case CtExchange::nccl: t += "; residual rows and image slabs by grouped ncclBroadcast after each phase"; break;
    case CtExchange::proact:
      t += fmt::format("; residual rows by copies after phase 1; image chunks of up to {} voxel columns ({} B) by "
                       "copy engines waiting on per-chunk readiness counters during the update (stream memory "
                       "operations)",
                       p.per, chunk_bytes());
      break;
    case CtExchange::elided: t += "; every exchange elided (the bound: the image is not a result)"; break;
    case CtExchange::gps: {
      t += fmt::format("; image and residual buffers in GPS arrays ({} publishing, {} B pages), each GPU storing its "
                       "rows and slab through its views, a stream-ordered fence (Context::fence_async) after each phase; "
                       "subscriptions learned from one untimed tracked iteration: pages subscribed per GPU, image ",
                       gps::mode_name(p.gimg[0].mode()), p.gimg[0].page_bytes());
      for (int r = 0; r < p.n; ++r)
        t += fmt::format("{}{}", r ? "/" : "", p.gimg[0].subscriptions().summary().pages_per_device[r]);
      t += fmt::format(" of {}, residual ", p.gimg[0].subscriptions().pages());
      for (int r = 0; r < p.n; ++r)
        t += fmt::format("{}{}", r ? "/" : "", p.gres[0].subscriptions().summary().pages_per_device[r]);
      t += fmt::format(" of {}; reads (local: the replica, every page held; view: View::load) per GPU ",
                       p.gres[0].subscriptions().pages());
      for (int r = 0; r < p.n; ++r)
        t += fmt::format("{}{}", r ? "/" : "",
                         p.reads_local(p.gimg[0], r) && p.reads_local(p.gres[0], r) ? "local" : "view");
      break;
    }
  }
  return t;
}

std::vector<PhaseTimes> MultiGpuPwls::phase_times() const {
  const Impl& p = *p_;
  std::vector<PhaseTimes> out;
  const double per = 1.0 / std::max(1, p.iterations_timed);
  for (const Rank& k : p.ranks)
    out.push_back({k.sum.forward_ms * per, k.sum.residual_exchange_ms * per, k.sum.update_ms * per,
                   k.sum.image_exchange_ms * per});
  return out;
}

double MultiGpuPwls::link_bytes_per_iteration() const {
  const Impl& p = *p_;
  if (p.n == 1 || p.o.exchange == CtExchange::elided) return 0;
  if (p.o.exchange == CtExchange::gps) return p.gps_link_bytes;
  return static_cast<double>(p.part.iteration_bytes());
}

std::int64_t MultiGpuPwls::chunk_bytes() const {
  const Impl& p = *p_;
  std::int64_t largest = 0;  // a slab smaller than the request is one chunk
  for (const Rank& k : p.ranks)
    for (const Chunk& c : k.chunks) largest = std::max(largest, c.bytes);
  return largest;
}

std::shared_ptr<const std::vector<float>> MultiGpuPwls::curvature() const { return p_->curvature; }

}  // namespace gpsm::apps::ct
