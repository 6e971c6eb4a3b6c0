// The device arguments the GPU commands share: --devices lists, and the GPUs a GPS context runs on.
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"

namespace gpsm::cli {

std::vector<int> parse_device_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos)
      throw gpsm::Error("gpsm: bad --devices '" + s + "' (expected e.g. 0,1,3)");
    if (tok.size() > 6)  // std::stoi would overflow; no machine has a million GPUs
      throw gpsm::Error("gpsm: device id " + tok + " in --devices is out of range; `gpsm info` lists the GPUs");
    const int d = std::stoi(tok);
    for (int e : out)
      if (e == d) throw gpsm::Error("gpsm: device " + tok + " listed twice in --devices");
    out.push_back(d);
  }
  if (out.empty()) throw gpsm::Error("gpsm: --devices is empty");
  return out;
}

void require_devices_exist(const std::vector<int>& devices, int ngpu) {
  for (int d : devices)
    if (d >= ngpu)
      throw std::invalid_argument(fmt::format("device {} does not exist; this machine has {} GPU{} (0-{})", d, ngpu,
                                              ngpu == 1 ? "" : "s", ngpu - 1));
}

std::vector<int> context_devices(const std::vector<int>& asked, int ngpu, const char* cmd) {
  if (!asked.empty()) {
    require_devices_exist(asked, ngpu);
    return asked;
  }
  std::vector<int> all;
  for (int d = 0; d < ngpu && d < gpsm::gps::kMaxDevices; ++d) all.push_back(d);
  if (ngpu > gpsm::gps::kMaxDevices)
    std::cerr << fmt::format("gpsm {}: note: using GPUs 0-{} of {} (a GPS context holds at most {})\n", cmd,
                             gpsm::gps::kMaxDevices - 1, ngpu, gpsm::gps::kMaxDevices);
  return all;
}

}  // namespace gpsm::cli
