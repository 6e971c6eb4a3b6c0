// `gpsm report` and `gpsm info`.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpsm/build_info.hpp"
#include "gpsm/gps/settings.hpp"
#include "scope/cuda_probe.hpp"
#include "proact/autotune.hpp"

namespace gpsm::cli {

namespace {

// report.py lives in <prefix>/share/gpsm next to <prefix>/bin/gpsm (build tree and install alike).
std::string find_report_script(const std::string& argv0) {
  namespace fs = std::filesystem;
  std::vector<fs::path> cands;
  if (const char* e = std::getenv("GPSM_REPORT_SCRIPT")) cands.emplace_back(e);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) exe = fs::absolute(argv0);
  cands.push_back(exe.parent_path().parent_path() / "share" / "gpsm" / "report.py");
  for (const auto& c : cands)
    if (fs::exists(c)) return c.string();
  return {};
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

// Whether the file is a PROACT choice cache (schema gpsm.proact_cache): rendered here, as a
// table, not by report.py. Anything unreadable is left to report.py, which says what is wrong.
bool is_proact_cache(const std::string& path) {
  std::ifstream f(path);
  if (!f) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    return j.is_object() && j.value("schema", std::string()) == gpsm::proact::kCacheSchema;
  } catch (const std::exception&) {
    return false;
  }
}

// The cache's Table 2.2-style table on stdout and into DIR/<file stem>.md.
int report_cache(const std::string& path, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::string table;
  try {
    table = gpsm::proact::render_cache_file(path);
  } catch (const std::exception& e) {
    std::cerr << "gpsm report: " << path << ": " << e.what() << "\n";
    return 2;
  }
  std::cout << table << std::flush;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  const fs::path md = fs::path(out_dir) / (fs::path(path).stem().string() + ".md");
  std::ofstream f(md);
  if (!(f << table)) {
    std::cerr << "gpsm report: cannot write " << md.string() << "\n";
    return 2;
  }
  std::cout << md.string() << "\n";
  return 0;
}

}  // namespace

int run_report(const std::vector<std::string>& all_files, const std::string& out_dir,
               const std::vector<std::string>& filters, const std::string& argv0) {
  std::vector<std::string> files;  // results files, for report.py
  for (const auto& f : all_files) {
    if (!is_proact_cache(f)) {
      files.push_back(f);
      continue;
    }
    if (const int rc = report_cache(f, out_dir); rc != 0) return rc;
  }
  if (files.empty()) return 0;
  const std::string script = find_report_script(argv0);
  if (script.empty()) {
    std::cerr << "gpsm: report.py not found next to the gpsm binary (share/gpsm/report.py); set GPSM_REPORT_SCRIPT\n";
    return 2;
  }
  const char* py = std::getenv("GPSM_PYTHON");
  std::string cmd = std::string(py ? py : "python3") + " " + shell_quote(script);
  for (const auto& f : files) cmd += " " + shell_quote(f);
  cmd += " --out " + shell_quote(out_dir);
  for (const auto& t : filters) cmd += " -t " + shell_quote(t);
  const int rc = std::system(cmd.c_str());
  if (rc == -1) {
    std::cerr << "gpsm: could not run python3 for the report\n";
    return 2;
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 2;
}

int run_info() {
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
