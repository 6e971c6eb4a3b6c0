// heat3d / wave3d with PROACT decoupled halo transfers (`gpsm bench --paradigm proact`, PROACT
// dissertation ch. II): the step counts, per edge, the blocks that finished writing it
// (Step::ready), and copy engines waiting on the counts through stream memory operations
// (proact/stream_wait.hpp) ship the edge planes into the neighbours' halos while the interior
// chunks are still being computed: no host round trip, no copy behind the whole kernel
// (memcpy's), no peer stores from the SMs (p2p_inline's). What is counted and copied:
// stencil3d_proact_plan.hpp (plain C++, tested).
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/stencil3d/stencil3d_proact_plan.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/dev_buf.hpp"
#include "common/cuda_check.hpp"
#include "proact/stream_wait.hpp"

namespace gpsm::apps::stencil3d {
namespace {

class ProactRun final : public HostLoop {
 public:
  ProactRun(gps::Context& ctx, Kind kind, const Problem& p)
      : HostLoop(ctx, p, true), slabs_(ctx, kind, p), kind_(kind) {
    if (n_ > 1 && p.axis == Axis::x) why_ = kProactAlongX;
    ready_.resize(n_);
    side_.assign(n_, {nullptr, nullptr});
    before_.assign(n_, nullptr);
    shipped_.assign(n_, {nullptr, nullptr});
    copies_.resize(n_);
    target_.assign(n_, {});
    expect_.assign(n_, {0, 0});
    std::vector<Slab3D> slabs;
    for (int r = 0; r < n_; ++r) slabs.push_back(slabs_.slab(r));
    for (int r = 0; r < n_; ++r) {
      const int dev = ctx.device(r);
      GPSM_CUDA(cudaSetDevice(dev));
      ready_[r].alloc(dev, 2);
      GPSM_CUDA(cudaMemset(ready_[r].p, 0, 2 * sizeof(std::uint32_t)));
      GPSM_CUDA(cudaEventCreateWithFlags(&before_[r], cudaEventDisableTiming));
      for (int side = 0; side < 2; ++side) {
        GPSM_CUDA(cudaStreamCreateWithFlags(&side_[r][side], cudaStreamNonBlocking));
        GPSM_CUDA(cudaEventCreateWithFlags(&shipped_[r][side], cudaEventDisableTiming));
      }
      if (n_ == 1 || !why_.empty()) continue;
      if (const std::string w = proact::stream_wait_unsupported(dev); !w.empty()) {
        why_ = "the proact paradigm ships halo planes by copy engines waiting on counters (stream memory "
               "operations), unsupported here: " + w;
        continue;
      }
      if (loop_launch_from_env() == LoopLaunch::graph && graph_why_.empty()) {
        const std::string w = proact::stream_wait_capture_unsupported(dev);
        if (!w.empty()) graph_why_ = fmt::format("GPU {}: {}", dev, w);
      }
      copies_[r] = proact_copies(slabs, r);
      // Per buffer parity (the float4 choice follows the buffers' alignment, the plan the variant).
      const Slab3D& s = slabs_.slab(r);
      for (int c = 0; c < 2; ++c)
        for (const HaloCopy& h : copies_[r])
          target_[r][c][h.side] =
              static_cast<std::uint32_t>(ready_target(step_plan(kind_, step_of(r, c)), s.count, s.radius, h.side));
    }
  }
  ~ProactRun() override {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      for (int side = 0; side < 2; ++side) {
        if (side_[r][side] != nullptr) cudaStreamDestroy(side_[r][side]);
        if (shipped_[r][side] != nullptr) cudaEventDestroy(shipped_[r][side]);
      }
      if (before_[r] != nullptr) cudaEventDestroy(before_[r]);
    }
  }

  std::string check() const override { return why_; }
  // Buffer 1's halo planes (written first) are NaN until a copy fills them: a missing copy shows.
  void init() override { slabs_.init(true); }
  std::vector<float> gather() const override { return slabs_.gather(p_.iters % 2); }
  // Whole planes by copy engine, as memcpy.
  double link_bytes_per_iter() override { return slabs_.halo_bytes(true); }
  std::string timing() const override {
    std::string t = HostLoop::timing();
    if (t.empty()) {
      t = "host wall clock of the iteration loop (setup, initial values and verification excluded), divided by its "
          "iterations";
      if (!graph_why_.empty())
        t += ", a launch per GPU per iteration: stream waits do not go into a CUDA graph here (" + graph_why_ + ")";
    }
    if (n_ > 1) t += "; edge planes by copy engines waiting on per-edge ready counters (stream memory operations)";
    return t;
  }

 private:
  // The one GPU has no neighbours: plain steps, which a graph holds. Else the graph holds stream
  // waits too, where the driver captures them (stream_wait_capture_unsupported, asked in the
  // constructor; GPSM_HOST_LOOP=stream skips both the question and the graph).
  bool graph_ok() const override { return n_ == 1 || graph_why_.empty(); }

  Step step_of(int r, int c) const {
    const Slab3D& s = slabs_.slab(r);
    Step k;
    k.in = slabs_.buf(r, c);
    k.out = slabs_.buf(r, 1 - c);
    k.box = box_of(s);
    if (n_ > 1) {
      if (s.has_lower()) k.ready[0] = ready_[r].p;
      if (s.has_upper()) k.ready[1] = ready_[r].p + 1;
    }
    return k;
  }

  // The counters start every solve at 0 (one 8-byte memset per GPU, in the loop so that a graph
  // launch needs nothing else) and only grow: after iteration t a side's counter holds the sum
  // of its targets over iterations 0..t, which is what that iteration's copy waits for (cyclic
  // >=, so a wrap of the 32 bits is harmless). Simpler than a per-iteration phase in the kernel:
  // the kernel only adds 1, and a count of blocks needs no reset between iterations.
  void before_step(int r, int it) override {
    if (n_ == 1 || it != 0) return;
    GPSM_CUDA(cudaMemsetAsync(ready_[r].p, 0, 2 * sizeof(std::uint32_t), ctx_.stream(r)));
    expect_[r] = {0, 0};
  }

  // The step (counters on), then per edge, on that edge's copy stream, behind everything this
  // rank's stream waited for (the neighbours' previous iteration, which read the halos about to
  // be overwritten): a wait for the edge's count and the copy into the neighbour's halo, from the
  // buffer the step writes (wave3d: next; prev's halos are never read, as memcpy ships). The
  // rank's stream waits for the copies, so the iteration's event covers them. A stream per edge,
  // so the two directions do not queue behind each other; their waits are enqueued after the
  // step, so a hardware queue shared with the step never holds it behind them.
  void step(int r, int it) override {
    const int c = it & 1;
    cudaStream_t st = ctx_.stream(r);
    const Step k = step_of(r, c);
    if (n_ == 1) {
      launch_step(kind_, k, st);
      return;
    }
    GPSM_CUDA(cudaEventRecord(before_[r], st));
    launch_step(kind_, k, st);
    for (const HaloCopy& h : copies_[r]) {
      cudaStream_t cs = side_[r][h.side];
      expect_[r][h.side] += target_[r][c][h.side];
      GPSM_CUDA(cudaStreamWaitEvent(cs, before_[r], 0));
      proact::stream_wait_geq(cs, ready_[r].p + h.side, expect_[r][h.side],
                                h.side == 0 ? "heat3d/wave3d proact: lower edge ready" : "heat3d/wave3d proact: upper edge ready");
      copy(h, r, 1 - c, cs);
      GPSM_CUDA(cudaEventRecord(shipped_[r][h.side], cs));
      GPSM_CUDA(cudaStreamWaitEvent(st, shipped_[r][h.side], 0));
    }
  }

  // cudaMemcpyAsync / cudaMemcpy2DAsync between the two GPUs' pointers (peer access on: a direct
  // peer copy), not cudaMemcpyPeerAsync, which stream capture refuses (see the memcpy paradigm).
  void copy(const HaloCopy& h, int r, int b, cudaStream_t cs) const {
    const float* src = slabs_.buf(r, b) + h.src;
    float* dst = slabs_.buf(h.to, b) + h.dst;
    const std::size_t f = sizeof(float);
    if (h.height == 1)
      GPSM_CUDA(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(h.width) * f, cudaMemcpyDefault, cs));
    else
      GPSM_CUDA(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(h.dst_pitch) * f, src,
                                  static_cast<std::size_t>(h.src_pitch) * f, static_cast<std::size_t>(h.width) * f,
                                  static_cast<std::size_t>(h.height), cudaMemcpyDefault, cs));
  }

  Slabs slabs_;
  Kind kind_;
  std::vector<DevBuf<std::uint32_t>> ready_;                 // [rank]: [0] lower edge, [1] upper edge
  std::vector<std::array<cudaStream_t, 2>> side_;            // [rank][side]: the copy streams
  std::vector<cudaEvent_t> before_;                          // [rank]: before the step
  std::vector<std::array<cudaEvent_t, 2>> shipped_;          // [rank][side]: after the copy
  std::vector<std::vector<HaloCopy>> copies_;                // [rank]
  std::vector<std::array<std::array<std::uint32_t, 2>, 2>> target_;  // [rank][parity][side]: counts per step
  std::vector<std::array<std::uint32_t, 2>> expect_;         // [rank][side]: what the next wait waits for
  std::string why_, graph_why_;
};

}  // namespace

std::unique_ptr<Run> make_proact_run(gps::Context& ctx, Kind kind, const Problem& p) {
  return std::make_unique<ProactRun>(ctx, kind, p);
}

}  // namespace gpsm::apps::stencil3d
