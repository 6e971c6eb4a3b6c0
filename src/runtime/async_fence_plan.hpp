#pragma once
// What fence_async does with one array (CUDA-free, tested on the CPU): nothing for an array that
// publishes inline and never took a view in another mode; a drain on the streams for combine and
// decoupled stores; a refusal, before anything is enqueued, for bulk stores (their
// copy-engine copies are planned on the host from the dirty map) and for a persistent agent in
// stream capture (launched outside the graph when its view was taken). The inbound areas are
// allocated at the first drain and grown after one spilled, but never in stream capture, where
// reallocating (which waits for the devices) is not allowed: records that do not fit then spill
// as word stores.
#include <cstdint>
#include <string>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

constexpr std::uint32_t mode_bit(PublishMode m) { return 1u << static_cast<unsigned>(m); }

struct AsyncDrainPlan {
  bool drain = false;   // settle (decoupled) and one drain round on the streams
  bool grow = false;    // (re)allocate the inbound areas first: the host waits for the devices
  std::string refuse;   // non-empty: why fence_async cannot publish this array (call fence())
};

// modes: mode_bit of the array's mode and of every view taken since the last fence.
// marks_dirty: the array publishes in another mode than inline_store, or a view in another mode
// was ever taken of it (views may be kept across fences, so since the last fence is not enough).
// capacity: inbound entries per (source, destination) now (0: never allocated).
// spilled: a drain of an earlier fence_async spilled records (the host-mapped hint).
inline AsyncDrainPlan plan_async_drain(std::uint32_t modes, bool marks_dirty, bool capturing, bool agent_running,
                                       std::uint64_t capacity, bool spilled) {
  AsyncDrainPlan p;
  if ((modes & mode_bit(PublishMode::bulk)) != 0u) {
    p.refuse = "in bulk mode (or a bulk view since the last fence): its copy-engine copies are planned on the host "
               "from the dirty map; call fence(), or publish it in combine or decoupled mode";
    return p;
  }
  if (capturing && agent_running) {
    p.refuse = "pushed by a persistent agent in stream capture: the agent is launched outside the graph when the "
               "view is taken; use DecoupledAgent::inline_warp in captured loops";
    return p;
  }
  p.drain = marks_dirty;
  p.grow = p.drain && !capturing && (capacity == 0 || spilled);
  return p;
}

}  // namespace gpsm::gps
