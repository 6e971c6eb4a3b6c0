// The Unified Memory paradigms (sim/paradigm.hpp): managed pages placed by first touch (sim/um.hpp),
// then either migrated on fault (um) or left on their preferred location and reached remotely
// (um_hints).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/paradigm.hpp"
#include "sim/um.hpp"

namespace gpsm::sim::engine_detail {

namespace {

// The managed pages of both UM paradigms, per managed allocation (setup: where each lives).
class ManagedModel : public ParadigmModel {
 public:
  using ParadigmModel::ParadigmModel;

  void setup() override {
    const Trace& t = c.t;
    pages_of.assign(t.allocations.size(), -1);
    for (std::size_t i = 0; i < t.allocations.size(); ++i) {
      const Allocation& a = t.allocations[i];
      if (a.kind != MemKind::managed) continue;
      pages_of[i] = int(pages.size());
      pages.emplace_back(int(i), a.base, a.bytes, std::uint64_t(page_bytes()), c.G, a.gpu);
    }
    if (pages.empty() || t.iterations.empty()) return;
    // First touch (before the timed loop, as the bench's um and um_hints do): iteration 0's
    // accesses decide where each page lives (the GPU that stores most to it, else loads most).
    for (const KernelTrace& k : t.iterations[0].kernels)
      for (const BlockTrace& b : k.blocks)
        for (const AccessRun& r : b.runs) {
          const Span s = span_of(r);
          const int a = c.index.find(s.lo);
          if (a >= 0 && pages_of[a] >= 0) touch(pages[pages_of[a]], s, k.gpu, r.op, b.weight);
        }
    for (UmPages& pg : pages) pg.place_first_touch();
  }

 protected:
  double page_bytes() const { return std::max(c.sys.gpu.page_bytes, 4096.0); }
  // The pages of the managed allocation x falls in, nullptr if it is not managed.
  UmPages* pages_for(const Access& x) {
    return x.alloc >= 0 && pages_of[x.alloc] >= 0 ? &pages[pages_of[x.alloc]] : nullptr;
  }
  // pos: when in the GPU's iteration (kernel ordinal + block / grid: UmPages::first)
  void touch(UmPages& pg, const Span& s, int gpu, Op op, double w, double pos = 0) {
    const std::uint64_t base = c.t.allocations[pg.alloc].base, pb = std::uint64_t(page_bytes());
    Span rel = s;
    rel.lo -= base;
    rel.hi -= base;
    split_by(rel, pb, [&](const Span& piece) {
      pg.add(piece.lo / pb, gpu, op != Op::store, op != Op::load, piece.payload() * w, pos);
    });
  }

  std::vector<UmPages> pages;  // by managed allocation
  std::vector<int> pages_of;   // allocation -> index in pages, or -1
};

// Hooks: setup (first touch), on_access (a managed page comes to the GPU: a local access after its
// fault), on_kernel_end (when the kernel ran: the faults' times), iteration_times (the driver's
// faults and migrations before the kernels' time). Stores to another GPU's device memory: peer
// stores (the default).
class UmModel final : public ManagedModel {
 public:
  explicit UmModel(const RunCtx& c) : ManagedModel(c), kspan_(c.G) {}

  void on_access(KernelPass& k, const Access& x) override {
    UmPages* pg = pages_for(x);
    if (pg == nullptr) return ParadigmModel::on_access(k, x);
    k.local(x);
    touch(*pg, x.span, k.g, x.op, k.w, k.position());
  }
  void on_iteration_begin() override {
    for (auto& ks : kspan_) ks.clear();
  }
  void on_kernel_end(KernelPass& k, double tk) override {
    kspan_[k.g].emplace_back(k.it.launches[k.g] + k.it.kern[k.g], tk);
  }
  void iteration_times(IterPass& it) override {
    const GpuParams& gp = c.sys.gpu;
    const LinkParams& L = c.sys.link;
    // The driver's view of this iteration's faults, in time order: the pages that thrash within
    // its lapse pin before they cost (sim/um.hpp UmThrashing). A touch's time: the run so far,
    // then its kernel's start and the block's place in it.
    const UmThrashing th{gp.um_thrash_lapse_us * 1e-6, gp.um_thrash_threshold};
    const double now = it.start_s;
    const auto time_of = [&](int g, double pos) {
      const auto& ks = kspan_[std::size_t(g)];
      if (ks.empty()) return now;
      const std::size_t k = std::min(ks.size() - 1, std::size_t(std::max(0.0, pos)));
      return now + ks[k].first + (pos - double(k)) * ks[k].second;
    };
    for (UmPages& pg : pages) pg.driver_faults(time_of, th);
    for (int g = 0; g < c.G; ++g) {
      const UmFaults f = um_faults(pages, g);
      const double migrated = f.faults * page_bytes(), remote = f.remote;
      const double fault_s = f.batches * gp.fault_us * 1e-6;  // a GPU's batches one after another
      const double mig_wire = migrated > 0 ? c.lm.write_wire(L, page_bytes()) * (migrated / page_bytes()) : 0;
      const double remote_wire = remote > 0 ? c.lm.write_wire(L, remote) : 0;
      it.wire += mig_wire + remote_wire;
      it.useful += migrated + remote;
      it.xfer[g] = std::max(fault_s, c.lm.wire_time(L, mig_wire)) + c.lm.wire_time(L, remote_wire) +
                   std::max(it.link_t[g], 0.0);
      it.gpu_t[g] = it.launches[g] + it.kern[g] + it.xfer[g];
    }
    for (UmPages& pg : pages) pg.end_iteration();  // page ownership after the iteration
  }
  std::string describe() const override {
    return "managed pages placed by first touch; a page touched by a non-owner faults and migrates (page_bytes over "
           "the link), faults to contiguous pages one batch (fault_us each, a GPU's one after another); a page stored "
           "by one GPU pins where its migrations follow each other within the driver's thrashing lapse "
           "(um_thrash_lapse_us) or two GPUs' touches interleave, else keeps migrating; write-shared pages keep "
           "migrating";
  }

 private:
  // Each GPU's kernels' start (after its launch) and duration in the iteration: when a managed
  // page's faults happen (the UM driver's thrashing detection)
  std::vector<std::vector<std::pair<double, double>>> kspan_;
};

// Hooks: setup (first touch: the preferred locations), on_access (a managed page on another GPU
// is loaded and stored remotely through its accessed-by mapping, line by line, no faults); the
// iteration's traffic overlaps the kernels (the default).
class UmHintsModel final : public ManagedModel {
 public:
  using ManagedModel::ManagedModel;

  void on_access(KernelPass& k, const Access& x) override {
    UmPages* pgp = pages_for(x);
    if (pgp == nullptr) return ParadigmModel::on_access(k, x);
    // each page lives on its preferred location; other GPUs reach it through accessed-by
    // mappings, load by load and store by store
    UmPages& pg = *pgp;
    const int g = k.g, G = c.G;
    const std::uint64_t base = x.a->base;
    Span rel = x.span;
    rel.lo -= base;
    rel.hi -= base;
    split_by(rel, std::uint64_t(page_bytes()), [&](const Span& piece) {
      const std::uint64_t page = std::min<std::uint64_t>(piece.lo / std::uint64_t(page_bytes()), pg.n - 1);
      const int home = pg.owner[page];
      Span abs = piece;
      abs.lo += base;
      abs.hi += base;
      if (home == g || home < 0 || home >= G) {
        k.local(x, abs);
      } else {
        if (x.ld && !x.st) k.remote_load(home, abs);
        else if (x.ld) k.remote_read(home, g, abs);
        if (x.st) k.remote_write(g, home, abs);
      }
    });
  }
  std::string describe() const override {
    return "managed pages on their preferred location; other GPUs load/store them remotely at line granularity, no "
           "faults";
  }
};

}  // namespace

std::unique_ptr<ParadigmModel> make_um_model(SimParadigm p, const RunCtx& c) {
  if (p == SimParadigm::um_hints) return std::make_unique<UmHintsModel>(c);
  return std::make_unique<UmModel>(c);
}

}  // namespace gpsm::sim::engine_detail
