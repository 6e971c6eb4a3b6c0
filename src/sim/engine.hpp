#pragma once
// The simulator: replays a trace on a System under a paradigm and returns what `gpsm bench`
// returns for a real run (time per iteration, link bytes), so both print the same table.
// Plain C++, deterministic (same trace, system and options: same result).
#include <string>
#include <vector>

#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

// Paradigms the simulator models: the bench paradigms plus the hardware proposals.
enum class SimParadigm { memcpy, um, um_hints, rdl, p2p_inline, gps_hw, finepack, proact, infinite };
const char* sim_paradigm_name(SimParadigm p);
std::vector<SimParadigm> parse_sim_paradigms(const std::string& list);  // "all" or comma list

struct SimOptions {
  double gps_page_bytes = 64 << 10;      // GPS subscription granularity (4 KiB / 64 KiB / 2 MiB)
  double write_queue_entries = 64;       // GPS / FinePack remote write queue, 128 B entries per destination
  int finepack_subheader = 5;            // bytes per FinePack sub-transaction header (2..6)
  double proact_chunk_bytes = 1 << 20;   // PROACT chunk size
  double link_scale = 1;                 // multiply every link's bandwidth (sweeps)
};

struct SimResult {
  double sec_per_iter = 0;
  double link_bytes_per_iter = 0;    // wire bytes over all links (headers included)
  double useful_bytes_per_iter = 0;  // payload the app needed moved
  double compute_s = 0, transfer_s = 0, exposed_transfer_s = 0;  // per iteration, the slowest GPU
  std::string model;                 // one line: what the paradigm model assumed
};

SimResult simulate(const Trace& t, const System& s, SimParadigm p, const SimOptions& o);

}  // namespace gpsm::sim
