// gps::Context: devices, peer access (verified), streams, the wait record, fences, tracking,
// barriers. The per-array steps live in array_cuda.cpp; kernels in fence_kernels.cu.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "runtime/peer_atomics.hpp"
#include "runtime/tracking.hpp"
#include "runtime/runtime_state.hpp"
#include "common/cuda_check.hpp"
#include "common/device.hpp"

namespace gpsm::gps {
namespace detail {

// Every ordered pair: the driver's native-atomics attribute, then (where it says yes) an actual
// cross-GPU atomic test; any gap fails the context with the pairs and the devices to keep.
static void check_peer_atomics(ContextImpl& c) {
  const std::vector<int>& devices = c.devices;
  std::vector<PeerAtomicGap> gaps = pairs_without_native_atomics(devices, [](int a, int b) {
    int v = 0;
    GPSM_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, a, b));
    return v;
  });
  const std::size_t reported = gaps.size();
  for (int a = 0; a < c.size(); ++a)
    for (int b = 0; b < c.size(); ++b) {
      if (a == b) continue;
      const auto listed = [&](const PeerAtomicGap& g) { return g.from == devices[a] && g.to == devices[b]; };
      if (std::any_of(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(reported), listed)) continue;
      std::string lost = test_peer_atomics(devices[a], devices[b], c.streams[a], c.streams[b]);
      if (!lost.empty()) gaps.push_back({devices[a], devices[b], lost + " (the attribute says native)"});
    }
  if (!gaps.empty()) throw gpsm::Error(peer_atomics_message(devices, gaps));
}

void ContextImpl::set(int rank) const { GPSM_CUDA(cudaSetDevice(devices.at(rank))); }

WaitPolicy ContextImpl::wait_policy(int rank) const {
  WaitPolicy w;
  w.record = record;
  w.timeout_ns = wait_timeout_ns(settings.wait_timeout_ms);
  w.rank = rank;
  return w;
}

void ContextImpl::throw_if_wait_failed(const std::string& cuda_msg) {
  if (record == nullptr) return;
  if (reinterpret_cast<volatile WaitRecord*>(record)->valid == 0u) return;
  std::string what(record->what, strnlen(record->what, sizeof(record->what)));
  if (record->kind == WaitRecord::kStaleBarrier)
    throw gpsm::Error("gpsm: stale barrier handle on device rank " + std::to_string(record->device) + " block " +
                      std::to_string(record->block) + ": it belongs to barrier arming " +
                      std::to_string(record->expected) + ", the context's is " + std::to_string(record->observed) +
                      " (a later Context::barrier() with another block count re-armed the counters); take every "
                      "rank's handle for a launch from barrier() calls with one block count (the device context "
                      "is lost" +
                      (cuda_msg.empty() ? std::string(")") : "; " + cuda_msg + ")"));
  throw gpsm::Error("gpsm: bounded wait timed out on device rank " + std::to_string(record->device) + " (CUDA device " +
                    std::to_string(devices.at(record->device)) + ") block " + std::to_string(record->block) +
                    " thread " + std::to_string(record->thread) + ": " + what + " expected >= " +
                    std::to_string(record->expected) + " observed " + std::to_string(record->observed) +
                    " (a producer never arrived; the device context is lost" +
                    (cuda_msg.empty() ? std::string(")") : "; " + cuda_msg + ")"));
}

void ContextImpl::stop_agents() {
  bool any = false;
  for (const ArrayState* a : arrays)
    for (const auto& d : a->dev) any = any || d.armed != 0u;
  if (!any) return;
  for (int r = 0; r < size(); ++r) {
    cudaError_t e = cudaSetDevice(devices[r]);
    if (e == cudaSuccess) e = cudaStreamSynchronize(streams[r]);
    if (e != cudaSuccess) {
      throw_if_wait_failed(std::string(cudaGetErrorName(e)) + " on rank " + std::to_string(r));
      GPSM_CUDA(e);
    }
  }
  for (ArrayState* a : arrays)
    for (int r = 0; r < size(); ++r) a->stop_agent(r);
}

void ContextImpl::sync_all() {
  stop_agents();
  for (int r = 0; r < size(); ++r) {
    cudaError_t e = cudaSetDevice(devices[r]);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      throw_if_wait_failed(std::string(cudaGetErrorName(e)) + " on rank " + std::to_string(r));
      GPSM_CUDA(e);
    }
  }
  throw_if_wait_failed("");
}

void ContextImpl::fence() {
  const auto t0 = std::chrono::steady_clock::now();
  sync_all();
  if (settings.profile_fence)
    std::fprintf(stderr, "gpsm fence: wait for kernels %.3f ms\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  const bool after_async = async_fences > 0;
  async_fences = 0;
  std::vector<Control> snap;
  for (ArrayState* a : arrays) {
    a->view_modes = 0;
    if (a->marks_dirty()) a->flag_dirty();  // its stores marked words without raising dirty_any
    a->settle();  // decoupled: chunks pushed complete leave the dirty map first
    if (a->mode == PublishMode::bulk) {
      a->bulk_copy(snap);
    } else {
      a->drain_rounds(snap);
    }
    // A strong access since the last fence went to the page's home copy only; a fence_async()
    // or device fence in between let other replicas' readers go on with their stale copy.
    if (after_async)
      for (const Control& s : snap)
        if (s.sys_any != 0u)
          throw gpsm::Error("gpsm: array '" + a->name +
                            "': a system-scope access hit a replicated page after fence_async() or device_fences(); "
                            "fences without the host cannot demote such pages, so other replicas may have been "
                            "read stale. Keep flags and counters outside GPS memory, or use fence()");
    a->demote_strong_pages(snap);
  }
}

void ContextImpl::require_inline(const char* what) const {
  if (size() == 1) return;  // nothing is ever published
  for (const ArrayState* a : arrays)
    if (a->mode != PublishMode::inline_store)
      throw gpsm::Error(std::string("gpsm: ") + what + " with array '" + a->name + "' in " + mode_name(a->mode) +
                        " mode: its stores wait in the dirty map for the host-driven drain; allocate it with "
                        "PublishMode::inline_store or call fence()");
}

// Inline arrays have nothing pending once the kernels that stored end (every store went to every
// subscriber as it was issued), so for them the fence is a cross-GPU barrier on the streams: each
// rank's next work waits for every rank's earlier work. No host wait (docs/gps.md).
// Combine and decoupled arrays (and inline arrays ever written through such views) are first
// drained on the streams: the persistent agents stopped from the device, a barrier (atomics from
// other GPUs act on a source's home words), the decoupled settle, then one drain round whose
// records that do not fit the inbound areas go as word stores (spill_direct) instead of waiting
// for a host-decided second round. The barrier after it orders every rank's later work after
// every drain and unpack. While tracking, the learner reads each interval's store counts on the
// host: fence_async is then fence().
//
// AsyncFence::kernel (the default beyond two GPUs, resolve_async_fence): a one-block kernel per
// GPU meeting the others through the context's counters (the device barrier, with its own counter
// words and one participant per GPU). Every dependency stays on its GPU: stream-launched, a fence
// is one launch per GPU instead of n - 1 waits and a record; captured into a graph, it adds no
// edges between GPUs.
// AsyncFence::events (the default on two GPUs): each stream waits on every other GPU's event
// (n (n - 1) cross-GPU edges: two on two GPUs, with no launch).
void ContextImpl::fence_async() {
  const int n = size();
  if (n == 1) {  // one stream: its own order is the fence (the host fence forgets the dirty marks)
    ++async_fences;
    return;
  }
  if (tracking) {
    fence();
    return;
  }
  drain_on_streams();
  ++async_fences;
  stream_barrier();
}

void ContextImpl::drain_on_streams() {
  bool capturing = false;
  for (cudaStream_t s : streams) {
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    GPSM_CUDA(cudaStreamIsCapturing(s, &st));
    capturing = capturing || st != cudaStreamCaptureStatusNone;
  }
  std::vector<AsyncDrainPlan> plans;  // every array's, before anything is enqueued
  for (const ArrayState* a : arrays) {
    plans.push_back(a->plan_async(capturing));
    if (!plans.back().refuse.empty())
      throw gpsm::Error("gpsm: fence_async() with array '" + a->name + "' " + plans.back().refuse);
  }
  // Every armed persistent agent is told to stop once its rank's earlier kernels have ended, and
  // only then does each stream wait for its rank's agents: a wait enqueued before a stop would hold
  // that stop behind an agent that may be waiting for it (a read-only view's agent never completes
  // a chunk) until the agent's bound passed.
  for (int r = 0; r < size(); ++r) {
    set(r);
    std::vector<ArrayState*> stopped;
    for (ArrayState* a : arrays)
      if (a->dev[r].armed != 0u) {
        launch_raise_stop(a->stop + r, a->dev[r].armed, streams[r]);
        a->dev[r].armed = 0u;
        stopped.push_back(a);
      }
    for (ArrayState* a : stopped) {
      GPSM_CUDA(cudaEventRecord(a->dev[r].agent_done, a->dev[r].agent_stream));
      GPSM_CUDA(cudaStreamWaitEvent(streams[r], a->dev[r].agent_done, 0));
    }
  }
  // A drain reads its source's replica and dirty map; an atomic by another GPU acts on the home
  // copy and marks the home's map from that GPU's kernel, so no drain may start before every
  // GPU's kernels have ended.
  if (std::any_of(plans.begin(), plans.end(), [](const AsyncDrainPlan& p) { return p.drain; })) stream_barrier();
  for (std::size_t i = 0; i < arrays.size(); ++i) arrays[i]->async_drain(plans[i]);
}

void ContextImpl::stream_barrier() {
  const int n = size();
  if (resolve_async_fence(settings.async_fence, n) == AsyncFence::kernel) {
    for (int r = 0; r < n; ++r) {
      set(r);
      BarrierHandle h;
      for (int d = 0; d < n; ++d) h.counters[d] = barrier_counters[d] + 2;
      h.base = 0;
      h.participants = static_cast<std::uint32_t>(n);
      h.armed = barrier_counters[r] + 3;  // always 0: this barrier is armed once, for good
      h.arming = 0;
      h.devices = n;
      h.self = r;
      h.wait = wait_policy(r);
      launch_async_fence(h, streams[r]);
    }
    return;
  }
  for (int r = 0; r < n; ++r) {
    set(r);
    GPSM_CUDA(cudaEventRecord(events[r], streams[r]));
  }
  for (int d = 0; d < n; ++d) {
    set(d);
    for (int s = 0; s < n; ++s)
      if (s != d) GPSM_CUDA(cudaStreamWaitEvent(streams[d], events[s], 0));
  }
}

}  // namespace detail

Context::Context(const std::vector<int>& devices, Settings settings) : impl_(new detail::ContextImpl) {
  auto& c = *impl_;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw gpsm::Error("gpsm: no CUDA device found; GPS contexts need GPUs (use `gpsm sim` on this machine)");
  if (devices.empty()) throw gpsm::Error("gpsm: a context needs at least one device");
  if (static_cast<int>(devices.size()) > kMaxDevices)
    throw gpsm::Error("gpsm: a context holds at most " + std::to_string(kMaxDevices) + " devices, got " +
                      std::to_string(devices.size()));
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0 || d >= count)
      throw gpsm::Error("gpsm: device " + std::to_string(d) + " does not exist (this machine has " +
                        std::to_string(count) + "); run with --devices 0.." + std::to_string(count - 1));
    if (!seen.insert(d).second) throw gpsm::Error("gpsm: device " + std::to_string(d) + " listed twice");
  }
  c.devices = devices;
  c.settings = settings;
  const int n = c.size();

  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      std::string why;
      if (a == b || gpsm::enable_peer(devices[a], devices[b], &why)) continue;
      std::string keep;
      for (int d : devices)
        if (d != devices[b]) keep += (keep.empty() ? "" : ",") + std::to_string(d);
      throw gpsm::Error("gpsm: " + why + "; run with --devices " + keep);
    }
  c.streams.resize(n);
  c.side.resize(n);
  c.events.resize(n);
  c.chunk_events.resize(static_cast<std::size_t>(detail::ContextImpl::kFenceChunks) * n);
  c.barrier_counters.resize(n);
  c.fence_states.resize(n);
  for (int r = 0; r < n; ++r) {
    c.set(r);
    GPSM_CUDA(cudaStreamCreateWithFlags(&c.streams[r], cudaStreamNonBlocking));
    GPSM_CUDA(cudaStreamCreateWithFlags(&c.side[r], cudaStreamNonBlocking));
    GPSM_CUDA(cudaEventCreateWithFlags(&c.events[r], cudaEventDisableTiming));
    for (int k = 0; k < detail::ContextImpl::kFenceChunks; ++k)
      GPSM_CUDA(cudaEventCreateWithFlags(&c.chunk_events[static_cast<std::size_t>(k) * n + r], cudaEventDisableTiming));
    if (c.settings.profile_fence)
      for (auto& v : c.prof) {
        v.resize(n);
        GPSM_CUDA(cudaEventCreate(&v[r]));
      }
    // Barrier counters and arming words: zeroed and the zeroing complete before any peer is
    // handed a pointer.
    GPSM_CUDA(cudaMalloc(&c.barrier_counters[r], 4 * sizeof(std::uint64_t)));
    GPSM_CUDA(cudaMemset(c.barrier_counters[r], 0, 4 * sizeof(std::uint64_t)));
    GPSM_CUDA(cudaMalloc(&c.fence_states[r], sizeof(DeviceFenceState)));
    GPSM_CUDA(cudaMemset(c.fence_states[r], 0, sizeof(DeviceFenceState)));
    detail::load_fence_kernels();
    detail::load_decoupled_kernels();
  }
  GPSM_CUDA(cudaHostAlloc(&c.record, sizeof(WaitRecord), cudaHostAllocMapped | cudaHostAllocPortable));
  GPSM_CUDA(cudaHostAlloc(&c.staging, sizeof(detail::Control) * n, cudaHostAllocPortable));
  std::memset(c.record, 0, sizeof(WaitRecord));
  c.sync_all();

  if (c.settings.verify_p2p) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        if (a == b) continue;
        const std::string bad = detail::verify_peer_pair(devices[a], devices[b], 1u << 18, c.streams[a], c.streams[b]);
        if (!bad.empty())
          throw gpsm::Error("gpsm: peer access from device " + std::to_string(devices[a]) + " to device " +
                            std::to_string(devices[b]) + " is reported but corrupts data (" + bad +
                            "); do not use this pair (run with --devices without one of them), or set "
                            "GPSM_VERIFY_P2P=0 to skip this check at your own risk");
      }
    check_peer_atomics(c);
  }
}

Context::~Context() {
  auto& c = *impl_;
  for (detail::ArrayState* a : std::vector<detail::ArrayState*>(c.arrays)) a->release();
  for (int r = 0; r < c.size(); ++r) {
    cudaSetDevice(c.devices[r]);
    cudaDeviceSynchronize();
    cudaFree(c.barrier_counters[r]);
    cudaFree(c.fence_states[r]);
    cudaEventDestroy(c.events[r]);
    for (int k = 0; k < detail::ContextImpl::kFenceChunks; ++k)
      cudaEventDestroy(c.chunk_events[static_cast<std::size_t>(k) * c.size() + r]);
    for (auto& v : c.prof)
      if (!v.empty()) cudaEventDestroy(v[r]);
    cudaStreamDestroy(c.side[r]);
    cudaStreamDestroy(c.streams[r]);
  }
  if (c.record != nullptr) cudaFreeHost(c.record);
  if (c.staging != nullptr) cudaFreeHost(c.staging);
}

int Context::size() const { return impl_->size(); }
int Context::device(int rank) const { return impl_->devices.at(rank); }
cudaStream_t Context::stream(int rank) const { return impl_->streams.at(rank); }
const Settings& Context::settings() const { return impl_->settings; }
WaitPolicy Context::wait_policy(int rank) const { return impl_->wait_policy(rank); }
bool Context::tracking() const { return impl_->tracking; }

void Context::fence() { impl_->fence(); }
void Context::fence_async() { impl_->fence_async(); }
void Context::synchronize() { impl_->sync_all(); }

void Context::tracking_start() {
  auto& c = *impl_;
  if (c.tracking) throw gpsm::Error("gpsm: tracking_start() called twice without tracking_stop()");
  c.fence();
  c.tracking = true;
  for (detail::ArrayState* a : c.arrays) {
    a->forget_learned();  // the store counts are learned afresh, interval by interval
    for (int r = 0; r < c.size(); ++r) {
      c.set(r);
      GPSM_CUDA(cudaMemset(a->dev[r].track, 0, a->g.page_bitmap_words() * sizeof(std::uint32_t)));
    }
    a->upload_masks();
  }
  c.sync_all();
}

void Context::tracking_stop() {
  auto& c = *impl_;
  if (!c.tracking) throw gpsm::Error("gpsm: tracking_stop() without tracking_start()");
  c.fence();  // replicas agree before pages change hands
  c.tracking = false;
  for (detail::ArrayState* a : c.arrays) {
    std::vector<std::vector<std::uint32_t>> touched(c.size());
    for (int r = 0; r < c.size(); ++r) {
      touched[r].resize(a->g.page_bitmap_words());
      c.set(r);
      GPSM_CUDA(cudaMemcpy(touched[r].data(), a->dev[r].track, touched[r].size() * sizeof(std::uint32_t),
                           cudaMemcpyDeviceToHost));
    }
    const std::vector<std::uint32_t> before = a->table.masks();
    a->table.assign(reduce_tracking(touched, before));
    for (int r = 0; r < c.size(); ++r)
      for (const PageRange& pr : added_ranges(before, a->table.masks(), r)) a->copy_pages_from_home(before, r, pr);
    a->upload_masks();
    a->learn();  // per device and chunk, the store count that completes it (for the new subscriptions)
  }
  c.sync_all();
}

BarrierHandle Context::barrier(int rank, int blocks_per_device) {
  auto& c = *impl_;
  if (rank < 0 || rank >= c.size()) throw gpsm::Error("gpsm: barrier for rank " + std::to_string(rank) + " of a " +
                                                      std::to_string(c.size()) + "-device context");
  if (blocks_per_device < 1) throw gpsm::Error("gpsm: a barrier needs at least one block per device");
  if (static_cast<long long>(blocks_per_device) * c.size() > 0xffffffffLL)
    throw gpsm::Error("gpsm: a barrier of " + std::to_string(blocks_per_device) + " blocks on each of " +
                      std::to_string(c.size()) + " devices has more participants than its 32-bit count holds");
  const auto participants = static_cast<std::uint32_t>(blocks_per_device * c.size());
  // Handles of one participant count share one arming: its base is a generation boundary at the
  // end of every launch whose blocks all passed the same barriers, so they stay valid for any
  // later launch. Another count re-arms from the current count; handles of the old arming then
  // trap as stale instead of miscounting generations.
  if (participants != c.barrier_participants) {
    c.sync_all();  // no launch still arrives at the counters
    std::uint64_t base = 0;
    c.set(0);
    GPSM_CUDA(cudaMemcpy(&base, c.barrier_counters[0], sizeof(base), cudaMemcpyDeviceToHost));
    ++c.barrier_arming;
    c.barrier_participants = participants;
    c.barrier_base = base;
    for (int r = 0; r < c.size(); ++r) {
      c.set(r);
      GPSM_CUDA(cudaMemcpy(c.barrier_counters[r] + 1, &c.barrier_arming, sizeof(std::uint64_t), cudaMemcpyHostToDevice));
    }
  }
  BarrierHandle h;
  for (int r = 0; r < c.size(); ++r) h.counters[r] = c.barrier_counters[r];
  h.base = c.barrier_base;
  h.participants = participants;
  h.armed = c.barrier_counters[rank] + 1;
  h.arming = c.barrier_arming;
  h.devices = c.size();
  h.self = rank;
  h.wait = c.wait_policy(rank);
  return h;
}

std::vector<DeviceFence> Context::device_fences(int blocks_per_device) {
  auto& c = *impl_;
  if (blocks_per_device < 1) throw gpsm::Error("gpsm: a device fence needs at least one block per device");
  c.require_inline("device_fences()");
  c.sync_all();  // no kernel of an earlier launch still uses the state
  for (int r = 0; r < c.size(); ++r) {
    c.set(r);
    GPSM_CUDA(cudaMemset(c.fence_states[r], 0, sizeof(DeviceFenceState)));
  }
  c.sync_all();  // zeroed everywhere before any peer can write a slot
  std::vector<DeviceFence> out(c.size());
  for (int r = 0; r < c.size(); ++r) {
    DeviceFence& f = out[r];
    f.self = c.fence_states[r];
    for (int g = 0; g < c.size(); ++g) f.all[g] = c.fence_states[g];
    f.rank = r;
    f.ranks = c.size();
    f.blocks = static_cast<unsigned>(blocks_per_device);
    f.wait = c.wait_policy(r);
  }
  ++c.async_fences;  // strong accesses until the next fence() cannot be demoted on the device
  return out;
}

void Context::check_coresident(const void* kernel, int blocks, int threads, std::size_t smem) const {
  auto& c = *impl_;
  for (int r = 0; r < c.size(); ++r) {
    c.set(r);
    int per_sm = 0, sms = 0;
    GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.devices[r]));
    if (static_cast<long>(per_sm) * sms < blocks)
      throw gpsm::Error("gpsm: " + std::to_string(blocks) + " blocks of " + std::to_string(threads) +
                        " threads cannot all be resident on device " + std::to_string(c.devices[r]) + " (at most " +
                        std::to_string(per_sm * sms) + "); a device-side barrier over them would deadlock");
  }
}

std::shared_ptr<detail::ArrayState> Context::alloc_bytes(std::uint64_t bytes, const AllocOptions& o) {
  auto& c = *impl_;
  if (bytes == 0) throw gpsm::Error("gpsm: cannot allocate an empty GPS array" + (o.name.empty() ? "" : " '" + o.name + "'"));
  const std::uint64_t page = o.page_bytes != 0 ? o.page_bytes : c.settings.page_bytes;
  const int shift = page_shift_of(page);
  if (shift < 0)
    throw gpsm::Error("gpsm: page size " + std::to_string(page) + " is not a power of two of at least " +
                      std::to_string(kLineBytes) + " bytes");
  const PublishMode mode = o.mode_from_settings ? c.settings.mode : o.mode;
  check_publish_mode(mode);
  const std::uint64_t chunk = o.decoupled_chunk != 0 ? o.decoupled_chunk : c.settings.decoupled_chunk;
  check_decoupled_chunk(chunk);
  const DecoupledAgent agent = o.agent_from_settings ? c.settings.decoupled_agent : o.agent;
  if (bytes / kWordBytes >= kMaxPackedWords)
    throw gpsm::Error("gpsm: GPS arrays are limited to 16 GiB (packed offsets are 32-bit words)");
  auto s = std::make_shared<detail::ArrayState>(&c, bytes, static_cast<std::uint32_t>(shift), mode, o.name,
                                                chunk, agent);
  return s;
}

}  // namespace gpsm::gps
