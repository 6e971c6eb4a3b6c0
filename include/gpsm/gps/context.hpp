#pragma once
// The GPS host API: a context over a list of GPUs, and replicated arrays in it.
//
//   gpsm::gps::Context ctx({0, 1, 2, 3});            // peer access, verified with a pattern
//   auto x = ctx.alloc<float>(n);                     // a replica on every GPU, all subscribed
//   ctx.tracking_start(); /* iteration 0 */ ctx.tracking_stop();   // keep only pages touched
//   x.unsubscribe(first, count, rank);                // manual hints (ranks are context indices)
//   kernel<<<g, b, 0, ctx.stream(r)>>>(x.view(r));    // device: v.load(i), v.store(i, val)
//   ctx.fence();                                      // every publish visible in every replica
//
// Persistent kernels (the whole solve in one launch per GPU) fence on the device instead:
//   auto f = ctx.device_fences(blocks);               // device_fence.hpp; inline_store arrays
//   solve<<<blocks, b, 0, ctx.stream(r)>>>(x.view(r), f[r]);   // f.arrive_and_wait(t, ...) per round
//
// Ranks, not CUDA ordinals, name devices everywhere in this API: rank r is devices[r].
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpsm/distributed_array.hpp"
#include "gpsm/gps/barrier.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/settings.hpp"
#include "gpsm/gps/subscription.hpp"
#include "gpsm/gps/sync.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::gps {

namespace detail {
struct ContextImpl;
struct ArrayState;
}  // namespace detail

struct AllocOptions {
  std::uint64_t page_bytes = 0;  // 0: the context's setting (GPSM_PAGE_SIZE, default 64 KiB)
  PublishMode mode = PublishMode::combine;
  bool mode_from_settings = true;  // take GPSM_PUBLISH_MODE unless the caller set `mode` explicitly
  std::string name;                // used in messages
  // Decoupled mode: readiness-counter chunk (0: GPSM_DECOUPLED_CHUNK; capped at the page) and agent.
  std::uint64_t decoupled_chunk = 0;
  DecoupledAgent agent = DecoupledAgent::inline_warp;
  bool agent_from_settings = true;  // take GPSM_DECOUPLED_AGENT unless the caller set `agent`
};
inline AllocOptions with_mode(PublishMode m) {
  AllocOptions o;
  o.mode = m;
  o.mode_from_settings = false;
  return o;
}
inline AllocOptions with_decoupled(DecoupledAgent a, std::uint64_t chunk_bytes = 0) {
  AllocOptions o = with_mode(PublishMode::decoupled);
  o.agent = a;
  o.agent_from_settings = false;
  o.decoupled_chunk = chunk_bytes;
  return o;
}

// Counted by the runtime (when counting is on): one total over every source and destination.
struct LinkStats {
  std::uint64_t useful_bytes = 0;  // value bytes delivered to other replicas
  std::uint64_t link_bytes = 0;    // bytes put on links: 32 B sectors (inline stores, direct lines),
                                   // 6 B packed entries plus one 8 B directory entry per record, copy runs
  std::uint64_t messages = 0;      // sectors, packed entries, copy runs
  std::uint64_t fence_rounds = 0;  // drain rounds (more than one per fence when inbound queues filled)
};

class ArrayBase {
 public:
  ArrayBase() = default;
  explicit ArrayBase(std::shared_ptr<detail::ArrayState> s) : s_(std::move(s)) {}
  bool valid() const { return s_ != nullptr; }
  std::uint64_t bytes() const;
  std::uint64_t page_bytes() const;
  PublishMode mode() const;
  void set_mode(PublishMode m);
  const SubscriptionTable& subscriptions() const;
  // Whether `rank` alone holds every page and tracking is off: its views' sole() is true, every
  // access is to its own replica and nothing it stores is published, so the caller may launch its
  // plain kernel on the replica (View::local()) instead of the GPS one: no span, mask or branch
  // on any access, and none of the GPS path's registers (one GPU, or an array only this rank
  // touched). The answer holds until the subscriptions change (subscribe, unsubscribe, tracking,
  // demotion): take it where the launch is made, as the view is.
  bool sole(int rank) const;
  // Whether `rank` subscribes to every page and tracking is off: its views' whole_local() is its
  // replica, so the caller may launch a kernel that reads (not stores) straight from local().
  bool holds_every_page(int rank) const;
  // How rank's accesses to bytes [begin, end) go (Reach; checked while tracking is on, whose views
  // must see every access): where it is sole, a launch may run its plain code on local() for that
  // part of its work (a slab's interior), keeping the GPS path for the parts whose stores are
  // published (shared) or whose pages rank lacks (checked). Like sole(), the answer holds until
  // the subscriptions change: subscription_version() tells when to ask again.
  Reach reach_bytes(std::uint64_t begin, std::uint64_t end, int rank) const;
  // The subscribers of the pages overlapping bytes [begin, end) (RangeSubscribers; not uniform
  // while tracking is on, whose views must see every access): where a part of a launch stores into
  // a shared run with one subscriber set, its kernel may publish through View::span_with(mask)
  // with no mask read per item or store. Holds until subscription_version() changes.
  RangeSubscribers subscribers_bytes(std::uint64_t begin, std::uint64_t end) const;
  // Changes whenever reach_bytes, subscribers_bytes, sole or holds_every_page may answer differently (every mask
  // change: subscribe, unsubscribe, demotion, tracking start and stop). A launch that classifies its
  // work on the host keeps the classes while this stays the same.
  std::uint64_t subscription_version() const;
  // Publishes cells that `rank` stored into its own replica (View::local(), a plain kernel) rather
  // than through a view: the sub-box [lo, hi) of the array read as a 3D volume of n[0] x n[1] x
  // n[2] elements of `elem` bytes (x fastest) is copied by copy engine from rank's replica to every
  // other device subscribed to its pages (each gets the rows on pages it subscribes to: one 3D copy
  // where that is all of them), on rank's stream after the work enqueued there (captured into a
  // CUDA graph where that stream is being captured). The next
  // fence_async() or fence() orders the copies before the other devices' later work. A copy's
  // bytes count in link_stats() while counting. The box must hold only cells `rank` wrote since
  // the last fence (a copy carries whole rows of the box).
  void publish_box_bytes_async(const std::uint64_t n[3], std::uint64_t elem, const std::uint64_t lo[3],
                               const std::uint64_t hi[3], int rank);
  // Byte-range subscription hints (pages overlapping the range). Both fence first.
  void subscribe_bytes(std::uint64_t begin, std::uint64_t end, int rank);
  void unsubscribe_bytes(std::uint64_t begin, std::uint64_t end, int rank);
  // Collapse pages to their home copy (pages holding system-scope synchronization variables).
  void demote_bytes(std::uint64_t begin, std::uint64_t end);
  // Counting of link bytes: views taken after the call count (it costs time: off for timing).
  void set_counting(bool on);
  LinkStats link_stats() const;  // since the last reset
  // Decoupled mode: the chunk size, and how many chunks rank's stores complete by the counts
  // learned at the last tracking_stop() (each pushed by an agent while the kernel runs).
  std::uint64_t chunk_bytes() const;
  std::uint64_t learned_chunks(int rank) const;
  DecoupledAgent agent() const;
  void reset_link_stats();
  // Writes every replica (all ranks, subscribed or not) from host memory; fences first.
  void upload(const void* src, std::uint64_t bytes, std::uint64_t offset = 0);
  // Rank's raw replica (pages it does not subscribe to are stale: use download_coherent).
  void download_replica(void* dst, int rank) const;
  // Each page from its home: what every subscriber holds after a fence.
  void download_coherent(void* dst) const;
  void free();

 protected:
  ViewCore core(int rank, PublishMode mode) const;
  std::shared_ptr<detail::ArrayState> s_;
};

template <class T>
class Array : public ArrayBase {
 public:
  Array() = default;
  explicit Array(std::shared_ptr<detail::ArrayState> s) : ArrayBase(std::move(s)) {}
  std::uint64_t size() const { return bytes() / sizeof(T); }
  View<T> view(int rank) const { return View<T>{core(rank, mode())}; }
  View<T> view(int rank, PublishMode m) const { return View<T>{core(rank, m)}; }
  void subscribe(std::uint64_t first, std::uint64_t count, int rank) {
    subscribe_bytes(first * sizeof(T), (first + count) * sizeof(T), rank);
  }
  Reach reach(std::uint64_t first, std::uint64_t count, int rank) const {
    return reach_bytes(first * sizeof(T), (first + count) * sizeof(T), rank);
  }
  RangeSubscribers subscribers(std::uint64_t first, std::uint64_t count) const {
    return subscribers_bytes(first * sizeof(T), (first + count) * sizeof(T));
  }
  void unsubscribe(std::uint64_t first, std::uint64_t count, int rank) {
    unsubscribe_bytes(first * sizeof(T), (first + count) * sizeof(T), rank);
  }
  void demote(std::uint64_t first, std::uint64_t count) { demote_bytes(first * sizeof(T), (first + count) * sizeof(T)); }
  // publish_box_bytes_async with T's elements.
  void publish_box_async(const std::uint64_t n[3], const std::uint64_t lo[3], const std::uint64_t hi[3], int rank) {
    publish_box_bytes_async(n, sizeof(T), lo, hi, rank);
  }
  void upload(const std::vector<T>& v) { ArrayBase::upload(v.data(), v.size() * sizeof(T)); }
  std::vector<T> replica(int rank) const {
    std::vector<T> v(size());
    download_replica(v.data(), rank);
    return v;
  }
  std::vector<T> coherent() const {
    std::vector<T> v(size());
    download_coherent(v.data());
    return v;
  }
};

class Context {
 public:
  // Enables peer access between every pair, verifies it by writing and checking a pattern over
  // every pair, and throws gpsm::Error naming the pair that fails.
  explicit Context(const std::vector<int>& devices, Settings settings = Settings::from_env());
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int size() const;
  int device(int rank) const;  // CUDA ordinal
  cudaStream_t stream(int rank) const;
  const Settings& settings() const;

  template <class T>
  Array<T> alloc(std::uint64_t n, AllocOptions o = {}) {
    return Array<T>(alloc_bytes(n * sizeof(T), o));
  }

  // A distributed array (gpsm/distributed_array.hpp): the spec's owners are ranks of this
  // context; every block lives on its owner's GPU, one range readable and writable by all.
  // Checks VMM support on every GPU and peer access on every pair, and the spec against the
  // driver's granularity, before allocating; throws gpsm::Error ("gpsm: distributed array: ...").
  template <class T>
  gpsm::DistributedArray<T> alloc_distributed(gpsm::BlockSpec spec, gpsm::DistributedOptions o = {}) {
    return gpsm::DistributedArray<T>(alloc_distributed_bytes(std::move(spec), sizeof(T), o));
  }
  // The largest VMM allocation granularity of the context's GPUs (the unit of distributed arrays'
  // chunks: 2 MiB on Hopper).
  std::uint64_t distributed_granularity() const;
  // GPS interoperation: makes each page of GPS array `a` held by exactly one GPU, the rank that
  // owns most of the page's bytes in `m` (OwnershipMap::page_owners at a's page size), which is
  // then the page's home: its atomics and non-subscribers' loads go there, and tracking adds the
  // GPUs that touch it. `a` holds the same elements as `m`, row-major (a.bytes() == m's bytes).
  void home_pages_at_owners(ArrayBase& a, const gpsm::OwnershipMap& m);

  // Waits for all work on every device, then publishes every pending store and atomic of every
  // array: afterwards each subscriber's replica holds the final value of every word.
  void fence();
  // The same guarantee ordered on the context's streams, with no host wait: work enqueued on
  // stream(d) after the call sees every store of work enqueued on any stream(s) before it.
  // Inline arrays need only a cross-GPU barrier (their atomics reach the other replicas at the
  // next fence() only); combine and decoupled arrays (and inline arrays ever written through such
  // views) are first drained on the streams in one round, after a barrier (decoupled: the
  // persistent agents stopped from the device, chunks pushed complete skipped). Records that do
  // not fit the inbound areas go as word stores; the areas are allocated at the first call and
  // grow at a later call outside stream capture (that call waits for the devices once). Captured
  // into a CUDA graph, it adds no host step. Throws gpsm::Error, before enqueuing anything, for a
  // bulk array or bulk view since the last fence (its copies are planned on the host: use
  // fence()) and, in stream capture, for an array with a running persistent agent (launched
  // outside the graph). While tracking it is fence() (the host reads each interval's store
  // counts). A strong (system-scope) access to a replicated page cannot be demoted here: the next
  // fence() throws if one happened since the last fence().
  void fence_async();
  // Device-side fences for persistent kernels (device_fence.hpp), one handle per rank ([r] for
  // rank r), for kernels of blocks_per_device co-resident blocks on every device. Waits for every
  // device, zeroes the fence state and returns the handles: call it before each launch. Throws
  // gpsm::Error when an array of the context publishes in another mode than inline_store (its
  // stores wait for the host-driven drain of fence()). As after fence_async(), a strong access to
  // a replicated page in between makes the next fence() throw.
  std::vector<DeviceFence> device_fences(int blocks_per_device);
  void synchronize();  // all devices idle; turns a failed device wait into gpsm::Error

  // Automatic subscription: between start and stop, devices record the pages they touch; at
  // stop each device stays subscribed exactly to the pages it touched (a page nobody touched
  // keeps its home). Applies to every live array.
  void tracking_start();
  void tracking_stop();
  bool tracking() const;

  // Device barrier handle for `rank`, for blocks_per_device blocks on each device. A handle may
  // be reused for any later launch with the same block count; taking handles with another block
  // count re-arms the barrier (after waiting for the devices), and older handles then fail the
  // launch with a "stale barrier handle" gpsm::Error instead of passing early.
  BarrierHandle barrier(int rank, int blocks_per_device);
  // Throws gpsm::Error unless `blocks` blocks of `kernel` fit on each device at once.
  void check_coresident(const void* kernel, int blocks, int threads, std::size_t dynamic_smem) const;
  WaitPolicy wait_policy(int rank) const;

 private:
  std::shared_ptr<detail::ArrayState> alloc_bytes(std::uint64_t bytes, const AllocOptions& o);
  std::shared_ptr<gpsm::detail::DistributedState> alloc_distributed_bytes(gpsm::BlockSpec spec, std::uint64_t elem_bytes,
                                                                        const gpsm::DistributedOptions& o);
  std::unique_ptr<detail::ContextImpl> impl_;
};

}  // namespace gpsm::gps
