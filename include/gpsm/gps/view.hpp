#pragma once
// The device-side handle of a replicated array: a trivially copyable struct passed to kernels
// by value (Array<T>::view(rank)). Host code can hold and pass it; its methods are device code.
//
//   v.load(i)        from the local replica; from the page's home replica when this device is
//                    not subscribed (correct, slower: a remote load)
//   v.store(i, x)    local replica + publish to the page's other subscribers (mode below)
//   v.atomic_*(i,x)  performed at the page's home replica (exact with many GPUs), published to
//                    the other subscribers at the next fence
//   v.ld_acquire_sys / st_release_sys   strong accesses at the home copy; the page is demoted to
//                    that single copy at the next fence (GPS paper §5.3). Prefer flags outside GPS memory.
//   v.span(i, n)     a run checked once: where its loads read, and v.put(span, i, x) stores with
//                    no mask lookup (x may be a 16-byte vector such as float4) where the run is
//                    uniform; v.store(span, i, x) stores into any run (put, else one mask per element)
//   v.span_with(m)   the same span with no mask read, for a run whose subscribers m the host
//                    asked once (Array::subscribers) until the subscriptions change
//   v.local()        this device's replica (host and device): initial values, copies, kernels
//
// Publish modes (config.hpp): inline_store writes every other subscriber at the store;
// combine and bulk only mark the word dirty and publish at the fence; decoupled also counts the
// store in its chunk's readiness counter, and the store that completes the count learned while
// tracking has the chunk pushed while the kernel runs (docs/gps.md, "Decoupled publishing").
// A device that is not subscribed has no replica to publish from later, so its stores always go
// out inline.
// Stores are weak: other GPUs see them after Context::fence() (all modes), or, for inline
// stores, after a release at system scope (fence_sys / st_release_sys) that they acquire, such as
// the device fence of persistent kernels (device_fence.hpp).
#include <cstdint>
#include <type_traits>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/decoupled.hpp"
#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps {

// Mask bits above the device bits: bit 31 marks "tracking on" (so loads need no extra read).
constexpr std::uint32_t kTrackBit = 1u << 31;
constexpr std::uint32_t kDeviceBits = (1u << kMaxDevices) - 1u;

// Per source device, per destination: counted by the runtime when counting is on.
struct LinkCounters {
  unsigned long long useful_bytes[kMaxDevices];  // bytes of stored values delivered to the replica
  unsigned long long link_bytes[kMaxDevices];    // bytes put on the link (32 B sectors, 6 B entries, 8 B directory entries)
  unsigned long long messages[kMaxDevices];      // remote write transactions (sectors / entries)
};

struct ViewCore {
  char* replica[kMaxDevices] = {};          // replica[d]: device d's copy (peer-mapped)
  char* mine = nullptr;                     // replica[self]: no dynamic index into the array above
  const std::uint32_t* masks = nullptr;     // per page: subscriber bits | kTrackBit (this device's copy)
  const std::uint32_t* whole = nullptr;     // devices subscribed to every page; 0 while tracking
  const std::uint32_t* any = nullptr;       // devices subscribed to any page
  const std::uint32_t* runs = nullptr;      // per page: pages from it on with its mask (same_mask_runs)
  std::uint32_t* dirty[kMaxDevices] = {};   // per device: dirty-word bitmap, one u32 per line
  std::uint32_t* dirty_any[kMaxDevices] = {};
  std::uint32_t* track = nullptr;           // this device's touched-page bitmap
  std::uint32_t* sys_pages = nullptr;       // this device's "strong access seen" page bitmap
  std::uint32_t* sys_any = nullptr;
  LinkCounters* counters = nullptr;         // this device's counters, null when not counting
  std::uint64_t bytes = 0;                  // array size in bytes
  std::uint32_t page_shift = 16;
  std::int32_t self = 0;
  PublishMode mode = PublishMode::combine;
  // Decoupled mode: per device, its store counter per chunk (a store adds to its own device's; an
  // atomic marks the home device's chunk irregular), this device's learned counts (0: the fence
  // publishes the chunk), and per chunk the epoch at which it was complete (persistent agent) and
  // pushed. The epoch is the array's fence count when the view was taken.
  unsigned long long* dcount[kMaxDevices] = {};
  const unsigned long long* dexpect = nullptr;
  std::uint32_t* dready = nullptr;
  std::uint32_t* ddone = nullptr;
  std::uint32_t depoch = 0;
  std::uint32_t chunk_shift = 14;
  DecoupledAgent dagent = DecoupledAgent::inline_warp;
  bool dlearn = false;  // tracking: count every chunk's stores for the runtime to learn
  // No chunk of this device has a learned count and nothing is being learned: every decoupled
  // store is left to the fence, as in combine, and skips the counting (its warp vote, match and
  // mask read cost 25 % on random stores: gpsm publish on 2xH200, 1.345 ms against combine's 1.078).
  bool dnone = false;
};

#if defined(__CUDACC__)
namespace detail {

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

// The lanes that hit bitmap word `word` elect one (the lowest) to set their bits, OR-ed into `bits`.
__device__ __forceinline__ bool leads_word(std::uint64_t word, std::uint32_t& bits) {
  const unsigned peers = __match_any_sync(__activemask(), static_cast<unsigned long long>(word));
  bits = __reduce_or_sync(peers, bits);
  return lane_id() == static_cast<unsigned>(__ffs(peers) - 1);
}

// Sets `bits` in bitmap word `word` once per group of lanes that hit it, as a reduction: nothing
// comes back, so the warp does not wait for it. A store's dirty bit goes this way; the fence
// raises the control block's dirty_any itself for every array whose views mark words
// (ArrayState::marks_dirty), so no store needs to know whether it was the first.
__device__ __forceinline__ void or_reduced(std::uint32_t* bitmap, std::uint64_t word, std::uint32_t bits) {
  if (leads_word(word, bits)) atomicOr_system(bitmap + word, bits);
}

// Sets `bits` in bitmap word `word` once per group of lanes that hit it, and raises *any_flag
// when a bit was new (an atomic's home word: any view may make one, an inline view too, so the
// fence cannot know from the views which bitmaps hold marks).
__device__ __forceinline__ void or_aggregated(std::uint32_t* bitmap, std::uint64_t word, std::uint32_t bits,
                                              std::uint32_t* any_flag) {
  if (leads_word(word, bits)) {
    const std::uint32_t old = atomicOr_system(bitmap + word, bits);
    if (any_flag != nullptr && (old | bits) != old && *reinterpret_cast<volatile std::uint32_t*>(any_flag) == 0u)
      atomicExch_system(any_flag, 1u);
  }
}

// Touched-page bitmap: check before setting, so a hot page costs one read.
__device__ __forceinline__ void mark_page(std::uint32_t* bitmap, std::uint64_t page) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, static_cast<unsigned long long>(page));
  if (lane_id() == static_cast<unsigned>(__ffs(peers) - 1)) {
    const std::uint32_t b = 1u << (page & 31u);
    if ((*reinterpret_cast<volatile std::uint32_t*>(bitmap + (page >> 5)) & b) == 0u) atomicOr(bitmap + (page >> 5), b);
  }
}

// Inline-store accounting: one 32-byte sector per group of lanes hitting it.
__device__ __forceinline__ void count_inline(LinkCounters* c, int dst, std::uint64_t byte, unsigned bytes) {
  const unsigned active = __activemask();
  const unsigned peers = __match_any_sync(active, static_cast<unsigned long long>(byte / kSectorBytes));
  const unsigned useful = __reduce_add_sync(peers, bytes);
  if (lane_id() == static_cast<unsigned>(__ffs(peers) - 1)) {
    atomicAdd(&c->link_bytes[dst], static_cast<unsigned long long>(kSectorBytes));
    atomicAdd(&c->useful_bytes[dst], static_cast<unsigned long long>(useful));
    atomicAdd(&c->messages[dst], 1ull);
  }
}

template <class T>
__device__ __forceinline__ T atomic_add_sys(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int> ||
                std::is_same_v<T, unsigned> || std::is_same_v<T, unsigned long long>) {
    return atomicAdd_system(p, v);
  } else if constexpr (std::is_same_v<T, long long>) {
    return static_cast<long long>(atomicAdd_system(reinterpret_cast<unsigned long long*>(p),
                                                   static_cast<unsigned long long>(v)));
  } else {
    static_assert(sizeof(T) == 0, "atomic_add: float, double, int, unsigned, long long, unsigned long long");
  }
}
template <class T>
__device__ __forceinline__ T atomic_min_sys(T* p, T v) {
  static_assert(std::is_integral_v<T>, "atomic_min: integer types");
  return atomicMin_system(p, v);
}
template <class T>
__device__ __forceinline__ T atomic_max_sys(T* p, T v) {
  static_assert(std::is_integral_v<T>, "atomic_max: integer types");
  return atomicMax_system(p, v);
}
template <class T>
__device__ __forceinline__ T atomic_cas_sys(T* p, T expected, T desired) {
  if constexpr (sizeof(T) == 4) {
    unsigned r = atomicCAS_system(reinterpret_cast<unsigned*>(p), __builtin_bit_cast(unsigned, expected),
                                  __builtin_bit_cast(unsigned, desired));
    return __builtin_bit_cast(T, r);
  } else {
    unsigned long long r =
        atomicCAS_system(reinterpret_cast<unsigned long long*>(p), __builtin_bit_cast(unsigned long long, expected),
                         __builtin_bit_cast(unsigned long long, desired));
    return __builtin_bit_cast(T, r);
  }
}

}  // namespace detail
#endif  // __CUDACC__

template <class T>
class View {
 public:
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "GPS arrays hold 4- or 8-byte elements");
  static_assert(std::is_trivially_copyable_v<T>, "GPS arrays hold trivially copyable elements");
  View() = default;
  explicit View(const ViewCore& core) : c(core) {}

  GPSM_HD std::uint64_t size() const { return c.bytes / sizeof(T); }
  GPSM_HD int rank() const { return c.self; }
  GPSM_HD PublishMode mode() const { return c.mode; }
  // This device's replica, in its memory: host code may pass it to kernels and copies (initial
  // values written into every replica, say); device code may read it for pages this device
  // subscribes to. Writes through it are not published.
  GPSM_HD T* local() const { return reinterpret_cast<T*>(c.mine); }
  GPSM_HD std::uint64_t page_elems() const { return (std::uint64_t{1} << c.page_shift) / sizeof(T); }

  // A run of elements checked once (View::span). Pointers are to element 0 of a replica, so the
  // caller indexes them with the same element index it passed.
  struct Span {
    const T* from = nullptr;   // where loads of the run read: this device's replica when it subscribes
                               // to every page of the run, else the home replica when every page
                               // has the same subscribers, else nullptr (use load())
    T* here = nullptr;         // this device's replica when it subscribes to every page, else nullptr
    std::uint32_t others = 0;  // the other subscribers a store reaches (0 unless uniform)
    bool uniform = false;      // every page of the run has the same subscribers: put() applies
  };

#if defined(__CUDACC__)
  __device__ __forceinline__ std::uint64_t page_of(std::uint64_t i) const { return (i * sizeof(T)) >> c.page_shift; }

  // A page's mask as read: marks the page touched while tracking, returns the subscriber bits.
  __device__ __forceinline__ std::uint32_t seen(std::uint32_t m, std::uint64_t page) const {
    if (m & kTrackBit) detail::mark_page(c.track, page);
    return m & kDeviceBits;
  }
  __device__ __forceinline__ std::uint32_t mask_of(std::uint64_t page) const { return seen(c.masks[page], page); }

  // The local value is loaded beside the page's mask, not after it. The local replica spans every
  // page, so the speculative load is always in bounds; its value is dropped when this device does
  // not subscribe to the page.
  __device__ __forceinline__ T load(std::uint64_t i) const { return finish_load(start_load(i), i); }

  // A load in two halves, for gathers: start_load issues the two loads and waits for neither;
  // finish_load branches on the mask (tracking, a remote load when not subscribed). Starting
  // several loads before finishing any keeps several gathers in flight per thread: a branch on the
  // mask would otherwise stop the next gather from issuing (pagerank's pull on one H200: 2x the
  // time of plain loads with one load() per edge).
  struct Started {
    T here;
    std::uint32_t mask;
  };
  __device__ __forceinline__ Started start_load(std::uint64_t i) const {
    return Started{reinterpret_cast<const T*>(c.mine)[i], c.masks[page_of(i)]};
  }
  __device__ __forceinline__ T finish_load(const Started& s, std::uint64_t i) const {
    const std::uint32_t m = seen(s.mask, page_of(i));
    if ((m >> c.self) & 1u) return s.here;
    return reinterpret_cast<const T*>(c.replica[__ffs(m) - 1])[i];
  }

  // This device's whole replica when it subscribes to every page and tracking is off, else
  // nullptr: a gather reads straight from it, with no mask per load (one read per thread instead
  // of one per element; on one H200 the per-load mask branch doubles pagerank's pull on a
  // power-law graph). The word only changes between kernels (subscribe, demotion, tracking).
  __device__ __forceinline__ const T* whole_local() const { return whole_local(whole_word()); }
  // The same in two halves, so a kernel can issue the read first and test it where it loads:
  // whole_word() is the devices subscribed to every page (0 while tracking).
  __device__ __forceinline__ std::uint32_t whole_word() const { return __ldg(c.whole); }
  __device__ __forceinline__ const T* whole_local(std::uint32_t word) const {
    return ((word >> c.self) & 1u) ? reinterpret_cast<const T*>(c.mine) : nullptr;
  }

  // Whether this device alone holds every page and tracking is off: every load and store is
  // local() and nothing is ever published (one GPU, or an array demoted to this device), so a
  // kernel may run its plain code on local() with no span or mask per access. Two reads; the
  // words change only between kernels.
  __device__ __forceinline__ bool sole() const {
    const std::uint32_t me = 1u << c.self;
    return __ldg(c.whole) == me && __ldg(c.any) == me;
  }

  // [i, i + n) in this device's replica when it subscribes to every page the range covers (the
  // pages are marked touched while tracking), else nullptr (load element by element then): one
  // mask check for a short run such as a factor row, instead of one per element.
  // Costs one read per run of pages with equal masks (ViewCore::runs), not one per page; while
  // tracking, one per page (each is marked touched).
  __device__ __forceinline__ const T* local_span(std::uint64_t i, std::uint64_t n) const {
    std::uint32_t all, first_mask;
    bool uniform;
    masks_over(page_of(i), page_of(i + n - 1), first_mask, all, uniform);
    return ((all >> c.self) & 1u) ? reinterpret_cast<const T*>(c.mine) + i : nullptr;
  }

  // [i, i + n) (n >= 1) with one mask read per page instead of one per element; the pages are
  // marked touched while tracking. A row of a grid whose pages hold whole rows is one read.
  // Subscriptions change only between kernels (subscribe, unsubscribe, tracking, demotion at a
  // host fence), so a span stays valid for the whole launch: a persistent kernel may take it once.
  // Like local_span, one read per run of equal masks: a span over a whole slab of a grid whose
  // pages this device alone holds costs two reads, however many pages it covers.
  __device__ __forceinline__ Span span(std::uint64_t i, std::uint64_t n) const {
    std::uint32_t m0, all;
    bool uniform;
    masks_over(page_of(i), page_of(i + n - 1), m0, all, uniform);
    return span_of(m0, all, uniform);
  }

  // The span View::span returns for a run whose pages all have subscribers `mask`, with no mask
  // read: the mask asked once on the host (Array::subscribers, uniform), so a launch resolves its
  // published runs once per subscription change instead of once per item or store. Valid while
  // the array's subscription_version() is the one the mask was asked at; marks nothing while
  // tracking (the host answers not uniform then, so such a launch takes span() instead).
  __device__ __forceinline__ Span span_with(std::uint32_t mask) const { return span_of(mask, mask, true); }

  // Stores v at element i of a uniform span: this device's replica when it subscribes, and each
  // other subscriber as store() would (inline: a remote store each; combine and bulk: the words
  // marked dirty for the fence). V is T or a vector of T's of at most 16 bytes (float4, int2...),
  // aligned to its size, so one store moves it: i must be a multiple of sizeof(V) / sizeof(T).
  template <class V>
  __device__ __forceinline__ void put(const Span& s, std::uint64_t i, const V& v) const {
    static_assert(sizeof(V) % sizeof(T) == 0 && sizeof(V) <= 16, "put: T or a vector of T of at most 16 bytes");
    if (s.here != nullptr) *reinterpret_cast<V*>(s.here + i) = v;
    std::uint32_t others = s.others;
    if (others == 0u) return;
    if (c.mode != PublishMode::inline_store && s.here != nullptr) {
      constexpr unsigned kWords = sizeof(V) / kWordBytes;
      const std::uint64_t word = i * (sizeof(T) / kWordBytes);
      const std::uint32_t bits = ((kWords >= 32 ? 0u : (1u << kWords)) - 1u) << (word % kLineWords);
      detail::or_reduced(c.dirty[c.self], word / kLineWords, bits);
      if (c.mode == PublishMode::decoupled) decoupled_count(i * sizeof(T), kWords, others);
      return;
    }
    while (others != 0u) {
      const int d = __ffs(others) - 1;
      others &= others - 1u;
      *reinterpret_cast<V*>(reinterpret_cast<T*>(c.replica[d]) + i) = v;
      if (c.counters != nullptr) detail::count_inline(c.counters, d, i * sizeof(T), sizeof(V));
    }
  }

  // Stores v at element i of any span: put() where the run's pages agree on their subscribers,
  // else store(i, v) (the page's mask read for this element).
  __device__ __forceinline__ void store(const Span& s, std::uint64_t i, T v) const {
    if (s.uniform)
      put(s, i, v);
    else
      store(i, v);
  }

  __device__ __forceinline__ void store(std::uint64_t i, T v) const {
    const std::uint32_t m = mask_of(page_of(i));
    const std::uint32_t me = 1u << c.self;
    std::uint32_t others = m & ~me;
    if (m & me) reinterpret_cast<T*>(c.mine)[i] = v;
    if (others == 0u) return;  // demoted page, or only this device: nothing to publish
    if (c.mode != PublishMode::inline_store && (m & me)) {
      const std::uint64_t word = i * (sizeof(T) / kWordBytes);
      detail::or_reduced(c.dirty[c.self], word / kLineWords, (sizeof(T) == 4 ? 1u : 3u) << (word % kLineWords));
      if (c.mode == PublishMode::decoupled) decoupled_count(i * sizeof(T), sizeof(T) / kWordBytes, others);
      return;
    }
    while (others != 0u) {  // inline: one remote store per other subscriber
      const int d = __ffs(others) - 1;
      others &= others - 1u;
      reinterpret_cast<T*>(c.replica[d])[i] = v;
      if (c.counters != nullptr) detail::count_inline(c.counters, d, i * sizeof(T), sizeof(T));
    }
  }

  // Atomics run at the page's home copy; the other replicas see the result after the next fence.
  __device__ __forceinline__ T atomic_add(std::uint64_t i, T v) const {
    return at_home(i, [v](T* p) { return detail::atomic_add_sys(p, v); });
  }
  __device__ __forceinline__ T atomic_min(std::uint64_t i, T v) const {
    return at_home(i, [v](T* p) { return detail::atomic_min_sys(p, v); });
  }
  __device__ __forceinline__ T atomic_max(std::uint64_t i, T v) const {
    return at_home(i, [v](T* p) { return detail::atomic_max_sys(p, v); });
  }
  __device__ __forceinline__ T atomic_cas(std::uint64_t i, T expected, T desired) const {
    return at_home(i, [expected, desired](T* p) { return detail::atomic_cas_sys(p, expected, desired); });
  }
  // Reads the home copy: the value atomics act on (a replica may lag until the fence).
  __device__ __forceinline__ T load_home(std::uint64_t i) const {
    const std::uint32_t m = mask_of(page_of(i));
    return *reinterpret_cast<volatile const T*>(reinterpret_cast<const T*>(c.replica[__ffs(m) - 1]) + i);
  }

  // Strong accesses on replicated memory: performed at the home copy, and the page is reported
  // so the next fence demotes it to that one copy (GPS paper §5.3).
  __device__ __forceinline__ void st_release_sys(std::uint64_t i, T v) const {
    T* p = strong_home(i);
    if constexpr (sizeof(T) == 4) {
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(__builtin_bit_cast(unsigned, v)) : "memory");
    } else {
      asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(__builtin_bit_cast(unsigned long long, v))
                   : "memory");
    }
  }
  __device__ __forceinline__ T ld_acquire_sys(std::uint64_t i) const {
    const T* p = strong_home(i);
    if constexpr (sizeof(T) == 4) {
      unsigned r;
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(r) : "l"(p) : "memory");
      return __builtin_bit_cast(T, r);
    } else {
      unsigned long long r;
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(r) : "l"(p) : "memory");
      return __builtin_bit_cast(T, r);
    }
  }

#endif  // __CUDACC__

 private:
  ViewCore c;

#if defined(__CUDACC__)
  // The span of a run whose first page has subscribers m0, whose pages all hold `all`, and whose
  // masks are all equal (`uniform`): span() after its mask reads, span_with() with none.
  __device__ __forceinline__ Span span_of(std::uint32_t m0, std::uint32_t all, bool uniform) const {
    const std::uint32_t me = 1u << c.self;
    Span s;
    s.uniform = uniform;
    if (all & me) {
      s.here = reinterpret_cast<T*>(c.mine);
      s.from = s.here;
    } else if (uniform && m0 != 0u) {
      s.from = reinterpret_cast<const T*>(c.replica[__ffs(m0) - 1]);
    }
    s.others = uniform ? m0 & ~me : 0u;
    return s;
  }

  // Pages [first, last]: the first page's subscribers, the AND of all of them, and whether they are
  // all equal. Outside tracking, a step per run of equal masks (runs[p] pages from p share p's
  // mask); while tracking (kTrackBit on every mask), a step per page, marking each touched.
  __device__ __forceinline__ void masks_over(std::uint64_t first, std::uint64_t last, std::uint32_t& m0,
                                             std::uint32_t& all, bool& uniform) const {
    const std::uint32_t raw = c.masks[first];
    m0 = seen(raw, first);
    all = m0;
    uniform = true;
    if (last == first) return;
    if (raw & kTrackBit) {
      for (std::uint64_t p = first + 1; p <= last; ++p) {
        const std::uint32_t m = mask_of(p);
        all &= m;
        uniform = uniform && m == m0;
      }
      return;
    }
    const MaskSpan r = masks_over_runs(c.masks, c.runs, first, last);
    all = r.all;
    uniform = r.uniform;
  }

  template <class Op>
  __device__ __forceinline__ T at_home(std::uint64_t i, Op op) const {
    const std::uint32_t m = mask_of(page_of(i));
    const int home = __ffs(m) - 1;
    const T old = op(reinterpret_cast<T*>(c.replica[home]) + i);
    if (m & ~(1u << home)) {
      mark_dirty(home, i);  // replicated: the home publishes it at the fence
      // Not a counted store: the home's chunk must not be pushed as complete without it.
      if (c.mode == PublishMode::decoupled) atomicAdd(c.dcount[home] + ((i * sizeof(T)) >> c.chunk_shift), kIrregularCount);
    }
    return old;
  }

  // Algorithm 1 of the PROACT dissertation on a user's store: the lanes storing into one chunk
  // add their words to its counter in one atomic (after __syncwarp, which orders every lane's
  // stores and dirty bits before the leader's release). The add that reaches the learned count
  // marks the chunk complete: the inline agent has this warp push it now; the persistent agent is
  // told through the chunk's ready word. Chunks with no learned count are counted only while
  // tracking (for the runtime to learn) and otherwise left to the fence.
  __device__ __forceinline__ void decoupled_count(std::uint64_t byte, unsigned words, std::uint32_t others) const {
    if (c.dnone) return;  // uniform: the view's
    const unsigned active = __activemask();
    const std::uint64_t chunk = byte >> c.chunk_shift;
    __syncwarp(active);
    const unsigned peers = __match_any_sync(active, static_cast<unsigned long long>(chunk));
    const unsigned n = __reduce_add_sync(peers, words);
    const unsigned lane = detail::lane_id();
    bool complete = false;
    if (lane == static_cast<unsigned>(__ffs(peers) - 1)) {
      const unsigned long long want = c.dexpect[chunk];
      if (want != 0ull) {
        const unsigned long long old = detail::add_acq_rel_gpu(c.dcount[c.self] + chunk, n);
        complete = old < want && old + n >= want;
      } else if (c.dlearn) {
        atomicAdd(c.dcount[c.self] + chunk, static_cast<unsigned long long>(n));
      }
    }
    if (c.dagent == DecoupledAgent::persistent) {
      if (complete) detail::st_release_gpu(c.dready + chunk, c.depoch);
      return;
    }
    // Inline agent: the warp pushes each chunk one of its lanes completed, all lanes copying.
    unsigned todo = __ballot_sync(active, complete);
    const unsigned tid = static_cast<unsigned>(__popc(active & ((1u << lane) - 1u)));
    const unsigned nthreads = static_cast<unsigned>(__popc(active));
    while (todo != 0u) {
      const int from = __ffs(todo) - 1;
      todo &= todo - 1u;
      const std::uint64_t ch = __shfl_sync(active, static_cast<unsigned long long>(chunk), from);
      const std::uint32_t to = __shfl_sync(active, others, from);
      __syncwarp(active);  // the completing lane's acquire before every lane's loads
      const std::uint64_t begin = ch << c.chunk_shift;
      const std::uint64_t lim = (c.bytes + kLineBytes - 1) / kLineBytes * kLineBytes;
      const std::uint64_t end = begin + (std::uint64_t{1} << c.chunk_shift) < lim ? begin + (std::uint64_t{1} << c.chunk_shift) : lim;
      const unsigned long long moved =
          detail::push_dirty(c.mine, c.replica, to, c.dirty[c.self], begin, end, tid, nthreads);
      if (c.counters != nullptr) count_push(to, moved, lane == static_cast<unsigned>(from));
      __syncwarp(active);
      if (lane == static_cast<unsigned>(from)) c.ddone[ch] = c.depoch;
    }
  }
  // Link counters of a push: the moved bytes per destination, and one message per destination
  // from the lane that completed the chunk.
  __device__ __forceinline__ void count_push(std::uint32_t to, unsigned long long moved, bool first) const {
    for (std::uint32_t o = to; o != 0u; o &= o - 1u) {
      const int d = __ffs(o) - 1;
      if (moved != 0ull) {
        atomicAdd(&c.counters->useful_bytes[d], moved);
        atomicAdd(&c.counters->link_bytes[d], moved);
      }
      if (first) atomicAdd(&c.counters->messages[d], 1ull);
    }
  }
  // Element i's words are dirty in device `dev`'s bitmap (that device publishes them at the fence).
  __device__ __forceinline__ void mark_dirty(int dev, std::uint64_t i) const {
    const std::uint64_t word = i * (sizeof(T) / kWordBytes);
    const std::uint32_t bits = (sizeof(T) == 4 ? 1u : 3u) << (word % kLineWords);
    detail::or_aggregated(c.dirty[dev], word / kLineWords, bits, c.dirty_any[dev]);
  }
  // The home copy of element i, for a strong access; a still replicated page is reported.
  __device__ __forceinline__ T* strong_home(std::uint64_t i) const {
    const std::uint64_t page = page_of(i);
    const std::uint32_t m = mask_of(page);
    const int home = __ffs(m) - 1;
    if (m & ~(1u << home)) {
      atomicOr(c.sys_pages + (page >> 5), 1u << (page & 31u));
      *reinterpret_cast<volatile std::uint32_t*>(c.sys_any) = 1u;
    }
    return reinterpret_cast<T*>(c.replica[home]) + i;
  }
#endif  // __CUDACC__
};

}  // namespace gpsm::gps
