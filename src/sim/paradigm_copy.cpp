// The copy paradigms (sim/paradigm.hpp): a kernel stores its halo into its own memory and the
// bytes go to the neighbour by copy engine: memcpy after the kernel, PROACT chunk by chunk while
// it runs.
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/paradigm.hpp"

namespace gpsm::sim::engine_detail {

namespace {

// Hooks: on_remote_store (the halo stored locally, counted per destination), iteration_times
// (the copies after the kernels), host_copies (the copies a named host loop issues).
class MemcpyModel final : public ParadigmModel {
 public:
  explicit MemcpyModel(const RunCtx& c) : ParadigmModel(c), P(c.G, std::vector<double>(c.G, 0.0)) {}

  void on_iteration_begin() override {
    for (auto& row : P) std::fill(row.begin(), row.end(), 0.0);
  }
  void iteration_times(IterPass& it) override {
    const LinkParams& L = c.sys.link;
    for (int g = 0; g < c.G; ++g) {
      double sent = 0;  // wire bytes this GPU copies out
      // In a CUDA graph a copy between kernel nodes takes the measured node time
      // (System::graph_copy_us): 4xH200, heat3d 256^3 on 4 GPUs, two 256-KiB copies per
      // middle GPU took 13.8 us per iteration over infinite, the stream fit gave 6.
      // On a stream the first copy after the kernel takes the measured copy-after-a-kernel
      // time (System::stream_copy_us), the others follow it back to back: 4xH200, a 2-MiB
      // copy right after a kernel 14.88 us where the back-to-back fit gives 7.6; pagerank
      // road:1024's 2-GPU memcpy (one 2.1-MB copy per GPU) measured 34.1 us: 25.8 with the
      // fit, 31.8 with this.
      const bool graph_copy = it.graph && !c.sys.graph_copy_us.empty();
      bool first = !it.graph && !c.sys.stream_copy_us.empty();
      for (int d = 0; d < c.G; ++d)
        if (P[g][d] > 0) {
          // one stream: copies one after another
          it.xfer[g] += graph_copy ? c.sys.graph_copy_s(P[g][d])
                        : first    ? c.sys.stream_copy_s(P[g][d])
                                   : c.lm.copy_time(c.sys, g, d, P[g][d]);
          first = false;
          sent += c.lm.write_wire(L, P[g][d]);
        }
      it.wire += sent;
      // Every GPU copies in the same phase, so the fabric carries an all-to-all of copies: a
      // GPU's copies take at least its bytes at the measured all-to-all copy egress.
      // road:5120 pagerank on 4xH200 (3 x 26.2 MB per GPU): the copies one after another at
      // 395.75 GB/s gave 199 us, the measured memcpy run spent 418 us over infinite's.
      it.xfer[g] = std::max(it.xfer[g], c.egress_seconds(sent));
      it.gpu_t[g] = it.launches[g] + it.kern[g] + it.xfer[g];
    }
  }
  int host_copies(int g) const override {
    int copies = 0;
    for (int d = 0; d < c.G; ++d) copies += P[g][d] > 0 ? 1 : 0;
    return copies;
  }
  std::string describe() const override {
    return "kernel (halo stored locally), then copy-engine copies of the halo bytes, not overlapped; launch + host "
           "sync";
  }

 protected:
  void on_remote_store(KernelPass& k, const Access& x) override {
    k.local(x);  // stored to the local copy of the halo, sent after the kernel
    P[k.g][x.owner] += x.span.payload() * k.w;
    k.it.useful += x.span.payload() * k.w;
  }

 private:
  std::vector<std::vector<double>> P;  // this iteration's halo payload src -> dst
};

// Hooks: on_remote_store (the halo stored locally, filling the destination's chunk), on_kernel_end
// (each chunk copied once the wave holding its last producing block has finished),
// iteration_times (the GPU busy until its last chunk has arrived).
class ProactModel final : public ParadigmModel {
 public:
  explicit ProactModel(const RunCtx& c)
      : ParadigmModel(c), chunk_bytes_(std::max(c.o.proact_chunk_bytes, 1.0)), fill_(c.G, 0.0), wave_(c.G, 0.0),
        end_(c.G, 0.0) {}

  void on_iteration_begin() override { std::fill(end_.begin(), end_.end(), 0.0); }
  // What `wire` bytes of copies hold the GPU's port: a switched GPU (switch_tree, nvswitch) sends
  // everything through its one link to the switch; any GPU at most at its measured all-to-all
  // egress (System::egress_GBps). A direct topology's pairs have links of their own (0).
  double port_seconds(double wire) const {
    const double link = c.sys.topology != Topology::direct ? c.lm.wire_time(c.sys.link, wire) : 0.0;
    return std::max(link, c.egress_seconds(wire));
  }
  void on_kernel_end(KernelPass& k, double tk) override {
    const int G = c.G, g = k.g;
    for (int d = 0; d < G; ++d)
      if (fill_[d] > 0) chunks_.push_back({d, fill_[d], wave_[d]});  // the last, partial one
    // each destination's chunks in order on its own copy pipe; a chunk starts when the wave
    // holding its last producing block has finished (waves progress evenly through the kernel).
    // The pipes share the GPU's port (port_seconds), as memcpy's copies on one stream do: a
    // chunk is not through before its wire bytes and every chunk's before it have left the GPU
    // (CT's image chunks go to every peer at once; the stencils' to one or two).
    std::vector<double> pipe(G, 0);
    double end = tk, port = 0;
    for (const Chunk& ch : chunks_) {
      const double ready = tk * (std::min(ch.wave, k.n_waves - 1) + 1) / k.n_waves;
      const double start = std::max(ready, pipe[ch.dst]);
      const double wire = c.lm.write_wire(c.sys.link, ch.bytes);
      port = std::max(port, ready) + port_seconds(wire);
      pipe[ch.dst] = std::max(start + c.lm.copy_time(c.sys, g, ch.dst, ch.bytes), port);
      k.it.copy_wire += wire;
      end = std::max(end, pipe[ch.dst]);
    }
    end_[g] += end;
    // the next kernel fills chunks of its own
    chunks_.clear();
    std::fill(fill_.begin(), fill_.end(), 0.0);
    std::fill(wave_.begin(), wave_.end(), 0.0);
  }
  void iteration_times(IterPass& it) override {
    for (int g = 0; g < c.G; ++g) {
      it.gpu_t[g] = it.launches[g] + end_[g];
      it.xfer[g] = end_[g] - it.kern[g];
    }
  }
  std::string describe() const override {
    return "halo stored locally; each chunk copied when its producing wave ends, overlapped; tail = last chunk";
  }

 protected:
  void on_remote_store(KernelPass& k, const Access& x) override {
    const int dst = x.owner;
    k.local(x);  // stored to the local copy of the halo, sent per chunk
    k.it.useful += x.span.payload() * k.w;
    fill_[dst] += x.span.payload() * k.w;
    wave_[dst] = std::max(wave_[dst], k.wave_idx);
    while (fill_[dst] >= chunk_bytes_) {  // a chunk is full: it goes
      chunks_.push_back({dst, chunk_bytes_, wave_[dst]});
      fill_[dst] -= chunk_bytes_;
    }
    if (fill_[dst] == 0) wave_[dst] = 0;
  }

 private:
  struct Chunk {
    int dst;
    double bytes;
    double wave;  // the wave of its last producing block
  };
  const double chunk_bytes_;
  std::vector<Chunk> chunks_;       // the current kernel's, in the order they filled
  std::vector<double> fill_, wave_; // per destination: the open chunk's bytes and last wave
  std::vector<double> end_;         // per GPU: when its kernels' last chunks arrived, this iteration
};

}  // namespace

std::unique_ptr<ParadigmModel> make_copy_model(SimParadigm p, const RunCtx& c) {
  if (p == SimParadigm::proact) return std::make_unique<ProactModel>(c);
  return std::make_unique<MemcpyModel>(c);
}

}  // namespace gpsm::sim::engine_detail
