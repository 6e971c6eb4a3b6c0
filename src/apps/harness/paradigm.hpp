#pragma once
// The multi-GPU programming paradigms `gpsm bench` compares (docs/bench.md lists them per app).
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps {

enum class Paradigm : std::uint8_t {
  single,      // one GPU, no communication
  memcpy,      // halos duplicated by copy-engine copies after each kernel
  um,          // one managed allocation, no hints (pages fault and migrate)
  um_hints,    // managed, with preferred location / accessed-by / prefetch hints (read back)
  rdl,         // remote demand loads of halos from the neighbour's memory (GPU-SM)
  p2p_inline,  // halos pushed by peer stores as they are produced
  gps,         // GPS arrays, subscriptions learned by tracking, inline publish
  gps_all,     // GPS arrays with every GPU subscribed to every page (no tracking): GPS's default
  gps_pipe,    // CG's Pipelined variant on GPS memory (split-phase device fence; docs/cg.md)
  proact,      // decoupled (PROACT): readiness flags on the edge rows, copy engines waiting on them
  nvshmem,     // NVSHMEM puts + signals
  nccl,        // NCCL send/recv for halos, allreduce for the norm
  cpu_free,    // one persistent cooperative kernel per GPU: device-side barriers and norm
  // Conjugate gradient's Standard (std) and Pipelined (pipe) variants (docs/cg.md):
  cpu_ctrl_std,   // host-launched kernels per step, dot products reduced by NCCL, halos copied
  cpu_ctrl_pipe,  // the same, the reduction on a second stream overlapping SpMV
  cpu_free_std,   // one persistent kernel per GPU: device-side reductions, barrier and halo pushes
  cpu_free_pipe,  // the same with the reduction overlapping SpMV (thread-block specialization)
  nvshmem_std,    // cpu_free_std's kernel in one NVSHMEM process (PE) per GPU, symmetric-heap pushes
  nvshmem_pipe,   // cpu_free_pipe's kernel the same way
  infinite,    // the memcpy run with every transfer elided: the opportunity bound
};
constexpr int kParadigmCount = 20;

const char* paradigm_name(Paradigm p);
// "all" (every paradigm, canonical order) or a comma-separated list; duplicates collapse, the
// order is canonical. Throws std::invalid_argument naming the bad name and listing the good ones.
std::vector<Paradigm> parse_paradigms(const std::string& s);
// Comma-separated GPU counts ("1,2,4"): positive, duplicates collapse, sorted. Throws
// std::invalid_argument naming the bad entry.
std::vector<int> parse_gpu_counts(const std::string& s);

}  // namespace gpsm::apps
