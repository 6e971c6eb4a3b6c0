#pragma once
// The subcommands of the `gpsm` CLI.
#include <string>
#include <vector>

#include "scope/registry.hpp"

namespace gpsm::cli {

struct ScopeArgs {
  gpsm::scope::Options options;
  std::vector<std::string> filters;  // -t
  std::string devices;               // --devices "0,1,2" (empty: all)
  std::string json_path;             // --json FILE
  std::string out_dir;               // --out DIR: results.json, machine_model.json, topology.json/.dot
  bool list = false;
  std::string command_line;
};

int run_scope(ScopeArgs& a);
int run_report(const std::vector<std::string>& files, const std::string& out_dir, const std::vector<std::string>& filters,
               const std::string& argv0);
int run_info();

// "0,1,3" -> {0,1,3}; throws gpsm::Error on a malformed list.
std::vector<int> parse_device_list(const std::string& s);

}  // namespace gpsm::cli
