#include "apps/graph/graph_exchange.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "apps/graph/graph_exchange_proact.hpp"
#include "common/mem_location.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpsm::apps::graph {
namespace {

bool replicated(Paradigm p) {
  return p == Paradigm::single || p == Paradigm::memcpy || p == Paradigm::infinite || p == Paradigm::nccl ||
         p == Paradigm::p2p_inline || p == Paradigm::rdl || p == Paradigm::proact;
}
bool managed(Paradigm p) { return p == Paradigm::um || p == Paradigm::um_hints; }
bool gps_kind(Paradigm p) { return p == Paradigm::gps || p == Paradigm::gps_all; }

}  // namespace

Exchange::Exchange(gps::Context& ctx, Paradigm par, const VecLayout& l, int buffers, const std::string& name,
                   NcclComms* comms, std::int64_t rows_per_block, std::uint64_t proact_chunk)
    : ctx_(ctx), par_(par), l_(l), n_(ctx.size()), buffers_(buffers), comms_(comms) {
  if (l_.ranks() != n_) throw Error(fmt::format("gpsm: {}: layout for {} ranks, context has {}", name, l_.ranks(), n_));
  if (buffers < 1 || buffers > 2) throw Error("gpsm: Exchange takes 1 or 2 buffers");
  if (par == Paradigm::nccl && n_ > 1 && comms == nullptr) throw Error("gpsm: the nccl exchange needs communicators");
  const std::size_t elems = static_cast<std::size_t>(l_.elems());
  if (replicated(par)) {
    rep_.resize(n_);
    for (int r = 0; r < n_; ++r)
      for (int b = 0; b < buffers; ++b) rep_[r][b].alloc(ctx.device(r), elems);
    if (par == Paradigm::proact) {
      if (rows_per_block < 1) throw Error("gpsm: " + name + ": the proact exchange needs the kernel's rows per block");
      proact_ = std::make_unique<ProactShipper>(ctx, l_, rows_per_block, name, proact_chunk);
    }
  } else if (managed(par)) {
    for (int b = 0; b < buffers; ++b) GPSM_CUDA(cudaMallocManaged(&managed_[b], elems * sizeof(float)));
    if (par == Paradigm::um_hints) advise();
  } else if (gps_kind(par)) {
    // Inline publishing by default: a rank's rows go to their subscribers as the kernel stores
    // them (a warp's 32 consecutive floats: one 128-B line per subscriber), so nothing is pending
    // when the kernel ends and the phase ends with Context::fence_async(), a barrier on the
    // streams, instead of the host-driven drain of the combine mode (measured 1278 against 371 us
    // per pagerank rmat:20 iteration on 4xH200, docs/graphs.md). GPSM_PUBLISH_MODE, when set,
    // chooses the mode instead (combine and decoupled are drained by fence_async on the streams,
    // bulk ends each phase with Context::fence()).
    const bool from_env = std::getenv("GPSM_PUBLISH_MODE") != nullptr;
    for (int b = 0; b < buffers; ++b) {
      gps::AllocOptions o = from_env ? gps::AllocOptions{} : gps::with_mode(gps::PublishMode::inline_store);
      o.name = name + (b == 0 ? "_a" : "_b");
      gps_.push_back(ctx.alloc<float>(elems, o));
    }
  } else {
    throw Error(std::string("gpsm: the graph apps have no ") + paradigm_name(par) + " exchange");
  }
}

Exchange::~Exchange() {
  for (float* p : managed_)
    if (p != nullptr) cudaFree(p);
}

VecArg Exchange::arg(int r, int b) const {
  VecArg a;
  a.ranks = n_;
  a.chunk_elems = l_.chunk * l_.width;
  switch (par_) {
    case Paradigm::rdl: a.kind = Access::owner; break;
    case Paradigm::p2p_inline: a.kind = Access::push; break;
    case Paradigm::gps:
    case Paradigm::gps_all: a.kind = Access::gps; break;
    default: a.kind = Access::local; break;
  }
  if (!rep_.empty()) {
    a.local = rep_[r][b].p;
    for (int d = 0; d < n_; ++d) a.rep[d] = rep_[d][b].p;
  } else if (managed_[b] != nullptr) {
    a.local = managed_[b];
  } else {
    a.view = gps_[b].view(r);
    // Where this rank alone holds the whole vector (one GPU), nothing it stores is published: the
    // kernels run their plain loads and stores on the replica (Array::sole), with none of the GPS
    // path's masks or staging. The view stays, for launches that pair it with a vector that is
    // not sole (common_kind).
    if (gps_[b].sole(r)) {
      a.kind = Access::local;
      a.local = a.view.local();
    } else if (gps_[b].holds_every_page(r)) {
      // Every page is here (a power-law graph's vector, which every rank gathers from almost
      // everywhere): loads read the replica with no mask, as push's do, and only the stores go
      // through the view (sssp: staged per block). 2xH200, 2 GPUs, against p2p_inline: sssp
      // rmat:20 1.08 -> 0.97, als 1.03-1.05 -> 1.01; pagerank runs it as gps (launch_pagerank).
      a.kind = Access::held;
      a.local = a.view.local();
    }
  }
  return a;
}

void Exchange::upload(int b, const std::vector<float>& slots) {
  if (static_cast<std::int64_t>(slots.size()) != l_.elems()) throw Error("gpsm: Exchange::upload: size mismatch");
  const std::size_t bytes = slots.size() * sizeof(float);
  if (!rep_.empty()) {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(rep_[r][b].p, slots.data(), bytes, cudaMemcpyHostToDevice));
    }
    // pageable copies may return before their DMA lands; the phase streams do not wait for it
    ctx_.synchronize();
  } else if (managed_[b] != nullptr) {
    ctx_.synchronize();
    std::memcpy(managed_[b], slots.data(), bytes);
    if (par_ == Paradigm::um_hints)  // each rank's rows to their owner before the first phase
      for (int r = 0; r < n_; ++r) {
        if (l_.owned_elems(r) == 0) continue;
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        GPSM_CUDA(cudaMemPrefetchAsync(managed_[b] + l_.first_elem(r), l_.owned_elems(r) * sizeof(float),
                                       device_location(ctx_.device(r)), 0, ctx_.stream(r)));
      }
    ctx_.synchronize();
  } else {
    gps_[b].upload(slots);
  }
}

std::vector<float> Exchange::download(int b) const {
  ctx_.synchronize();
  std::vector<float> out(static_cast<std::size_t>(l_.elems()), std::numeric_limits<float>::quiet_NaN());
  if (!rep_.empty()) {
    for (int r = 0; r < n_; ++r) {
      if (l_.owned_elems(r) == 0) continue;
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(out.data() + l_.first_elem(r), rep_[r][b].p + l_.first_elem(r),
                           l_.owned_elems(r) * sizeof(float), cudaMemcpyDeviceToHost));
    }
  } else if (managed_[b] != nullptr) {
    std::memcpy(out.data(), managed_[b], out.size() * sizeof(float));
  } else {
    gps_[b].download_coherent(out.data());
  }
  return out;
}

ReadyArg Exchange::before_kernel(int r, int /*b*/) { return proact_ ? proact_->before_kernel(r) : ReadyArg{}; }

void Exchange::after_kernel(int r, int b) {
  if (proact_) {
    std::vector<float*> reps(static_cast<std::size_t>(n_));
    for (int d = 0; d < n_; ++d) reps[d] = rep_[d][b].p;
    proact_->after_kernel(r, reps);
    return;
  }
  if (par_ != Paradigm::memcpy || n_ == 1 || l_.owned_elems(r) == 0) return;
  const std::size_t bytes = l_.owned_elems(r) * sizeof(float);
  for (int d = 0; d < n_; ++d)
    if (d != r)
      GPSM_CUDA(cudaMemcpyPeerAsync(rep_[d][b].p + l_.first_elem(r), ctx_.device(d), rep_[r][b].p + l_.first_elem(r),
                                    ctx_.device(r), bytes, ctx_.stream(r)));
}

void Exchange::after_phase(int b) {
  if (gps_kind(par_)) {
    // Stream-ordered in every mode but bulk, whose copies the host plans from the dirty map.
    if (gps_.front().mode() == gps::PublishMode::bulk) {
      ctx_.fence();
    } else {
      ctx_.fence_async();
    }
    return;
  }
  if (par_ != Paradigm::nccl || n_ == 1) return;
#if GPSM_HAVE_NCCL
  const std::size_t count = static_cast<std::size_t>(l_.chunk) * l_.width;
  GPSM_NCCL(ncclGroupStart());
  for (int r = 0; r < n_; ++r)
    GPSM_NCCL(ncclAllGather(rep_[r][b].p + l_.first_elem(r), rep_[r][b].p, count, ncclFloat, (*comms_)[r],
                            ctx_.stream(r)));
  GPSM_NCCL(ncclGroupEnd());
#else
  (void)b;
  throw Error(kNcclMissing);
#endif
}

bool needs_phase_events(Paradigm p, int ranks) {
  return ranks > 1 && p != Paradigm::nccl && !gps_kind(p) && p != Paradigm::single;
}

double Exchange::publish_bytes() const { return graph::publish_bytes(par_, l_); }

// Preferred location of each rank's rows on its GPU, the whole buffer accessed by every GPU (its
// reads of other ranks' rows map remotely instead of faulting), each hint read back: the driver
// accepts some invalid hints silently. Read-mostly is left off: every phase writes the vector,
// and a write to a read-mostly page collapses its read copies (docs/graphs.md).
void Exchange::advise() {
  const std::uintptr_t page = 64 * 1024;
  for (int b = 0; b < buffers_; ++b) {
    float* base = managed_[b];
    const std::size_t all = static_cast<std::size_t>(l_.elems()) * sizeof(float);
    for (int r = 0; r < n_; ++r) {
      const cudaMemLocation here = device_location(ctx_.device(r));
      if (l_.owned_elems(r) > 0)
        GPSM_CUDA(cudaMemAdvise(base + l_.first_elem(r), l_.owned_elems(r) * sizeof(float),
                                cudaMemAdviseSetPreferredLocation, here));
      GPSM_CUDA(cudaMemAdvise(base, all, cudaMemAdviseSetAccessedBy, here));
    }
    for (int r = 0; r < n_ && hint_problem_.empty(); ++r) {
      const auto lo = reinterpret_cast<std::uintptr_t>(base + l_.first_elem(r));
      const auto hi = lo + l_.owned_elems(r) * sizeof(float);
      const std::uintptr_t a = (lo + page - 1) / page * page, e = hi / page * page;
      if (e > a) {
        int where = -2;
        GPSM_CUDA(cudaMemRangeGetAttribute(&where, sizeof(where), cudaMemRangeAttributePreferredLocation,
                                           reinterpret_cast<void*>(a), e - a));
        if (where != ctx_.device(r))
          hint_problem_ = fmt::format("um_hints: the preferred location of GPU {}'s rows reads back as {}",
                                      ctx_.device(r), where);
      }
      // Accessed-by is read back where rank r reads remotely: over the whole pages inside each
      // other rank's rows (pages preferred on r itself need no mapping for r; a vector of less
      // than a page per rank has no such page and nothing to read back).
      bool found = true;
      int missing_on = -1;
      for (int q = 0; q < n_ && found; ++q) {
        if (q == r || l_.owned_elems(q) <= 0) continue;
        const auto qlo = reinterpret_cast<std::uintptr_t>(base + l_.first_elem(q));
        const auto qhi = qlo + l_.owned_elems(q) * sizeof(float);
        const std::uintptr_t qa = (qlo + page - 1) / page * page, qe = qhi / page * page;
        if (qe <= qa) continue;
        int by[gps::kMaxDevices + 1];
        for (int& x : by) x = -2;
        GPSM_CUDA(cudaMemRangeGetAttribute(by, sizeof(by), cudaMemRangeAttributeAccessedBy,
                                           reinterpret_cast<void*>(qa), qe - qa));
        found = false;
        for (int x : by) found = found || x == ctx_.device(r);
        if (!found) missing_on = ctx_.device(q);
      }
      if (!found && hint_problem_.empty())
        hint_problem_ = fmt::format("um_hints: GPU {} is not among the devices accessing GPU {}'s rows of the vector",
                                    ctx_.device(r), missing_on);
    }
  }
}

PhaseEvents::PhaseEvents(gps::Context& ctx, bool on) : ctx_(ctx), on_(on) {
  if (!on_) return;
  ev_.resize(ctx.size());
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
}

PhaseEvents::~PhaseEvents() {
  for (int r = 0; r < static_cast<int>(ev_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    for (auto e : ev_[r])
      if (e != nullptr) cudaEventDestroy(e);
  }
}

void PhaseEvents::begin(int r) {
  GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
  if (!on_ || phase_ == 0) return;
  for (int s = 0; s < ctx_.size(); ++s)
    if (s != r) GPSM_CUDA(cudaStreamWaitEvent(ctx_.stream(r), ev_[s][(phase_ - 1) & 1], 0));
}

void PhaseEvents::end(int r) {
  if (on_) GPSM_CUDA(cudaEventRecord(ev_[r][phase_ & 1], ctx_.stream(r)));
}

void DeviceSlice::upload(int dev, const Slice& s) {
  rows = s.rows();
  nnz = static_cast<std::int64_t>(s.col.size());
  row_ptr.alloc(dev, s.row_ptr.size());
  col.alloc(dev, s.col.size());
  GPSM_CUDA(cudaMemcpy(row_ptr.p, s.row_ptr.data(), s.row_ptr.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  GPSM_CUDA(cudaMemcpy(col.p, s.col.data(), s.col.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  if (!s.val.empty()) {
    val.alloc(dev, s.val.size());
    GPSM_CUDA(cudaMemcpy(val.p, s.val.data(), s.val.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  GPSM_CUDA(cudaDeviceSynchronize());  // pageable copies: the DMA is done before any stream reads it
}

void DeviceSlice::split_long_rows(int dev, const Slice& s, int lanes) {
  const std::int64_t chain = chain_edges_setting(std::getenv("GPSM_GRAPH_SPLIT"));
  if (chain == 0) return;
  const std::vector<RowSegment> v = graph::split_long_rows(s.row_ptr, chain * lanes);
  if (v.empty()) return;
  long_row = chain * lanes;  // set only with segments: the kernels skip rows only then
  nsegs = static_cast<std::int64_t>(v.size());
  const std::int64_t split = split_rows(v);
  segs.alloc(dev, v.size());
  partial.alloc(dev, v.size());
  done.alloc(dev, static_cast<std::size_t>(split));
  GPSM_CUDA(cudaMemcpy(segs.p, v.data(), v.size() * sizeof(RowSegment), cudaMemcpyHostToDevice));
  GPSM_CUDA(cudaMemset(done.p, 0, static_cast<std::size_t>(split) * sizeof(unsigned)));
  GPSM_CUDA(cudaDeviceSynchronize());
}

CsrArg DeviceSlice::arg(std::int64_t first_slot) const {
  CsrArg a;
  a.row_ptr = row_ptr.p;
  a.col = col.p;
  a.val = val.p;
  a.rows = rows;
  a.first_slot = first_slot;
  a.long_row = long_row;
  a.segs = segs.p;
  a.nsegs = nsegs;
  a.partial = partial.p;
  a.done = done.p;
  return a;
}

void upload_floats(DevBuf<float>& b, int dev, const std::vector<float>& v) {
  b.alloc(dev, v.size());
  GPSM_CUDA(cudaMemcpy(b.p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
}

}  // namespace gpsm::apps::graph
