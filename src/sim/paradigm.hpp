#pragma once
// The simulator's paradigms as strategies of its engine (sim/engine.cpp): the engine replays the
// trace (iterations, kernels, blocks, access runs) and prices what is common to every paradigm
// (a kernel's local time, the links' time, the host loop); a ParadigmModel says what a paradigm
// does differently, through hooks at the points where paradigms differ:
//   setup               before the first iteration (UM's first touch, GPS's profiling phase)
//   on_iteration_begin  an iteration starts (the model's per-iteration state is cleared)
//   on_access           per access run: local, a demand load of a peer's memory, a peer store, a
//                       halo stored for a copy, a queued write, a managed page's fault ... By
//                       default it routes the run to on_local (the GPU's own memory) or, for a
//                       store to a peer's, on_remote_store, which most models override instead
//   on_kernel_end       a kernel's time is known (GPS's fence, PROACT's chunk copies, UM's fault times)
//   on_iteration_transfers   before the links are priced (GPS's queues hand their wire bytes over)
//   iteration_times     each GPU's time and transfer time of the iteration, from its kernels,
//                       launches and link time (overlapped, copied after, faulted, none)
// plus what the host loop and the result need (transfers_elided, push_insts, host_copies, describe).
// One class per paradigm or family: paradigm_copy.cpp (memcpy, proact), paradigm_um.cpp (um,
// um_hints), paradigm_gps.cpp (gps_hw, finepack), paradigm_direct.cpp (p2p_inline, rdl,
// infinite). Internal to the simulator.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine.hpp"
#include "sim/engine_access.hpp"
#include "sim/kernel_cost.hpp"
#include "sim/march.hpp"
#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim::engine_detail {

// One simulation's inputs, as the engine and its paradigm model see them.
struct RunCtx {
  RunCtx(const Trace& t, const System& s, const SimOptions& o, const LinkModel& lm);  // scales the link
  const Trace& t;
  System sys;  // link scaled (SimOptions::link_scale)
  const SimOptions& o;
  const LinkModel& lm;
  AllocIndex index;
  int G;        // GPUs
  double wave;  // blocks resident at once on a GPU (SMs x blocks per SM)

  // The least time a GPU needs to send `wire` bytes to its peers in one phase of an all-to-all:
  // at the measured all-to-all egress (System::egress_GBps, wire bytes of large packets). 0 where
  // no egress cap applies (egress 0).
  double egress_seconds(double wire) const { return sys.egress_GBps > 0 ? wire / (sys.egress_GBps * 1e9) : 0; }
};

// One iteration's accumulators, per GPU where a vector (by GPU index).
struct IterPass {
  explicit IterPass(int G);
  std::vector<std::vector<double>> W;  // wire bytes src -> dst through the links
  std::vector<double> stored;          // payload of the SM stores a GPU puts into peers' memory
  std::vector<double> kern;            // its kernels' time
  std::vector<double> launches;        // its launches' time (0 without a host loop)
  std::vector<int> kernels_on;         // its kernels so far
  std::vector<double> read_waves;      // waves of its blocks that wait on remote loads (one round trip each)
  // Marching kernels' dependent remote loads (rdl, um_hints): the time its blocks wait for them,
  // on the kernel's critical path (KernelPass::march_read_wait)
  std::vector<double> read_wait;
  double useful = 0;     // payload the app needed moved
  double copy_wire = 0;  // wire bytes of copies outside W (PROACT's chunks)
  double start_s = 0;    // the run's time before this iteration
  double launch_s = 0;   // one launch's cost (a graph node's in a CUDA graph; 0 without a host)
  bool graph = false;    // the iteration runs as one CUDA graph
  bool named = false;    // the trace names its host calls and they are priced one by one
  // Set by the engine before iteration_times: each GPU's link time and the wire bytes so far
  std::vector<double> link_t;
  double wire = 0;
  // Set by iteration_times: each GPU's time in the iteration and its transfer part
  std::vector<double> gpu_t, xfer;
};

// One access run of the current block, resolved to its allocation.
struct Access {
  Span span;
  Op op = Op::load;
  bool ld = false, st = false;  // it loads / stores (an atomic both)
  int alloc = -1;               // index in the trace's allocations, -1: none holds it
  const Allocation* a = nullptr;
  int owner = -1;  // the other GPU whose memory it is, -1: the kernel's GPU's own (or no allocation's)
};

// One kernel being replayed: what its blocks moved locally (acc) and over the links (into the
// iteration's W), and the accesses the paradigm models route through it.
class KernelPass {
 public:
  KernelPass(const RunCtx& c, IterPass& it, const KernelTrace& k);

  void begin_block(const BlockTrace& b);
  Access access_of(const AccessRun& r) const;
  void count_request(const Access& x);  // a warp's store or atomic request (the hot word)
  void end_block();                     // the block's remote L1 loads go over the link
  KernelBound bound(bool push_insts);   // the kernel's time (kernel_cost.hpp), once its blocks ran
  void march_read_wait();               // a marching kernel's waits for its remote loads (IterPass::read_wait)

  // What the models make of an access (the current block's weight and wave):
  void local(const Access& x) { local(x, x.span); }
  void local(const Access& x, const Span& s);                // through this GPU's own memory
  void remote_read(int owner, int reader, const Span& s);    // `reader` loads `owner`'s bytes
  void remote_write(int src, int dst, const Span& s);        // `src`'s SMs store into `dst`
  void remote_load(int owner, const Span& s);                // this GPU's demand load of `owner`'s memory

  const RunCtx& c;
  IterPass& it;
  const KernelTrace& k;
  const int g;             // the kernel's GPU
  const KernelShape shape;
  const double n_waves;
  // the current block
  const BlockTrace* block = nullptr;
  double w = 0;         // its weight
  double wave_idx = 0;  // its wave
  // position in the GPU's iteration: kernel ordinal + block / grid (UmPages::first)
  double position() const { return it.kernels_on[g] + double(block->block) / shape.grid; }

 private:
  void remote_read_in_wave(int reader);
  LocalAcc acc_;
  std::vector<double> requests_;  // warp store and atomic requests per allocation of this GPU's
  std::vector<double> last_wave_;  // rdl exposure: the last wave counted per reading GPU
  // remote read wire bytes per (reader, owner, wave): the bursts of a marching kernel
  std::vector<std::vector<std::vector<double>>> burst_;
  // A marching block's contiguous remote loads, per owner: they pass its L1 as its local loads
  // do (its neighbour rows and edges are other warps' centres, loaded a step before), so each
  // distinct byte crosses the link once per block (charged at the block's end).
  std::vector<ByteRanges> block_remote_;
};

class ParadigmModel {
 public:
  explicit ParadigmModel(const RunCtx& ctx) : c(ctx) {}
  virtual ~ParadigmModel() = default;
  ParadigmModel(const ParadigmModel&) = delete;
  ParadigmModel& operator=(const ParadigmModel&) = delete;

  virtual void setup() {}
  virtual void on_iteration_begin() {}
  // Default: the GPU's own memory (or an address no allocation holds) is local (on_local);
  // another GPU's is loaded on demand (any paradigm reads a peer's memory the same way) or
  // stored by on_remote_store.
  virtual void on_access(KernelPass& k, const Access& x);
  virtual void on_kernel_end(KernelPass&, double /*kernel_s*/) {}
  virtual void on_iteration_transfers(IterPass&) {}
  // Default: traffic overlapped with the kernels (p2p_inline, rdl, um_hints, gps_hw, finepack).
  virtual void iteration_times(IterPass& it);

  // The transfers-elided bound (infinite): no host loop issues its kernels unless the trace names
  // the loop's calls, and then a multi-GPU run reads nothing back (gpsm bench's elided bound).
  virtual bool transfers_elided() const { return false; }
  virtual bool push_insts() const { return false; }  // blocks issue their pushes' instructions
  virtual int host_copies(int /*gpu*/) const { return 0; }  // copies the host issues per iteration
  virtual std::string describe() const = 0;  // one line: what the model assumed (SimResult::model)

 protected:
  virtual void on_local(KernelPass& k, const Access& x) { k.local(x); }
  // Default: the SMs store into the peer, line by line (p2p_inline, um, um_hints).
  virtual void on_remote_store(KernelPass& k, const Access& x) { k.remote_write(k.g, x.owner, x.span); }

  const RunCtx& c;
};

// The model of paradigm p (one of the factories below).
std::unique_ptr<ParadigmModel> make_paradigm_model(SimParadigm p, const RunCtx& c);
std::unique_ptr<ParadigmModel> make_copy_model(SimParadigm p, const RunCtx& c);     // memcpy, proact
std::unique_ptr<ParadigmModel> make_um_model(SimParadigm p, const RunCtx& c);       // um, um_hints
std::unique_ptr<ParadigmModel> make_gps_model(SimParadigm p, const RunCtx& c);      // gps_hw, finepack
std::unique_ptr<ParadigmModel> make_direct_model(SimParadigm p, const RunCtx& c);   // p2p_inline, rdl, infinite

}  // namespace gpsm::sim::engine_detail
