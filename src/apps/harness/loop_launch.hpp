#pragma once
// How a host-driven multi-GPU loop launches its steps (the 3D apps' host loop, the filter's gps
// passes): captured once into one CUDA graph of every step on every GPU (common/multi_gpu_graph),
// or a launch per GPU per step from the host thread. GPSM_HOST_LOOP=graph (the default) | stream.
#include <cstdint>

namespace gpsm::apps {

enum class LoopLaunch : std::uint8_t { graph, stream };
LoopLaunch loop_launch_from_env();  // throws gpsm::Error naming the value on anything else

}  // namespace gpsm::apps
