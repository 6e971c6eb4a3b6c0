#pragma once
// The marching step's costs (docs/sim.md "Local time of a kernel"): the distinct bytes of a set of
// address ranges (the L2 footprint of a kernel, the L1 footprint of a marching block) and the time
// of one march step derived from the residency. Plain C++.
#include <cstdint>
#include <utility>
#include <vector>

namespace gpsm::sim {

using ByteRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // [lo, hi) each

// Adds [lo, hi) to `r`, merged into the last range when they overlap or touch (runs come in
// address order within an instruction slot, so this keeps `r` short).
void add_range(ByteRanges& r, std::uint64_t lo, std::uint64_t hi);

// Distinct bytes of the ranges (their union's length). Sorts `r`.
double distinct_bytes(ByteRanges& r);

// The union of the ranges as ascending disjoint ranges (touching ones joined). Sorts `r`.
ByteRanges merged(ByteRanges& r);

// One step of a march (a block's dependent plane: load the next plane, store the current one),
// when `resident` blocks march at once and each moves `bytes_per_step` through DRAM per step:
// the steps of all resident blocks share the HBM, so a step takes resident x bytes / HBM. With
// the H200's 132 SMs x 4 blocks x 8 KiB (heat3d: a 4-KiB plane loaded, one stored) at 3.53 TB/s
// that is 1.22 us, the 1.18 us fitted before on that kernel (docs/sim.md); at 5 blocks 1.53 us.
double march_step_seconds(double resident, double bytes_per_step, double hbm_GBps);

}  // namespace gpsm::sim
