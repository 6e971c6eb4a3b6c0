#pragma once
// The PROACT transfer agents (docs/proact.md). Plain C++.
#include <string>
#include <vector>

namespace gpsm::proact {

// Listed from the simplest mechanism to the most involved: the autotuner prefers the earlier one
// among configurations whose times are within its noise margin.
enum class Agent {
  memcpy,         // bulk cudaMemcpyPeerAsync after the producer kernel (the baseline)
  inline_store,   // the producer stores every value to each destination too (no tracking)
  copy_engine,    // per chunk: stream wait on the chunk's flag, then cudaMemcpyPeerAsync; enqueued up front
  persistent,     // a long-lived kernel of transfer warps polling the chunks' ready flags
  device_launch,  // the block completing a chunk launches a copy kernel (CUDA dynamic parallelism)
};

const char* agent_name(Agent a);  // "memcpy", "inline", "copy_engine", "persistent", "device_launch"
// One name (also "ce", "pst", "cdp"); throws gpsm::Error listing the names.
Agent parse_agent(const std::string& s);
// Comma-separated names or "all"; duplicates dropped, order kept. Throws gpsm::Error.
std::vector<Agent> parse_agents(const std::string& list);
// Does the agent ship chunks (chunk size and readiness tracking matter)?
bool chunked(Agent a);
// Does the transfer-threads setting apply (persistent: warps x 32; device_launch: threads per copy kernel)?
bool uses_threads(Agent a);
int simplicity_rank(Agent a);  // 0 = simplest

}  // namespace gpsm::proact
