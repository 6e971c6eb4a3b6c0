// `gpsm report`: PNG plots from results files (report.py), a table from each PROACT choice cache.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common/self_exe.hpp"
#include "gpsm/error.hpp"
#include "proact/autotune.hpp"

namespace gpsm::cli {

namespace {

// report.py lives in <prefix>/share/gpsm next to <prefix>/bin/gpsm (build tree and install alike).
std::string find_report_script(const std::string& argv0) {
  namespace fs = std::filesystem;
  std::vector<fs::path> cands;
  if (const char* e = std::getenv("GPSM_REPORT_SCRIPT")) cands.emplace_back(e);
  fs::path exe;
  try {
    exe = self_exe("report");
  } catch (const Error&) {
    exe = fs::absolute(argv0);
  }
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
    std::cerr << "gpsm: report: " << path << ": " << e.what() << "\n";
    return 2;
  }
  std::cout << table << std::flush;
  std::error_code ec;
  fs::create_directories(out_dir, ec);  // checked before any work; a failure shows in the write below
  const fs::path md = fs::path(out_dir) / (fs::path(path).stem().string() + ".md");
  try {
    gpsm::write_file_atomic(md.string(), table);  // a failed write leaves an earlier table whole
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << md.string() << "\n";
  return 0;
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportArgs& a) {
  auto* c = app.add_subcommand(
      "report", "Render PNG plots and an index from results files; a PROACT choice cache (gpsm proact --tune, gpsm bench "
                "--proact-tune) as a table of the chosen configuration per app");
  c->add_option("files", a.files, "Results JSON files (several are overlaid) or choice-cache files")->required();
  c->add_option("--out", a.out_dir, "Output directory");
  c->add_option("-t,--test", a.filters, "Only tests matching this regex");
  return c;
}

int run_report(const ReportArgs& a, int argc, char** argv) {
  {  // the output folder before any work: writable, and no table it gets is one of the inputs
    std::vector<gpsm::InputPath> inputs;
    std::vector<std::string> outputs{"index.md"};
    for (const auto& f : a.files) {
      inputs.push_back({"input", f});
      outputs.push_back(std::filesystem::path(f).stem().string() + ".md");
    }
    gpsm::check_output_dir("--out", a.out_dir, outputs, inputs);
  }
  std::vector<std::string> files;  // results files, for report.py
  for (const auto& f : a.files) {
    if (!is_proact_cache(f)) {
      files.push_back(f);
      continue;
    }
    if (const int rc = report_cache(f, a.out_dir); rc != 0) return rc;
  }
  if (files.empty()) return 0;
  const std::string script = find_report_script(argc > 0 ? argv[0] : "");
  if (script.empty()) {
    std::cerr << "gpsm: report.py not found next to the gpsm binary (share/gpsm/report.py); set GPSM_REPORT_SCRIPT\n";
    return 2;
  }
  const char* py = std::getenv("GPSM_PYTHON");
  std::string cmd = std::string(py ? py : "python3") + " " + shell_quote(script);
  for (const auto& f : files) cmd += " " + shell_quote(f);
  cmd += " --out " + shell_quote(a.out_dir);
  for (const auto& t : a.filters) cmd += " -t " + shell_quote(t);
  const int rc = std::system(cmd.c_str());
  if (rc == -1) {
    std::cerr << "gpsm: could not run python3 for the report\n";
    return 2;
  }
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 2;
}

}  // namespace gpsm::cli
