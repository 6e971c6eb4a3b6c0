#pragma once
// Internal state behind gps::Context and gps::Array (not installed). CUDA runtime types only;
// kernels live in the .cu files that the launch helpers below are declared for.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpsm/gps/barrier.hpp"
#include "gpsm/gps/context.hpp"
#include "runtime/decoupled_plan.hpp"
#include "runtime/async_fence_plan.hpp"
#include "runtime/finepack.hpp"
#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps::detail {

// Small per-(array, device) control block in device memory, read back in one copy per fence round.
struct Control {
  std::uint32_t dirty_any;  // an atomic marked a word since the last fence, or the fence raised it
  std::uint32_t overflow;   // a drain could not queue every packed entry (another round follows)
  std::uint32_t sys_any;    // a strong access hit a replicated page
  std::uint32_t pad;
  unsigned long long reserved;  // inbound entries reserved this round (one range serves every subscriber)
};

struct ContextImpl {
  std::vector<int> devices;
  Settings settings;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  // The combine fence drains chunk c + 1 on `streams` while `side` streams unpack chunk c.
  static constexpr int kFenceChunks = 8;
  std::vector<cudaStream_t> side;
  std::vector<cudaEvent_t> chunk_events;  // [chunk * size() + rank]: that rank drained the chunk
  std::vector<cudaEvent_t> prof[3];            // GPSM_PROFILE_FENCE: before drain, after drain, after unpack
  WaitRecord* record = nullptr;               // host-mapped, shared by all devices
  Control* staging = nullptr;                 // pinned: one control block per rank (fence reads/resets)
  // Per device, on that device: {barrier() arrivals, its current arming, fence_async arrivals, 0}.
  std::vector<std::uint64_t*> barrier_counters;
  std::uint64_t barrier_arming = 0;              // bumped when barrier() changes the participant count
  std::uint32_t barrier_participants = 0;        // of the current arming (0: never armed)
  std::uint64_t barrier_base = 0;                // arrival count when the current arming began
  std::vector<ArrayState*> arrays;             // live arrays (fence/tracking walk them)
  bool tracking = false;
  std::vector<DeviceFenceState*> fence_states;  // one per device, on that device (device_fences)

  // Ends every armed persistent agent: waits for the context's streams (the kernels whose chunks
  // the agents push), then raises each agent's stop word. sync_all() starts with it, so no wait
  // for the devices hangs on an agent whose chunks will never complete.
  void stop_agents();

  int size() const { return static_cast<int>(devices.size()); }
  void set(int rank) const;
  // Waits for every device; a device-side wait that timed out becomes gpsm::Error with its record.
  void sync_all();
  void throw_if_wait_failed(const std::string& context_msg);
  WaitPolicy wait_policy(int rank) const;
  void fence();
  void fence_async();
  // Throws unless every live array publishes inline (what a fence without the host drain needs).
  void require_inline(const char* what) const;
  // fence_async's cross-GPU barrier on the streams (events on two GPUs, the barrier kernel beyond).
  void stream_barrier();
  // fence_async's drain of the arrays holding dirty words (combine, decoupled, or non-inline views
  // since the last fence): settle and one drain round each, enqueued on the streams.
  void drain_on_streams();
  int async_fences = 0;  // fence_async() calls since the last fence(): strong accesses in between are an error
};

struct ArrayState {
  struct PerDevice {
    char* replica = nullptr;
    std::uint32_t* masks = nullptr;
    std::uint32_t* dirty = nullptr;      // one u32 per line
    std::uint32_t* track = nullptr;      // one bit per page
    std::uint32_t* sys_pages = nullptr;  // one bit per page
    Control* ctl = nullptr;
    LinkCounters* counters = nullptr;
    // Packed records from source s, in this device's memory: entry offsets and values
    // (inbound_capacity each), and one directory entry {first entry, count} per block.
    std::uint16_t* in_off[kMaxDevices] = {};
    std::uint32_t* in_val[kMaxDevices] = {};
    uint2* in_dir[kMaxDevices] = {};
    // Decoupled mode, per chunk: store counter, learned count (0: the fence publishes it), the
    // epoch it was complete (persistent agent) and the epoch it was pushed; the learned chunks.
    unsigned long long* dcount = nullptr;
    unsigned long long* dexpect = nullptr;
    std::uint32_t* dready = nullptr;
    std::uint32_t* ddone = nullptr;
    std::uint32_t* dlist = nullptr;
    std::uint32_t dlist_n = 0;
    std::uint32_t armed = 0;  // generation of this device's running persistent agent; 0: none
    // The persistent agents' stream of this array on this device (made at the first agent), and
    // fence_async's event that the stopped agent has ended. One per array: agents of different
    // arrays run side by side, so a read-only view's agent, which waits for its stop, does not
    // hold back the agent of the array the kernel writes.
    cudaStream_t agent_stream = nullptr;
    cudaEvent_t agent_done = nullptr;
  };

  ContextImpl* ctx = nullptr;
  std::string name;
  Geometry g;
  PublishMode mode = PublishMode::combine;
  SubscriptionTable table;
  std::uint64_t mask_version = 0;  // upload_masks() calls: ArrayBase::subscription_version
  bool counting = false;
  std::uint64_t inbound_capacity = 0;  // entries per (source, destination); 0 until first needed
  bool grow_inbound = false;           // a fence overflowed: double the capacity at the next one
  std::uint64_t blocks() const { return (g.lines() + block_lines_for(g.page_shift) - 1) / block_lines_for(g.page_shift); }
  LinkStats host_stats;                // bulk copies and fence rounds, counted on the host
  // One copy-engine copy of `bytes` to another replica, in host_stats.
  void count_copy(std::uint64_t bytes) {
    host_stats.useful_bytes += bytes;
    host_stats.link_bytes += bytes;
    host_stats.messages += 1;
  }
  std::vector<PerDevice> dev;

  // Decoupled mode (docs/gps.md, "Decoupled publishing").
  ChunkLayout layout;
  DecoupledAgent agent = DecoupledAgent::inline_warp;
  StoreCountLearner learner;     // the store counts of each fence interval while tracking
  std::uint32_t epoch = 1;       // fences so far + 1: the value ready/done words take this interval
  std::uint32_t generation = 0;  // persistent agents launched so far
  std::uint32_t* stop = nullptr; // host-mapped, one word per device: an agent of generation g ends when it reaches g
  bool decoupled_used = false;   // a decoupled view was taken: the fence settles the counters
  // Publish modes of the views taken since the last fence (bit 1 << mode): fence_async refuses an
  // array with a bulk view among them.
  mutable std::uint32_t view_modes = 0;
  // A view in another mode than inline_store was ever taken (sticky: a view may be kept across
  // fences). Its stores mark dirty words without raising the control block's dirty_any.
  mutable bool dirty_views = false;
  bool marks_dirty() const { return mode != PublishMode::inline_store || dirty_views; }
  // Raises every device's dirty_any on its stream (the stores of marks_dirty() arrays do not),
  // before the fence's settle and drain read it.
  void flag_dirty();
  // Host-mapped: a drain of fence_async spilled a block (its inbound areas are too small); the next
  // fence_async outside stream capture doubles them.
  std::uint32_t* spill_hint = nullptr;

  ArrayState(ContextImpl* c, std::uint64_t bytes, std::uint32_t page_shift, PublishMode m, std::string nm,
             std::uint64_t chunk_bytes, DecoupledAgent a);
  ~ArrayState();
  ArrayState(const ArrayState&) = delete;
  ArrayState& operator=(const ArrayState&) = delete;
  void release();
  bool released() const { return ctx == nullptr; }
  void check_live(const char* what) const;
  void upload_masks();
  void ensure_inbound();
  // Fence steps (callers have synchronized every device).
  // Each returns the control blocks as they were at the end of its last round (sys_any kept).
  void drain_rounds(std::vector<Control>& snap);
  // One drain round enqueued on the context's streams (drain per chunk of blocks on `streams`,
  // unpack on `side`), ending with each side stream's completion recorded in ctx->events.
  // spill_direct (fence_async): a block whose packed record does not fit goes as word stores
  // instead of staying dirty for another round, so one round publishes everything.
  void enqueue_drain_round(bool spill_direct);
  // fence_async's part of this array. plan_async: what it will do (async_fence_plan.hpp), asked
  // of every array before anything is enqueued, so a refusal (bulk, whose copies are planned on
  // the host; a persistent agent in stream capture) leaves the streams untouched. async_drain:
  // the plan's drain on the streams, its persistent agents already stopped by the context:
  // dirty_any raised, settled, drained in one round (nothing for an inline array without other
  // views).
  AsyncDrainPlan plan_async(bool capturing) const;
  bool agent_running() const;  // a persistent agent of this array is armed on some device
  void async_drain(const AsyncDrainPlan& p);
  void bulk_copy(std::vector<Control>& snap);
  void demote_strong_pages(const std::vector<Control>& snap);
  // One asynchronous read of every device's control block, then one wait (pinned staging).
  // reset: each block is then reset on the device for the next round (no host round trip).
  void read_controls(std::vector<Control>& snap, bool reset = false);
  void copy_pages_from_home(const std::vector<std::uint32_t>& before, int rank, PageRange r);
  // Decoupled steps. arm_agent: launches rank's persistent agent unless one runs (view()).
  // stop_agent: raises the stop word of rank's agent. settle (callers synchronized every device):
  // while tracking, hands the interval's counts to the learner; then per chunk, drops the dirty
  // bits of chunks pushed complete, keeps the others' for the drain, zeroes the counters.
  // learn: at tracking_stop, uploads the learned counts for the new subscriptions.
  void arm_agent(int rank);
  void stop_agent(int rank);
  void settle();
  void enqueue_settle();  // settle's device part, on the streams (no tracking: nothing read back)
  void learn();
  void forget_learned();
};

// Launchers for the kernels in fence_kernels.cu.
// Source side: every block of lines [first_block, last_block) of one replica.
struct DrainArgs {
  const std::uint32_t* src = nullptr;
  std::uint32_t* dirty = nullptr;
  const std::uint32_t* masks = nullptr;
  Control* ctl = nullptr;
  std::uint32_t* dst[kMaxDevices] = {};       // replicas (direct lines)
  std::uint16_t* off[kMaxDevices] = {};       // destination d's inbound area for this source
  std::uint32_t* val[kMaxDevices] = {};
  uint2* dir[kMaxDevices] = {};
  LinkCounters* counters = nullptr;
  std::uint64_t lines = 0;
  std::uint64_t first_block = 0, last_block = 0;
  std::uint64_t capacity = 0;
  std::uint32_t page_shift = 16;
  std::uint32_t block_lines = kMaxBlockLines;
  std::int32_t self = 0;
  std::int32_t devices = 0;
  // fence_async: a record that does not fit goes as word stores to every subscriber (and raises
  // spill_hint) instead of leaving the block dirty for a second round.
  bool spill_direct = false;
  std::uint32_t* spill_hint = nullptr;  // host-mapped
};
// Receiver side: merge every source's records of blocks [first_block, last_block).
struct UnpackArgs {
  std::uint32_t* words = nullptr;
  const std::uint16_t* off[kMaxDevices] = {};
  const std::uint32_t* val[kMaxDevices] = {};
  uint2* dir[kMaxDevices] = {};
  std::uint64_t lines = 0;
  std::uint64_t first_block = 0, last_block = 0;
  std::uint32_t block_lines = kMaxBlockLines;
  std::int32_t self = 0;
  std::int32_t devices = 0;
};
void launch_drain(const DrainArgs& a, cudaStream_t s);
void launch_unpack(const UnpackArgs& a, cudaStream_t s);
void launch_reset_control(Control* c, cudaStream_t s);
// Loads the fence's and the decoupled mode's kernels on the current device (Context's
// constructor, every device). Under CUDA's lazy module loading a kernel's first launch waits for
// the kernels already running: a fence_async kernel loaded while a persistent agent polls for its
// stop word would wait out the agent's bound.
void load_fence_kernels();
void load_decoupled_kernels();
// fence_async (AsyncFence::kernel): one block on s meets every GPU's at h (one block per GPU).
void launch_async_fence(const BarrierHandle& h, cudaStream_t s);

// decoupled_kernels.cu
struct SettleArgs {
  unsigned long long* count = nullptr;
  const unsigned long long* expect = nullptr;
  std::uint32_t* done = nullptr;
  std::uint32_t* ready = nullptr;
  std::uint32_t* dirty = nullptr;
  Control* ctl = nullptr;
  std::uint64_t chunks = 0;
  std::uint64_t padded_bytes = 0;
  std::uint32_t chunk_shift = 14;
  std::uint32_t epoch = 0;
};
// Zeroes ctl->dirty_any first, then sets it again where a chunk left to the drain is dirty.
void launch_settle(const SettleArgs& a, cudaStream_t s);

struct AgentArgs {
  const char* src = nullptr;
  char* dst[kMaxDevices] = {};
  const std::uint32_t* dirty = nullptr;
  const std::uint32_t* masks = nullptr;     // this device's copy of the subscriber masks
  const std::uint32_t* chunks = nullptr;    // the learned chunks
  std::uint32_t nchunks = 0;
  const std::uint32_t* ready = nullptr;
  std::uint32_t* done = nullptr;
  const std::uint32_t* stop = nullptr;      // host-mapped
  LinkCounters* counters = nullptr;
  std::uint64_t padded_bytes = 0;
  std::uint64_t timeout_ns = 0;
  std::uint32_t epoch = 0, generation = 0;
  std::uint32_t chunk_shift = 14, page_shift = 16;
  std::int32_t self = 0;
};
void launch_decoupled_agent(const AgentArgs& a, cudaStream_t s);
// fence_async: raises *stop to generation once the stream's earlier work has ended (the device's
// side of stop_agent; stop is host-mapped).
void launch_raise_stop(std::uint32_t* stop, std::uint32_t generation, cudaStream_t s);

// p2p_verify_cuda.cpp: pattern over peer stores, peer loads and copy-engine copies from rank a to b.
// Returns an empty string when every word arrived, else what went wrong.
std::string verify_peer_pair(int dev_a, int dev_b, std::uint64_t words, cudaStream_t sa, cudaStream_t sb);
// Device a's system-scope atomics on device b's memory, concurrent with b's own
// (peer_atomic_test.cu): "" when every update counted, else what was lost.
std::string test_peer_atomics(int dev_a, int dev_b, cudaStream_t sa, cudaStream_t sb);

}  // namespace gpsm::gps::detail
