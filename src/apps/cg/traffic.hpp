#pragma once
// Bytes a CG iteration moves (plain C++), per paradigm, summed over the GPUs:
//   link: the halo entries (8 bytes each, one vector per iteration in both variants: r for
//         Standard, w for Pipelined) plus the reductions' messages between GPUs;
//   memory: a model of the compulsory traffic of each GPU's kernels: the matrix once (8-byte
//         value and 4-byte column per nonzero, 4-byte row pointers; in the sliced layout per
//         stored entry, padding included, and 4-byte slice pointers; values and columns as
//         stored: value_storage.hpp, sell_deltas.hpp) and every vector the
//         iteration reads or writes once (docs/cg.md lists them); time per iteration against it
//         gives the achieved memory bandwidth, the roofline CG is bound by.
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"

namespace gpsm::apps::cg {

// How the reductions and halos travel.
enum class Exchange : std::uint8_t {
  none,     // one GPU, nothing crosses
  host,     // cpu_ctrl_*: halos packed and copied by copy engines, partials by NCCL allgather
  device,   // cpu_free_*: halos pushed from the kernel, partials as tagged words (cg_sync.hpp)
  elided,   // infinite: device words kept, halo pushes stored on the sending GPU
};

// Bytes of one device reduction message: a 64-bit tag and `values` doubles.
constexpr double device_word_bytes(int values) { return 8.0 + 8.0 * values; }

double link_bytes_per_iter(const Plan& plan, Variant v, Exchange e);
// discrete: the host-driven kernels (Pipelined keeps A w in memory between its two kernels;
// the persistent kernel keeps it in shared memory). q_shared: the persistent Standard kernels keep
// q in shared memory between their phases (q_storage.hpp): 16 bytes a row fewer.
double mem_bytes_per_iter(const Plan& plan, Variant v, bool discrete, bool q_shared = false);
// The largest GPU's share of mem_bytes_per_iter: what bounds the time per iteration.
double max_rank_mem_bytes(const Plan& plan, Variant v, bool discrete, bool q_shared = false);
// Reductions (cross-GPU synchronizations) per iteration: 2 for Standard, 1 for Pipelined.
constexpr int syncs_per_iter(Variant v) { return v == Variant::standard ? 2 : 1; }

}  // namespace gpsm::apps::cg
