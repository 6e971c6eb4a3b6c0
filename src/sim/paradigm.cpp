// What every paradigm shares (sim/paradigm.hpp): the run's inputs, a kernel's replay (its local
// bytes, demand loads and peer stores over the links) and the default hooks.
#include "sim/paradigm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpsm::sim::engine_detail {

RunCtx::RunCtx(const Trace& t_, const System& s, const SimOptions& o_, const LinkModel& lm_)
    : t(t_), sys(s), o(o_), lm(lm_), index(t_) {
  if (!(o.link_scale > 0)) throw std::invalid_argument("link_scale must be > 0");
  // A link sweep scales everything the link carries: the link itself, the measured copy curves
  // (System::curve_link_scale) and the all-to-all copy egress, a share of the GPU's port (else a
  // sweep past the measured link stays capped at the measured egress).
  sys.link.raw_GBps *= o.link_scale;
  sys.curve_link_scale *= o.link_scale;
  sys.egress_GBps *= o.link_scale;
  G = std::max(t.gpus, 1);
  wave = double(std::max(sys.gpu.sms, 1)) * std::max(sys.gpu.blocks_per_sm, 1);
}

IterPass::IterPass(int G)
    : W(G, std::vector<double>(G, 0.0)),
      stored(G, 0.0),
      kern(G, 0.0),
      launches(G, 0.0),
      kernels_on(G, 0),
      read_waves(G, 0.0),
      read_wait(G, 0.0),
      link_t(G, 0.0),
      gpu_t(G, 0.0),
      xfer(G, 0.0) {}

namespace {
KernelShape shape_of(const RunCtx& c, const KernelTrace& k) {
  KernelShape s;
  s.grid = std::max<double>(k.grid_blocks, double(k.blocks.size()));
  // The kernel's own residency when the trace gives it (registers limit the 3D steps).
  s.wave = k.blocks_per_sm > 0 ? double(std::max(c.sys.gpu.sms, 1)) * k.blocks_per_sm : c.wave;
  // A marching kernel (its blocks march planes: serial_steps) waits for its remote loads'
  // bursts (march_read_wait); any other kernel exposes a round trip per reading wave.
  for (const BlockTrace& b : k.blocks) s.marching = s.marching || b.serial_steps > 0;
  return s;
}
}  // namespace

KernelPass::KernelPass(const RunCtx& c_, IterPass& it_, const KernelTrace& k_)
    : c(c_),
      it(it_),
      k(k_),
      g(k_.gpu),
      shape(shape_of(c_, k_)),
      n_waves(std::max(1.0, std::ceil(shape.grid / shape.wave))),
      requests_(c_.t.allocations.size(), 0.0),
      last_wave_(c_.G, -1),
      block_remote_(c_.G) {
  if (shape.marching)
    burst_.assign(c.G, std::vector<std::vector<double>>(c.G, std::vector<double>(std::size_t(n_waves), 0.0)));
}

void KernelPass::begin_block(const BlockTrace& b) {
  block = &b;
  w = b.weight;
  wave_idx = std::floor(double(b.block) / shape.wave);
  acc_.flops += b.flops * w;
  acc_.weight += w;
  acc_.recorded += 1;
}

Access KernelPass::access_of(const AccessRun& r) const {
  Access x;
  x.span = span_of(r);
  x.op = r.op;
  x.ld = r.op != Op::store;
  x.st = r.op != Op::load;
  x.alloc = c.index.find(x.span.lo);
  x.a = x.alloc >= 0 ? &c.t.allocations[x.alloc] : nullptr;
  if (x.a != nullptr && x.a->gpu != g && x.a->gpu >= 0 && x.a->gpu < c.G) x.owner = x.a->gpu;
  return x;
}

void KernelPass::count_request(const Access& x) {
  if (x.st && x.a != nullptr && x.a->gpu == g) requests_[std::size_t(x.alloc)] += w;  // a run: one warp's request
}

void KernelPass::local(const Access& x, const Span& s) {
  if (x.ld) acc_.add_load(s, w);
  if (x.st) acc_.add_store(s, w);
}

void KernelPass::remote_read_in_wave(int reader) {
  if (!shape.marching && wave_idx != last_wave_[reader]) {
    last_wave_[reader] = wave_idx;
    it.read_waves[reader] += 1;
  }
}

void KernelPass::remote_read(int owner, int reader, const Span& s) {
  line_transactions(s, [&](double pay, double n) {
    const double wire = c.lm.read_wire(c.sys.link, pay) * n * w;
    it.W[owner][reader] += wire;
    if (shape.marching) burst_[reader][owner][std::size_t(std::min(wave_idx, n_waves - 1))] += wire;
  });
  it.useful += s.payload() * w;
  remote_read_in_wave(reader);
}

void KernelPass::remote_write(int src, int dst, const Span& s) {
  line_transactions(s, [&](double pay, double n) { it.W[src][dst] += c.lm.write_wire(c.sys.link, pay) * n * w; });
  it.useful += s.payload() * w;
  it.stored[src] += s.payload() * w;
}

void KernelPass::remote_load(int owner, const Span& s) {
  if (block->serial_steps > 0 && s.contiguous()) add_range(block_remote_[owner], s.lo, s.hi);
  else remote_read(owner, g, s);
}

void KernelPass::end_block() {
  for (int ow = 0; ow < c.G; ++ow) {  // the block's distinct remote load bytes
    ByteRanges& rr = block_remote_[ow];
    if (rr.empty()) continue;
    for (const auto& [lo, hi] : merged(rr))
      for (std::uint64_t a = lo; a < hi;) {  // one contiguous span each (Span's bytes: 32 bits)
        Span x;
        x.lo = a;
        x.hi = std::min<std::uint64_t>(hi, a + (std::uint64_t{1} << 30));
        x.count = 1;
        x.bytes = std::uint32_t(x.hi - x.lo);
        x.stride = x.bytes;
        remote_read(ow, g, x);
        a = x.hi;
      }
    rr.clear();
  }
  acc_.end_block(w, block->serial_steps);
}

KernelBound KernelPass::bound(bool push_insts) {
  return kernel_bound(k, acc_, requests_, c.t.allocations, c.sys.gpu, shape, push_insts);
}

void KernelPass::march_read_wait() {
  if (!shape.marching) return;
  // Dependent remote loads of a march (rdl's remote planes, um_hints' accessed-by pages): a
  // reading block cannot take its next step before its remote plane arrives, and all reading
  // blocks of a wave ask at once, so they wait a round trip plus the burst's wire time through
  // the link (PCIe reads: a request TLP out, completions back), not one round trip. A wave's
  // bursts from different owners come at different points of the march (the lower halo primes
  // the first chunk, the upper one ends the last), so the wave waits for its largest. This
  // replaces the one round trip per reading wave (remote_read_in_wave counts none for a
  // marching kernel).
  const double lat = c.sys.link.latency_ns * 1e-9;
  for (int rd = 0; rd < c.G; ++rd) {
    double wait = 0;
    for (std::size_t wv = 0; wv < std::size_t(n_waves); ++wv) {
      double worst = 0;
      for (int ow = 0; ow < c.G; ++ow)
        if (burst_[rd][ow][wv] > 0) worst = std::max(worst, 2 * lat + c.lm.wire_time(c.sys.link, burst_[rd][ow][wv]));
      wait += worst;
    }
    it.read_wait[rd] += wait;
  }
}

void ParadigmModel::on_access(KernelPass& k, const Access& x) {
  if (x.owner < 0) on_local(k, x);
  else if (x.ld && !x.st) k.remote_load(x.owner, x.span);  // a demand load
  else on_remote_store(k, x);                               // a store or atomic: a halo push
}

void ParadigmModel::iteration_times(IterPass& it) {
  const double lat = c.sys.link.latency_ns * 1e-9;
  for (int g = 0; g < c.G; ++g) {
    it.xfer[g] = it.link_t[g];
    const double rtt = 2 * lat;
    const double exposed = it.read_waves[g] * rtt + (it.link_t[g] > 0 ? lat : 0);
    // a march's remote-load waits lengthen its critical path (they are in link_t too)
    it.gpu_t[g] = it.launches[g] + std::max(it.kern[g] + it.read_wait[g], it.link_t[g]) + exposed;
  }
}

std::unique_ptr<ParadigmModel> make_paradigm_model(SimParadigm p, const RunCtx& c) {
  switch (p) {
    case SimParadigm::memcpy:
    case SimParadigm::proact: return make_copy_model(p, c);
    case SimParadigm::um:
    case SimParadigm::um_hints: return make_um_model(p, c);
    case SimParadigm::gps_hw:
    case SimParadigm::finepack: return make_gps_model(p, c);
    case SimParadigm::p2p_inline:
    case SimParadigm::rdl:
    case SimParadigm::infinite: return make_direct_model(p, c);
  }
  throw std::invalid_argument("unknown simulator paradigm");
}

}  // namespace gpsm::sim::engine_detail
