#include "apps/harness/paradigm.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gpsm::apps {

namespace {
constexpr const char* kNames[kParadigmCount] = {"single",  "memcpy", "um",      "um_hints", "rdl",  "p2p_inline", "gps",
                                                "gps_all", "gps_pipe", "proact", "nvshmem", "nccl",     "cpu_free",
                                                "cpu_ctrl_std", "cpu_ctrl_pipe", "cpu_free_std", "cpu_free_pipe",
                                                "nvshmem_std",  "nvshmem_pipe",  "infinite"};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
  }
  return out;
}
}  // namespace

const char* paradigm_name(Paradigm p) {
  const auto i = static_cast<int>(p);
  return i >= 0 && i < kParadigmCount ? kNames[i] : "?";
}

std::vector<Paradigm> parse_paradigms(const std::string& s) {
  bool want[kParadigmCount] = {};
  if (s == "all") {
    std::fill(want, want + kParadigmCount, true);
  } else {
    for (const std::string& name : split(s)) {
      const auto* it = std::find_if(kNames, kNames + kParadigmCount, [&](const char* n) { return name == n; });
      if (it == kNames + kParadigmCount) {
        std::string all;
        for (const char* n : kNames) all += std::string(all.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown paradigm '" + name + "' (use all or a list of: " + all + ")");
      }
      want[it - kNames] = true;
    }
  }
  std::vector<Paradigm> out;
  for (int i = 0; i < kParadigmCount; ++i)
    if (want[i]) out.push_back(static_cast<Paradigm>(i));
  if (out.empty()) throw std::invalid_argument("no paradigm given");
  return out;
}

std::vector<int> parse_gpu_counts(const std::string& s) {
  std::vector<int> out;
  for (const std::string& item : split(s)) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 1)
      throw std::invalid_argument("bad GPU count '" + item + "' in --gpus (use positive numbers, e.g. 1,2,4)");
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument("--gpus is empty (e.g. 1,2,4)");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gpsm::apps
