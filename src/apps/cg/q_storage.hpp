#pragma once
// Where the persistent Standard CG kernels (cpu_free_std, gps) keep q = A p between the SpMV phase
// and the update phase of an iteration (GPSM_CG_Q; plain C++, CPU-tested).
//
// `global`: the SpMV phase stores q to memory and the update phase loads it back, 16 bytes a row
// of the ~97 an iteration moves (2D Poisson, the 1-byte value table; traffic.hpp).
// `shared`: each block keeps q of its chunks in shared memory between the two phases. The phases
// take the same chunks in the same round robin (chunk c by block c mod blocks, its j-th chunk
// c = block + j blocks), so the block that computes a chunk's q is the one that updates it: slot j
// of the block's shared memory holds chunk c's q from the SpMV to the update. Applies where every
// chunk a block owns fits (q_slots_for), else the run keeps `global` and says so.
// Default `shared`: on 2xH200 (experiments/cg-latency/q_shared_ab.sh, global and shared interleaved
// in one call, every run verified) it made gps 6-8 % and cpu_free_std 1.5 % faster at 2048^2's
// shares (2048x512 on 1 GPU: gps 44.3 -> 41.6 us; 2048^2 on 2 GPUs: gps 92.2 -> 85.3,
// cpu_free_std 90.5 -> 89.0) and was within 1.5 % either way at 512^2.
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpsm::apps::cg {

enum class QStorage : std::uint8_t { global, shared };

// GPSM_CG_Q: null, "" or "shared" (the default), or "global". Throws gpsm::Error otherwise.
QStorage parse_q_storage(const char* text);
const char* q_storage_name(QStorage q);

// The chunks of q a block keeps in shared memory: under `shared`, every chunk it owns
// (ceil(chunks / blocks)) when their chunk_rows doubles each fit in max_bytes, else 0 (q in
// global memory); 0 under `global`.
int q_slots_for(QStorage q, std::int64_t chunks, std::int64_t blocks, std::int64_t chunk_rows, std::size_t max_bytes);

// The run's words on it, for its timing text: which storage ran and why.
std::string q_storage_note(QStorage asked, int slots, std::int64_t chunks, std::int64_t blocks);

}  // namespace gpsm::apps::cg
