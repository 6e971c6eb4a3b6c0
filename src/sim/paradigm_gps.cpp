// The GPS hardware paradigms (sim/paradigm.hpp): every GPU holds a replica; its stores to its own
// replica are published to the GPUs subscribed to the stored page, through a remote write queue
// per destination (sim/write_queue.hpp): GPS drains it entry by entry, FinePack packs it.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <memory>
#include <vector>

#include "sim/paradigm.hpp"
#include "sim/write_queue.hpp"

namespace gpsm::sim::engine_detail {

namespace {

constexpr std::size_t kGpsProfileIterations = 2;  // GPS profiling phase: the first two iterations

// Hooks: setup (the subscriptions the profiling phase learns), on_local (a store to the GPU's own
// replica is published), on_remote_store (a store to a peer's memory is queued to it),
// on_kernel_end (the kernel's end fences: the queues drain), on_iteration_transfers (the queues'
// wire bytes join the links'); the traffic overlaps the kernels (the default).
class GpsModel final : public ParadigmModel {
 public:
  GpsModel(const RunCtx& c, bool pack) : ParadigmModel(c), pack_(pack) {}

  void setup() override {
    setup_subscriptions();
    for (int a = 0; a < c.G; ++a)
      for (int b = 0; b < c.G; ++b)
        queues_.emplace_back(int(c.o.write_queue_entries), pack_, c.o.finepack_subheader, &c.sys.link, &c.lm);
  }
  void on_kernel_end(KernelPass& k, double) override {
    for (int d = 0; d < c.G; ++d) queue(k.g, d).fence();  // kernel end drains
  }
  void on_iteration_transfers(IterPass& it) override {
    for (int a = 0; a < c.G; ++a)
      for (int b = 0; b < c.G; ++b) {
        WriteQueue& q = queue(a, b);
        it.W[a][b] += q.wire;
        it.useful += q.payload;
        q.wire = q.payload = q.writes = 0;
      }
  }
  std::string describe() const override {
    return pack_ ? "FinePack: GPS's queue drained whole into packed messages (outer header + sub-headers)"
                 : "GPS: published stores to subscribed pages through a per-destination write queue of 128-B entries "
                   "(FIFO drain, fence at kernel end)";
  }

 protected:
  void on_local(KernelPass& k, const Access& x) override {
    k.local(x);
    const Allocation* a = x.a;
    if (!x.st || a == nullptr || a->kind != MemKind::replica || a->group < 0) return;
    // publish: every other GPU subscribed to the stored page gets the store
    auto& subs = subscribed_[a->group];
    Span rel = x.span;
    rel.lo -= a->base;
    rel.hi -= a->base;
    split_by(rel, gps_page(), [&](const Span& piece) {
      const std::uint64_t pg = piece.lo / gps_page();
      for (int h = 0; h < c.G; ++h)
        if (h != k.g && pg < subs[h].size() && subs[h][pg]) enqueue(k.g, h, piece, k.w);
    });
  }
  void on_remote_store(KernelPass& k, const Access& x) override { enqueue(k.g, x.owner, x.span, k.w); }

 private:
  std::uint64_t gps_page() const { return std::max<std::uint64_t>(std::uint64_t(c.o.gps_page_bytes), kLine); }
  WriteQueue& queue(int src, int dst) { return queues_[std::size_t(src) * c.G + dst]; }
  void enqueue(int src, int dst, const Span& s, double w) {
    WriteQueue& q = queue(src, dst);
    line_masks(s, [&](std::uint64_t line, const Mask& m) { q.store(line, m, w); });
  }
  void setup_subscriptions();

  const bool pack_;             // FinePack
  std::vector<WriteQueue> queues_;  // [src * G + dst]
  std::unordered_map<int, std::vector<std::vector<char>>> subscribed_;  // replica group -> [gpu][page]
};

void GpsModel::setup_subscriptions() {
  const Trace& t = c.t;
  const int G = c.G;
  for (const Allocation& a : t.allocations)
    if (a.kind == MemKind::replica && a.group >= 0 && !subscribed_.count(a.group)) {
      const std::uint64_t n = (a.bytes + gps_page() - 1) / gps_page();
      subscribed_[a.group].assign(G, std::vector<char>(n, 0));
    }
  if (subscribed_.empty()) return;
  // Profiling (GPS's access tracking between cuGPSTrackingStart/Stop): the first
  // kGpsProfileIterations iterations (one per buffer of the double-buffered apps); a GPU stays
  // subscribed to the pages of a GPS array it loaded (or did atomics on) there. Stores alone do
  // not subscribe: a GPU that only writes a page needs no one else's updates of it.
  const std::size_t n_prof = std::min<std::size_t>(t.iterations.size(), kGpsProfileIterations);
  for (std::size_t ii = 0; ii < n_prof; ++ii)
    for (const KernelTrace& k : t.iterations[ii].kernels)
      for (const BlockTrace& b : k.blocks)
        for (const AccessRun& r : b.runs) {
          if (r.op == Op::store) continue;
          const Span s = span_of(r);
          const int ai = c.index.find(s.lo);
          if (ai < 0) continue;
          const Allocation& a = t.allocations[ai];
          if (a.kind != MemKind::replica || a.group < 0 || k.gpu < 0 || k.gpu >= G) continue;
          auto& sub = subscribed_[a.group][k.gpu];
          Span rel = s;
          rel.lo -= a.base;
          rel.hi -= a.base;
          split_by(rel, gps_page(), [&](const Span& piece) {
            const std::uint64_t pg = piece.lo / gps_page();
            if (pg < sub.size()) sub[pg] = 1;
          });
        }
}

}  // namespace

std::unique_ptr<ParadigmModel> make_gps_model(SimParadigm p, const RunCtx& c) {
  return std::make_unique<GpsModel>(c, p == SimParadigm::finepack);
}

}  // namespace gpsm::sim::engine_detail
