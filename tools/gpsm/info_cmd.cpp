// `gpsm info`: the build configuration, the settings read from the environment and the GPUs
// found, for bug reports. Runs on any machine.
#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "gpsm/build_info.hpp"
#include "gpsm/gps/settings.hpp"
#include "scope/cuda_probe.hpp"

namespace gpsm::cli {

CLI::App* add_info_command(CLI::App& app, InfoArgs&) {
  return app.add_subcommand("info", "Print the build configuration, settings and GPUs found (paste into bug reports)");
}

int run_info(const InfoArgs&, int, char**) {
  std::cout << fmt::format("gpsm {} (commit {}), {} build, CUDA architectures {}\n", GPSM_VERSION_STRING,
                           GPSM_GIT_COMMIT, GPSM_BUILD_TYPE, GPSM_CUDA_ARCHITECTURES);
  std::cout << "settings (environment):\n";
  struct Var {
    const char* name;
    const char* def;
    const char* doc;
  } vars[] = {
      {"GPSM_DEVICE_KIND", "", "machine kind recorded in results files (e.g. nvidia-h200-x4)"},
      {"GPSM_PYTHON", "python3", "interpreter for `gpsm report`"},
      {"GPSM_REPORT_SCRIPT", "<prefix>/share/gpsm/report.py", "plot script for `gpsm report`"},
      {"CUDA_VISIBLE_DEVICES", "", "CUDA's device filter (ids in --devices are after it)"},
      {"NCCL_NVLS_ENABLE", "0 (required here)", "NVLink multicast must stay off"},
      {"NVSHMEM_DISABLE_NVLS", "1 (required here)", "NVLink multicast must stay off"},
  };
  for (const auto& v : vars) {
    const char* cur = std::getenv(v.name);
    std::cout << fmt::format("  {:<22} = {:<30} default {:<28} {}\n", v.name, cur ? cur : "(unset)", v.def, v.doc);
  }
  std::cout << "GPS runtime settings (environment):\n";
  try {
    for (const auto& d : gpsm::gps::describe(gpsm::gps::Settings::from_env()))
      std::cout << fmt::format("  {:<22} = {:<30} default {:<28} {}\n", d.name, d.value, d.default_value, d.doc);
  } catch (const std::exception& e) {
    std::cout << "  " << e.what() << "\n";  // a malformed variable: say which, keep printing the rest
  }
  std::string why;
  const int n = gpsm::scope::cuda_device_count(&why);
  if (n == 0) std::cout << "GPUs: none (" << why << ")\n";
  else std::cout << "GPUs: " << n << " CUDA device(s); `gpsm scope --quick` characterizes them\n";
  return 0;
}

}  // namespace gpsm::cli
