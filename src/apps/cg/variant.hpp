#pragma once
// CG's two formulations (seed: "CPU-Free Execution", chapter 3): Standard (two dot products a
// step, each waiting for the SpMV) and Pipelined (Ghysels and Vanroose, "Hiding global
// synchronization latency in the preconditioned Conjugate Gradient algorithm": one fused
// reduction a step that overlaps the SpMV).
#include <cstdint>

namespace gpsm::apps::cg {

enum class Variant : std::uint8_t { standard, pipelined };
const char* variant_name(Variant v);  // "standard" | "pipelined" (reference.cpp)

}  // namespace gpsm::apps::cg
