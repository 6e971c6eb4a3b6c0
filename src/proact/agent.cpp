#include "proact/agent.hpp"

#include <algorithm>
#include <sstream>

#include "gpsm/error.hpp"

namespace gpsm::proact {

const char* agent_name(Agent a) {
  switch (a) {
    case Agent::memcpy: return "memcpy";
    case Agent::inline_store: return "inline";
    case Agent::copy_engine: return "copy_engine";
    case Agent::persistent: return "persistent";
    case Agent::device_launch: return "device_launch";
  }
  return "?";
}

Agent parse_agent(const std::string& s) {
  if (s == "memcpy" || s == "bulk") return Agent::memcpy;
  if (s == "inline") return Agent::inline_store;
  if (s == "copy_engine" || s == "ce") return Agent::copy_engine;
  if (s == "persistent" || s == "pst") return Agent::persistent;
  if (s == "device_launch" || s == "cdp" || s == "dkl") return Agent::device_launch;
  throw Error("gpsm proact: unknown agent '" + s +
              "'; use memcpy, inline, copy_engine (ce), persistent (pst), device_launch (cdp) or all");
}

std::vector<Agent> parse_agents(const std::string& list) {
  if (list == "all")
    return {Agent::memcpy, Agent::inline_store, Agent::copy_engine, Agent::persistent, Agent::device_launch};
  std::vector<Agent> out;
  std::stringstream ss(list);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    const Agent a = parse_agent(tok);
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  if (out.empty()) throw Error("gpsm proact: empty --agents list; name at least one agent or all");
  return out;
}

bool chunked(Agent a) { return a == Agent::copy_engine || a == Agent::persistent || a == Agent::device_launch; }
bool uses_threads(Agent a) { return a == Agent::persistent || a == Agent::device_launch; }
int simplicity_rank(Agent a) { return static_cast<int>(a); }

}  // namespace gpsm::proact
