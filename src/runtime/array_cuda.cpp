// Replicated arrays: one replica per device, subscriber masks, dirty bitmaps, and the per-array
// fence steps (combine/inline drain rounds, bulk copies, demotion of strongly accessed pages).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "gpsm/error.hpp"
#include "runtime/async_fence_plan.hpp"
#include "runtime/bulk_plan.hpp"
#include "gpsm/gps/context.hpp"
#include "runtime/runtime_state.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::gps {
namespace detail {

namespace {
template <class P>
void alloc_zeroed(P*& p, std::size_t bytes) {
  void* v = nullptr;
  GPSM_CUDA(cudaMalloc(&v, bytes));
  GPSM_CUDA(cudaMemset(v, 0, bytes));
  p = static_cast<P*>(v);
}
}  // namespace

ArrayState::ArrayState(ContextImpl* c, std::uint64_t bytes, std::uint32_t page_shift, PublishMode m, std::string nm,
                       std::uint64_t chunk_bytes, DecoupledAgent a)
    : ctx(c), name(std::move(nm)), mode(m), agent(a) {
  g.bytes = bytes;
  g.page_shift = page_shift;
  table = SubscriptionTable(g.pages(), c->size());
  layout = chunk_layout(g, chunk_bytes);
  learner = StoreCountLearner(c->size(), layout.chunks());
  counting = c->settings.count_link_bytes;
  dev.resize(c->size());
  try {
    for (int r = 0; r < c->size(); ++r) {
      c->set(r);
      auto& d = dev[r];
      alloc_zeroed(d.replica, g.padded_bytes());
      // masks, the whole-array word, the any-page word, then the same-mask run lengths (upload_masks)
      alloc_zeroed(d.masks, (2 * g.pages() + 2) * sizeof(std::uint32_t));
      alloc_zeroed(d.dirty, g.lines() * sizeof(std::uint32_t));
      alloc_zeroed(d.track, g.page_bitmap_words() * sizeof(std::uint32_t));
      alloc_zeroed(d.sys_pages, g.page_bitmap_words() * sizeof(std::uint32_t));
      alloc_zeroed(d.ctl, sizeof(Control));
      alloc_zeroed(d.counters, sizeof(LinkCounters));
      // Decoupled state for every array (a few bytes per chunk): any view may be decoupled.
      alloc_zeroed(d.dcount, layout.chunks() * sizeof(unsigned long long));
      alloc_zeroed(d.dexpect, layout.chunks() * sizeof(unsigned long long));
      alloc_zeroed(d.dready, layout.chunks() * sizeof(std::uint32_t));
      alloc_zeroed(d.ddone, layout.chunks() * sizeof(std::uint32_t));
      alloc_zeroed(d.dlist, layout.chunks() * sizeof(std::uint32_t));
    }
    GPSM_CUDA(cudaHostAlloc(&stop, kMaxDevices * sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(stop, 0, kMaxDevices * sizeof(std::uint32_t));
    GPSM_CUDA(cudaHostAlloc(&spill_hint, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
    *spill_hint = 0u;
    upload_masks();
    c->sync_all();  // zeroed state is complete before any view (and so any peer) can see it
  } catch (...) {
    release();
    throw;
  }
  c->arrays.push_back(this);
}

ArrayState::~ArrayState() { release(); }

void ArrayState::release() {
  if (ctx == nullptr) return;
  for (int r = 0; r < static_cast<int>(dev.size()); ++r) stop_agent(r);  // else the wait below could hang
  for (int r = 0; r < static_cast<int>(dev.size()); ++r) {
    cudaSetDevice(ctx->devices[r]);
    cudaDeviceSynchronize();
    auto& d = dev[r];
    for (void* p : {static_cast<void*>(d.replica), static_cast<void*>(d.masks), static_cast<void*>(d.dirty),
                    static_cast<void*>(d.track), static_cast<void*>(d.sys_pages), static_cast<void*>(d.ctl),
                    static_cast<void*>(d.counters), static_cast<void*>(d.dcount), static_cast<void*>(d.dexpect),
                    static_cast<void*>(d.dready), static_cast<void*>(d.ddone), static_cast<void*>(d.dlist)})
      if (p != nullptr) cudaFree(p);
    for (int s = 0; s < kMaxDevices; ++s)
      for (void* q : {static_cast<void*>(d.in_off[s]), static_cast<void*>(d.in_val[s]), static_cast<void*>(d.in_dir[s])})
        if (q != nullptr) cudaFree(q);
    if (d.agent_stream != nullptr) cudaStreamDestroy(d.agent_stream);
    if (d.agent_done != nullptr) cudaEventDestroy(d.agent_done);
    d = PerDevice{};
  }
  if (stop != nullptr) cudaFreeHost(stop);
  stop = nullptr;
  if (spill_hint != nullptr) cudaFreeHost(spill_hint);
  spill_hint = nullptr;
  auto& v = ctx->arrays;
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
  ctx = nullptr;
}

void ArrayState::check_live(const char* what) const {
  if (ctx == nullptr)
    throw gpsm::Error(std::string("gpsm: ") + what + " on a GPS array that was freed (or whose context ended)" +
                      (name.empty() ? "" : ": '" + name + "'"));
}

// The word after the last page's mask holds the devices subscribed to every page (ViewCore::whole),
// none while tracking: a view whose bit is set loads straight from its replica. The next, the
// devices subscribed to any page (ViewCore::any): where both are this device alone, nothing it
// stores is ever published (View::sole). Then one word per page: the run of pages from it with its
// mask (ViewCore::runs, same_mask_runs), so a span over many pages costs two reads. All are
// rewritten with the masks, only between kernels, so a kernel may read them once.
void ArrayState::upload_masks() {
  ++mask_version;
  std::vector<std::uint32_t> m = table.masks();
  if (ctx->tracking)
    for (auto& x : m) x |= kTrackBit;
  m.push_back(ctx->tracking ? 0u : table.on_every_page());
  m.push_back(table.on_any_page());
  const std::vector<std::uint32_t> runs = same_mask_runs(table.masks());
  m.insert(m.end(), runs.begin(), runs.end());
  for (int r = 0; r < ctx->size(); ++r) {
    ctx->set(r);
    GPSM_CUDA(cudaMemcpy(dev[r].masks, m.data(), m.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  }
}

// Inbound areas start at GPSM_INBOUND_ENTRIES entries per (source, destination) and double
// after a fence that needed more than one round, up to the array's words (plus record padding):
// the steady state of a repeated publish pattern is one round per fence, with memory in
// proportion to what is actually published.
void ArrayState::ensure_inbound() {
  const std::uint64_t most = (g.words() + blocks() * kRecordAlignEntries) / kRecordAlignEntries * kRecordAlignEntries;
  std::uint64_t want = inbound_capacity == 0 ? std::max<std::uint64_t>(1024, ctx->settings.inbound_entries)
                                              : (grow_inbound ? inbound_capacity * 2 : inbound_capacity);
  // Directory entries hold 32-bit entry indices.
  want = std::min<std::uint64_t>(std::min(want, most), 0xFFFFFFFFull) / kRecordAlignEntries * kRecordAlignEntries;
  grow_inbound = false;
  if (want == inbound_capacity) return;
  for (int d = 0; d < ctx->size(); ++d) {
    ctx->set(d);
    for (int s = 0; s < ctx->size(); ++s) {
      if (s == d) continue;
      if (dev[d].in_off[s] != nullptr) GPSM_CUDA(cudaFree(dev[d].in_off[s]));
      if (dev[d].in_val[s] != nullptr) GPSM_CUDA(cudaFree(dev[d].in_val[s]));
      dev[d].in_off[s] = nullptr;
      dev[d].in_val[s] = nullptr;
      GPSM_CUDA(cudaMalloc(&dev[d].in_off[s], want * sizeof(std::uint16_t)));
      GPSM_CUDA(cudaMalloc(&dev[d].in_val[s], want * sizeof(std::uint32_t)));
      if (dev[d].in_dir[s] == nullptr) alloc_zeroed(dev[d].in_dir[s], blocks() * sizeof(uint2));  // no record yet
    }
  }
  ctx->sync_all();
  inbound_capacity = want;
}

void ArrayState::read_controls(std::vector<Control>& snap, bool reset) {
  const int n = ctx->size();
  for (int r = 0; r < n; ++r) {
    ctx->set(r);
    GPSM_CUDA(cudaMemcpyAsync(&ctx->staging[r], dev[r].ctl, sizeof(Control), cudaMemcpyDeviceToHost, ctx->streams[r]));
    if (reset) launch_reset_control(dev[r].ctl, ctx->streams[r]);
  }
  for (int r = 0; r < n; ++r) {
    ctx->set(r);
    const cudaError_t e = cudaStreamSynchronize(ctx->streams[r]);
    if (e != cudaSuccess) ctx->throw_if_wait_failed(cudaGetErrorName(e));
    GPSM_CUDA(e);
  }
  snap.assign(ctx->staging, ctx->staging + n);
}

// Host cost per round: the launches (drain and unpack per chunk) and one batched control read,
// with the control blocks reset on the device in the same stream. Drain kernels of clean sources
// exit at once (dirty_any == 0); unpack kernels find no directory entries from them.
void ArrayState::enqueue_drain_round(bool spill_direct) {
  const int n = ctx->size();
  const bool profile = ctx->settings.profile_fence;
  // Chunks of blocks: receivers unpack chunk c while sources drain chunk c + 1. Without inbound
  // areas (fence_async before any was allocated) every packed record spills: no unpack.
  const bool unpack = inbound_capacity > 0;
  const std::uint64_t nb = blocks();
  const int chunks = static_cast<int>(std::clamp<std::uint64_t>(nb / 1024, 1, ContextImpl::kFenceChunks));
  for (int c = 0; c < chunks; ++c) {
    const std::uint64_t lo = nb * c / chunks, hi = nb * (c + 1) / chunks;
    for (int s = 0; s < n; ++s) {
      DrainArgs a;
      a.src = reinterpret_cast<const std::uint32_t*>(dev[s].replica);
      a.dirty = dev[s].dirty;
      a.masks = dev[s].masks;
      a.ctl = dev[s].ctl;
      for (int d = 0; d < n; ++d) {
        a.dst[d] = reinterpret_cast<std::uint32_t*>(dev[d].replica);
        a.off[d] = dev[d].in_off[s];
        a.val[d] = dev[d].in_val[s];
        a.dir[d] = dev[d].in_dir[s];
      }
      a.counters = counting ? dev[s].counters : nullptr;
      a.lines = g.lines();
      a.first_block = lo;
      a.last_block = hi;
      a.capacity = inbound_capacity;
      a.page_shift = g.page_shift;
      a.block_lines = block_lines_for(g.page_shift);
      a.self = s;
      a.devices = n;
      a.spill_direct = spill_direct;
      a.spill_hint = spill_direct ? spill_hint : nullptr;
      ctx->set(s);
      if (profile && c == 0) GPSM_CUDA(cudaEventRecord(ctx->prof[0][s], ctx->streams[s]));
      launch_drain(a, ctx->streams[s]);
      GPSM_CUDA(cudaEventRecord(ctx->chunk_events[static_cast<std::size_t>(c) * n + s], ctx->streams[s]));
      if (profile && c == chunks - 1) GPSM_CUDA(cudaEventRecord(ctx->prof[1][s], ctx->streams[s]));
    }
    for (int d = 0; d < n; ++d) {
      ctx->set(d);
      UnpackArgs u;
      for (int s = 0; s < n; ++s) {
        if (s == d) continue;
        GPSM_CUDA(cudaStreamWaitEvent(ctx->side[d], ctx->chunk_events[static_cast<std::size_t>(c) * n + s], 0));
        u.off[s] = dev[d].in_off[s];
        u.val[s] = dev[d].in_val[s];
        u.dir[s] = dev[d].in_dir[s];
      }
      u.words = reinterpret_cast<std::uint32_t*>(dev[d].replica);
      u.lines = g.lines();
      u.first_block = lo;
      u.last_block = hi;
      u.block_lines = block_lines_for(g.page_shift);
      u.self = d;
      u.devices = n;
      if (unpack) launch_unpack(u, ctx->side[d]);
    }
  }
  for (int d = 0; d < n; ++d) {
    ctx->set(d);
    GPSM_CUDA(cudaEventRecord(ctx->events[d], ctx->side[d]));
  }
}

void ArrayState::drain_rounds(std::vector<Control>& snap) {
  const int n = ctx->size();
  if (n == 1) {  // nothing to publish to; forget the marks
    read_controls(snap);
    if (snap[0].dirty_any != 0u) {
      ctx->set(0);
      GPSM_CUDA(cudaMemset(dev[0].dirty, 0, g.lines() * sizeof(std::uint32_t)));
      GPSM_CUDA(cudaMemset(&dev[0].ctl->dirty_any, 0, sizeof(std::uint32_t)));
      snap[0].dirty_any = 0u;
    }
    return;
  }
  ensure_inbound();
  const bool profile = ctx->settings.profile_fence;
  for (int round = 1;; ++round) {
    const auto t_round = std::chrono::steady_clock::now();
    enqueue_drain_round(false);
    for (int d = 0; d < n; ++d) {  // the control read below is ordered after every unpack
      ctx->set(d);
      GPSM_CUDA(cudaStreamWaitEvent(ctx->streams[d], ctx->events[d], 0));
      if (profile) GPSM_CUDA(cudaEventRecord(ctx->prof[2][d], ctx->streams[d]));
    }
    read_controls(snap, true);  // waits for the round
    if (profile) {
      std::string line = "gpsm fence: '" + name + "' round " + std::to_string(round) + ":";
      for (int r = 0; r < n; ++r) {
        float drain = 0, unpack = 0;
        ctx->set(r);
        GPSM_CUDA(cudaEventElapsedTime(&drain, ctx->prof[0][r], ctx->prof[1][r]));
        GPSM_CUDA(cudaEventElapsedTime(&unpack, ctx->prof[1][r], ctx->prof[2][r]));
        char buf[96];
        std::snprintf(buf, sizeof buf, " rank %d drain %.3f ms, unpack tail %.3f ms;", r, drain, unpack);
        line += buf;
      }
      const double host = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_round).count();
      std::fprintf(stderr, "%s round on host %.3f ms\n", line.c_str(), host);
    }
    host_stats.fence_rounds += 1;
    bool overflow = false;
    for (int r = 0; r < n; ++r) overflow = overflow || snap[r].overflow != 0u;
    if (overflow) grow_inbound = true;  // the next fence starts with twice the room
    if (!overflow) return;
    // Each round completes at least the first warp's lines in every queue; a fence needing far
    // more rounds than (dirty words x destinations) / capacity is a bug, not a slow fence.
    const std::uint64_t bound = 64 + 4 * (g.words() * static_cast<std::uint64_t>(n) / inbound_capacity);
    if (static_cast<std::uint64_t>(round) > bound)
      throw gpsm::Error("gpsm: fence of array '" + name + "' made no progress (inbound queues full every round)");
  }
}

void ArrayState::bulk_copy(std::vector<Control>& snap) {
  const int n = ctx->size();
  read_controls(snap);
  std::vector<std::uint32_t> dirty(g.lines());
  bool any = false;
  for (int s = 0; s < n; ++s) {
    if (snap[s].dirty_any == 0u) continue;
    any = true;
    ctx->set(s);
    GPSM_CUDA(cudaMemcpy(dirty.data(), dev[s].dirty, dirty.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    const auto runs = plan_bulk(g, dirty.data(), table.masks().data(), s);
    for (const CopyRun& run : runs) {
      GPSM_CUDA(cudaMemcpyPeerAsync(dev[run.dst].replica + run.byte_offset, ctx->devices[run.dst],
                                    dev[s].replica + run.byte_offset, ctx->devices[s], run.bytes, ctx->streams[s]));
      count_copy(run.bytes);
    }
    GPSM_CUDA(cudaMemsetAsync(dev[s].dirty, 0, dirty.size() * sizeof(std::uint32_t), ctx->streams[s]));
    GPSM_CUDA(cudaMemsetAsync(&dev[s].ctl->dirty_any, 0, sizeof(std::uint32_t), ctx->streams[s]));
    snap[s].dirty_any = 0u;
  }
  if (!any) return;
  for (int s = 0; s < n; ++s) {
    ctx->set(s);
    GPSM_CUDA(cudaStreamSynchronize(ctx->streams[s]));
  }
  host_stats.fence_rounds += 1;
}

void ArrayState::demote_strong_pages(const std::vector<Control>& snap) {
  const int n = ctx->size();
  std::vector<std::uint64_t> pages;
  for (int r = 0; r < n; ++r) {
    if (snap.at(r).sys_any == 0u) continue;
    std::vector<std::uint32_t> bits(g.page_bitmap_words());
    ctx->set(r);
    GPSM_CUDA(cudaMemcpy(bits.data(), dev[r].sys_pages, bits.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    for (std::uint64_t p = 0; p < g.pages(); ++p)
      if ((bits[p / 32] >> (p % 32)) & 1u) pages.push_back(p);
    GPSM_CUDA(cudaMemset(dev[r].sys_pages, 0, bits.size() * sizeof(std::uint32_t)));
    GPSM_CUDA(cudaMemset(&dev[r].ctl->sys_any, 0, sizeof(std::uint32_t)));
  }
  if (pages.empty()) return;
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  std::string list;
  for (std::size_t i = 0; i < pages.size() && i < 8; ++i) list += (i ? "," : "") + std::to_string(pages[i]);
  if (pages.size() > 8) list += ",...";
  std::cerr << "gpsm: array '" << name << "': " << pages.size() << " page(s) (" << list
            << ") were accessed with system-scope ordering; demoted to one copy at their home. Keep flags and "
               "counters outside GPS memory.\n";
  for (std::uint64_t p : pages) table.demote(PageRange{p, p + 1});
  upload_masks();
}

void ArrayState::copy_pages_from_home(const std::vector<std::uint32_t>& before, int rank, PageRange r) {
  auto home = [&](std::uint64_t p) { return __builtin_ctz(before.at(p) & kDeviceBits); };
  ctx->set(rank);
  for (std::uint64_t p = r.first; p < r.last;) {  // one copy per run of pages with the same home
    std::uint64_t q = p + 1;
    while (q < r.last && home(q) == home(p)) ++q;
    const std::uint64_t off = p * g.page_bytes();
    const std::uint64_t len = std::min<std::uint64_t>(q * g.page_bytes(), g.padded_bytes()) - off;
    GPSM_CUDA(cudaMemcpyPeer(dev[rank].replica + off, ctx->devices[rank], dev[home(p)].replica + off,
                             ctx->devices[home(p)], len));
    p = q;
  }
}

void ArrayState::arm_agent(int rank) {
  PerDevice& d = dev[rank];
  if (d.armed != 0u || d.dlist_n == 0u) return;
  AgentArgs a;
  a.src = d.replica;
  for (int r = 0; r < ctx->size(); ++r) a.dst[r] = dev[r].replica;
  a.dirty = d.dirty;
  a.masks = d.masks;
  a.chunks = d.dlist;
  a.nchunks = d.dlist_n;
  a.ready = d.dready;
  a.done = d.ddone;
  a.stop = stop + rank;
  a.counters = counting ? d.counters : nullptr;
  a.padded_bytes = g.padded_bytes();
  a.timeout_ns = wait_timeout_ns(ctx->settings.wait_timeout_ms);
  a.epoch = epoch;
  a.generation = ++generation;
  a.chunk_shift = layout.chunk_shift;
  a.page_shift = g.page_shift;
  a.self = rank;
  int current = 0;  // view() is host code between the user's cudaSetDevice and launch: keep their device
  GPSM_CUDA(cudaGetDevice(&current));
  ctx->set(rank);
  if (d.agent_stream == nullptr) {
    GPSM_CUDA(cudaStreamCreateWithFlags(&d.agent_stream, cudaStreamNonBlocking));
    GPSM_CUDA(cudaEventCreateWithFlags(&d.agent_done, cudaEventDisableTiming));
  }
  launch_decoupled_agent(a, d.agent_stream);
  GPSM_CUDA(cudaSetDevice(current));
  d.armed = a.generation;
}

void ArrayState::stop_agent(int rank) {
  PerDevice& d = dev[rank];
  if (d.armed == 0u) return;
  reinterpret_cast<volatile std::uint32_t*>(stop)[rank] = d.armed;  // host-mapped: the agent polls it
  d.armed = 0u;
}

void ArrayState::settle() {
  const int n = ctx->size();
  if (!decoupled_used) return;
  if (ctx->tracking) {
    std::vector<std::vector<std::uint64_t>> counts(n, std::vector<std::uint64_t>(layout.chunks()));
    for (int r = 0; r < n; ++r) {
      ctx->set(r);
      GPSM_CUDA(cudaMemcpy(counts[r].data(), dev[r].dcount, layout.chunks() * sizeof(std::uint64_t),
                           cudaMemcpyDeviceToHost));
    }
    learner.observe(counts);
  }
  enqueue_settle();
}

void ArrayState::enqueue_settle() {
  for (int r = 0; r < ctx->size(); ++r) {
    SettleArgs a;
    a.count = dev[r].dcount;
    a.expect = dev[r].dexpect;
    a.done = dev[r].ddone;
    a.ready = dev[r].dready;
    a.dirty = dev[r].dirty;
    a.ctl = dev[r].ctl;
    a.chunks = layout.chunks();
    a.padded_bytes = g.padded_bytes();
    a.chunk_shift = layout.chunk_shift;
    a.epoch = epoch;
    ctx->set(r);
    launch_settle(a, ctx->streams[r]);
  }
  // The drain and bulk copy that follow read the control blocks on the same streams.
  ++epoch;
}

bool ArrayState::agent_running() const {
  for (const PerDevice& d : dev)
    if (d.armed != 0u) return true;
  return false;
}

void ArrayState::flag_dirty() {
  if (ctx->size() == 1) return;  // nothing is ever marked: no store or atomic has another subscriber
  for (int r = 0; r < ctx->size(); ++r) {
    ctx->set(r);
    GPSM_CUDA(cudaMemsetAsync(&dev[r].ctl->dirty_any, 0xFF, sizeof(std::uint32_t), ctx->streams[r]));
  }
}

AsyncDrainPlan ArrayState::plan_async(bool capturing) const {
  return plan_async_drain(view_modes | mode_bit(mode), marks_dirty(), capturing, agent_running(), inbound_capacity,
                          *reinterpret_cast<volatile std::uint32_t*>(spill_hint) != 0u);
}

void ArrayState::async_drain(const AsyncDrainPlan& p) {
  const int n = ctx->size();
  view_modes = 0;
  if (!p.drain) return;
  if (p.grow) {
    if (inbound_capacity != 0) ctx->sync_all();  // no drain in flight still writes the old areas
    grow_inbound = inbound_capacity != 0;
    *spill_hint = 0u;
    ensure_inbound();
  }
  // The persistent agents were stopped and waited for by the context before any array's drain.
  flag_dirty();
  if (decoupled_used) enqueue_settle();
  enqueue_drain_round(true);
  for (int r = 0; r < n; ++r) {  // each stream after its own unpack; the control blocks restart
    ctx->set(r);
    GPSM_CUDA(cudaStreamWaitEvent(ctx->streams[r], ctx->events[r], 0));
    launch_reset_control(dev[r].ctl, ctx->streams[r]);
  }
}

void ArrayState::forget_learned() {
  learner = StoreCountLearner(ctx->size(), layout.chunks());
  for (int r = 0; r < ctx->size(); ++r) {
    ctx->set(r);
    GPSM_CUDA(cudaMemset(dev[r].dexpect, 0, layout.chunks() * sizeof(unsigned long long)));
    dev[r].dlist_n = 0;
  }
}

void ArrayState::learn() {
  if (learner.intervals() == 0) return;  // no decoupled store while tracking: forget_learned() zeroed the counts
  const auto expect = learner.expectations(table.masks(), layout);
  for (int r = 0; r < ctx->size(); ++r) {
    const std::vector<std::uint32_t> list = learned_chunks(expect[r]);
    ctx->set(r);
    GPSM_CUDA(cudaMemcpy(dev[r].dexpect, expect[r].data(), expect[r].size() * sizeof(unsigned long long),
                         cudaMemcpyHostToDevice));
    if (!list.empty())
      GPSM_CUDA(cudaMemcpy(dev[r].dlist, list.data(), list.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    dev[r].dlist_n = static_cast<std::uint32_t>(list.size());
  }
  learner = StoreCountLearner(ctx->size(), layout.chunks());
}

}  // namespace detail

// ---- ArrayBase --------------------------------------------------------------------------

std::uint64_t ArrayBase::bytes() const { return s_ ? s_->g.bytes : 0; }
std::uint64_t ArrayBase::page_bytes() const { return s_ ? s_->g.page_bytes() : 0; }
PublishMode ArrayBase::mode() const { return s_->mode; }
std::uint64_t ArrayBase::chunk_bytes() const { return s_ ? s_->layout.chunk_bytes() : 0; }
DecoupledAgent ArrayBase::agent() const { return s_->agent; }
std::uint64_t ArrayBase::learned_chunks(int rank) const {
  s_->check_live("learned_chunks");
  return s_->dev.at(rank).dlist_n;
}
const SubscriptionTable& ArrayBase::subscriptions() const { return s_->table; }
// The words the views read (upload_masks): the every-page word (0 while tracking) and the any-page
// word. `what` names the caller in the errors.
static bool holds_every_page_of(const std::shared_ptr<detail::ArrayState>& s, int rank, const char* what) {
  if (!s) throw gpsm::Error(std::string("gpsm: ") + what + " of an empty GPS array handle");
  s->check_live(what);
  if (rank < 0 || rank >= s->ctx->size())
    throw gpsm::Error(std::string("gpsm: ") + what + " for rank " + std::to_string(rank) + " of a " +
                      std::to_string(s->ctx->size()) + "-device context");
  return !s->ctx->tracking && ((s->table.on_every_page() >> rank) & 1u) != 0;
}
bool ArrayBase::holds_every_page(int rank) const { return holds_every_page_of(s_, rank, "holds_every_page()"); }
// The pages of bytes [begin, end) of a live array, for the host queries of a range (`what`
// names the caller in the errors: an empty handle, a freed array, a range outside the array).
static PageRange pages_asked(const std::shared_ptr<detail::ArrayState>& s, std::uint64_t begin, std::uint64_t end,
                             const char* what) {
  if (!s) throw gpsm::Error(std::string("gpsm: ") + what + "() of an empty GPS array handle");
  s->check_live((std::string(what) + "()").c_str());
  if (end > s->g.bytes || begin > end)
    throw gpsm::Error(std::string("gpsm: ") + what + "(" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") of array '" + s->name + "' (" + std::to_string(s->g.bytes) +
                      " bytes): the range must lie in the array");
  return pages_of_bytes(s->g, begin, end);
}
Reach ArrayBase::reach_bytes(std::uint64_t begin, std::uint64_t end, int rank) const {
  const PageRange pages = pages_asked(s_, begin, end, "reach_bytes");
  const Reach r = s_->table.reach(pages, rank);  // checks the rank
  return s_->ctx->tracking ? Reach::checked : r;
}
RangeSubscribers ArrayBase::subscribers_bytes(std::uint64_t begin, std::uint64_t end) const {
  const PageRange pages = pages_asked(s_, begin, end, "subscribers_bytes");
  return s_->ctx->tracking ? RangeSubscribers{} : s_->table.subscribers(pages);
}
std::uint64_t ArrayBase::subscription_version() const {
  if (!s_) throw gpsm::Error("gpsm: subscription_version() of an empty GPS array handle");
  s_->check_live("subscription_version()");
  return s_->mask_version;
}
bool ArrayBase::sole(int rank) const {
  return holds_every_page_of(s_, rank, "sole()") && s_->table.on_any_page() == (1u << rank);
}

void ArrayBase::set_mode(PublishMode m) {
  s_->check_live("set_mode");
  check_publish_mode(m);
  s_->mode = m;
}

ViewCore ArrayBase::core(int rank, PublishMode mode) const {
  if (!s_) throw gpsm::Error("gpsm: view() of an empty GPS array handle");
  s_->check_live("view()");
  const auto& st = *s_;
  if (rank < 0 || rank >= st.ctx->size())
    throw gpsm::Error("gpsm: view for rank " + std::to_string(rank) + " of a " + std::to_string(st.ctx->size()) +
                      "-device context");
  check_publish_mode(mode);
  st.view_modes |= 1u << static_cast<unsigned>(mode);
  if (mode != PublishMode::inline_store) st.dirty_views = true;
  ViewCore c;
  for (int d = 0; d < st.ctx->size(); ++d) {
    c.replica[d] = st.dev[d].replica;
    c.dirty[d] = st.dev[d].dirty;
    c.dirty_any[d] = &st.dev[d].ctl->dirty_any;
  }
  c.mine = st.dev[rank].replica;
  c.masks = st.dev[rank].masks;
  c.whole = st.dev[rank].masks + st.g.pages();
  c.any = st.dev[rank].masks + st.g.pages() + 1;
  c.runs = st.dev[rank].masks + st.g.pages() + 2;
  c.track = st.dev[rank].track;
  c.sys_pages = st.dev[rank].sys_pages;
  c.sys_any = &st.dev[rank].ctl->sys_any;
  c.counters = st.counting ? st.dev[rank].counters : nullptr;
  c.bytes = st.g.bytes;
  c.page_shift = st.g.page_shift;
  c.self = rank;
  c.mode = mode;
  for (int d = 0; d < st.ctx->size(); ++d) c.dcount[d] = st.dev[d].dcount;
  c.dexpect = st.dev[rank].dexpect;
  c.dready = st.dev[rank].dready;
  c.ddone = st.dev[rank].ddone;
  c.depoch = st.epoch;
  c.chunk_shift = st.layout.chunk_shift;
  c.dagent = st.agent;
  c.dlearn = st.ctx->tracking;
  c.dnone = !c.dlearn && st.dev[rank].dlist_n == 0;
  if (mode == PublishMode::decoupled) {
    s_->decoupled_used = true;
    // Taking the view is the runtime's last look before the user's launch: the agent starts here,
    // so its block is resident before the kernel's blocks fill the device.
    if (st.agent == DecoupledAgent::persistent && !st.ctx->tracking && st.ctx->size() > 1) s_->arm_agent(rank);
  }
  return c;
}

void ArrayBase::subscribe_bytes(std::uint64_t begin, std::uint64_t end, int rank) {
  s_->check_live("subscribe");
  auto& st = *s_;
  if (end > st.g.bytes || begin > end) throw gpsm::Error("gpsm: subscribe range is outside the array");
  st.ctx->fence();
  const std::vector<std::uint32_t> before = st.table.masks();
  for (const PageRange& r : st.table.subscribe(pages_of_bytes(st.g, begin, end), rank))
    st.copy_pages_from_home(before, rank, r);
  st.upload_masks();
  st.ctx->sync_all();
}

void ArrayBase::unsubscribe_bytes(std::uint64_t begin, std::uint64_t end, int rank) {
  s_->check_live("unsubscribe");
  auto& st = *s_;
  if (end > st.g.bytes || begin > end) throw gpsm::Error("gpsm: unsubscribe range is outside the array");
  st.ctx->fence();
  st.table.unsubscribe(pages_of_bytes(st.g, begin, end), rank);
  st.upload_masks();
  st.ctx->sync_all();
}

void ArrayBase::demote_bytes(std::uint64_t begin, std::uint64_t end) {
  s_->check_live("demote");
  auto& st = *s_;
  if (end > st.g.bytes || begin > end) throw gpsm::Error("gpsm: demote range is outside the array");
  st.ctx->fence();
  st.table.demote(pages_of_bytes(st.g, begin, end));
  st.upload_masks();
  st.ctx->sync_all();
}

void ArrayBase::set_counting(bool on) {
  s_->check_live("set_counting");
  s_->counting = on;
}

LinkStats ArrayBase::link_stats() const {
  s_->check_live("link_stats");
  auto& st = *s_;
  st.ctx->sync_all();
  LinkStats out = st.host_stats;
  for (int r = 0; r < st.ctx->size(); ++r) {
    LinkCounters c{};
    st.ctx->set(r);
    GPSM_CUDA(cudaMemcpy(&c, st.dev[r].counters, sizeof(c), cudaMemcpyDeviceToHost));
    for (int d = 0; d < kMaxDevices; ++d) {
      out.useful_bytes += c.useful_bytes[d];
      out.link_bytes += c.link_bytes[d];
      out.messages += c.messages[d];
    }
  }
  return out;
}

void ArrayBase::reset_link_stats() {
  s_->check_live("reset_link_stats");
  auto& st = *s_;
  st.ctx->sync_all();
  st.host_stats = LinkStats{};
  for (int r = 0; r < st.ctx->size(); ++r) {
    st.ctx->set(r);
    GPSM_CUDA(cudaMemset(st.dev[r].counters, 0, sizeof(LinkCounters)));
  }
}

void ArrayBase::publish_box_bytes_async(const std::uint64_t n[3], std::uint64_t elem, const std::uint64_t lo[3],
                                        const std::uint64_t hi[3], int rank) {
  if (!s_) throw gpsm::Error("gpsm: publish_box_async() of an empty GPS array handle");
  s_->check_live("publish_box_async()");
  auto& st = *s_;
  if (rank < 0 || rank >= st.ctx->size())
    throw gpsm::Error("gpsm: publish_box_async() of array '" + st.name + "' for rank " + std::to_string(rank) +
                      ": the context has ranks 0.." + std::to_string(st.ctx->size() - 1));
  const std::vector<BoxCopy> plan = plan_box_publish(st.g, st.table.masks().data(), n, elem, lo, hi, rank);
  if (plan.empty()) return;
  st.ctx->set(rank);
  const cudaStream_t stream = st.ctx->streams[rank];
  const std::uint64_t box_bytes = (hi[0] - lo[0]) * elem * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  for (const BoxCopy& c : plan) {
    // Unified addressing with peer access (the context enables it for every pair): the default
    // kind copies between the GPUs, and both calls are captured as memcpy nodes when the caller's
    // loop is a CUDA graph.
    if (c.whole) {
      cudaMemcpy3DParms m{};
      m.srcPtr = make_cudaPitchedPtr(st.dev[rank].replica, n[0] * elem, n[0] * elem, n[1]);
      m.dstPtr = make_cudaPitchedPtr(st.dev[c.dst].replica, n[0] * elem, n[0] * elem, n[1]);
      m.srcPos = make_cudaPos(lo[0] * elem, lo[1], lo[2]);
      m.dstPos = m.srcPos;
      m.extent = make_cudaExtent((hi[0] - lo[0]) * elem, hi[1] - lo[1], hi[2] - lo[2]);
      m.kind = cudaMemcpyDefault;
      GPSM_CUDA(cudaMemcpy3DAsync(&m, stream));
      if (st.counting) st.count_copy(box_bytes);
      continue;
    }
    for (const CopyRun& run : c.runs) {
      GPSM_CUDA(cudaMemcpyAsync(st.dev[c.dst].replica + run.byte_offset, st.dev[rank].replica + run.byte_offset,
                                run.bytes, cudaMemcpyDefault, stream));
      if (st.counting) st.count_copy(run.bytes);
    }
  }
}

void ArrayBase::upload(const void* src, std::uint64_t bytes, std::uint64_t offset) {
  s_->check_live("upload");
  auto& st = *s_;
  if (offset + bytes > st.g.bytes) throw gpsm::Error("gpsm: upload past the end of the array");
  st.ctx->fence();
  for (int r = 0; r < st.ctx->size(); ++r) {
    st.ctx->set(r);
    GPSM_CUDA(cudaMemcpy(st.dev[r].replica + offset, src, bytes, cudaMemcpyHostToDevice));
  }
  // A copy from pageable memory may return before its DMA lands, and the context's streams do
  // not wait for the legacy stream: without this a kernel launched next could store its results
  // before the upload overwrote them (seen as NaN ranks, pagerank road:512 on 2xH200).
  st.ctx->sync_all();
}

void ArrayBase::download_replica(void* dst, int rank) const {
  s_->check_live("download");
  auto& st = *s_;
  st.ctx->sync_all();
  st.ctx->set(rank);
  GPSM_CUDA(cudaMemcpy(dst, st.dev.at(rank).replica, st.g.bytes, cudaMemcpyDeviceToHost));
}

void ArrayBase::download_coherent(void* dst) const {
  s_->check_live("download");
  auto& st = *s_;
  st.ctx->sync_all();
  char* out = static_cast<char*>(dst);
  const std::uint64_t pb = st.g.page_bytes();
  std::uint64_t p = 0;
  while (p < st.g.pages()) {  // runs of pages with the same home, one copy each
    const int home = st.table.home(p);
    std::uint64_t q = p + 1;
    while (q < st.g.pages() && st.table.home(q) == home) ++q;
    const std::uint64_t off = p * pb, len = std::min(q * pb, st.g.bytes) - off;
    st.ctx->set(home);
    GPSM_CUDA(cudaMemcpy(out + off, st.dev[home].replica + off, len, cudaMemcpyDeviceToHost));
    p = q;
  }
}

void ArrayBase::free() {
  if (s_) s_->release();
  s_.reset();
}

}  // namespace gpsm::gps
