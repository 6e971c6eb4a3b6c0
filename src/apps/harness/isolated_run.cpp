#include "apps/harness/isolated_run.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/harness/run_outcome_json.hpp"
#include "common/child_group.hpp"
#include "common/interrupt.hpp"
#include "common/temp_dir.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps {

namespace {

// Longer than any run (30 days): the child is never cut short by the parent.
constexpr double kNoLimitS = 30.0 * 24 * 3600;

RunOutcome failed(const std::string& reason) {
  RunOutcome o;
  o.status = RunStatus::failed;
  o.reason = reason;
  return o;
}

}  // namespace

std::string last_line(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  const std::streamoff from = size > 4096 ? size - 4096 : 0;  // a progress line is far shorter
  f.seekg(from);
  std::string tail((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string line;
  std::istringstream in(tail);
  for (std::string l; std::getline(in, l);) {
    std::string clean;
    for (char c : l)
      if (c != '\r') clean += c;
    if (clean.find_first_not_of(' ') != std::string::npos) line = clean;
  }
  if (line.size() > max_bytes) line = line.substr(0, max_bytes) + "...";
  return line;
}

RunOutcome run_isolated(const IsolatedRun& run, const std::function<void(const std::string&)>& progress) {
  throw_if_interrupted("gpsm bench --isolate");
  TempDir dir("gpsm-isolate", "bench --isolate");
  ChildSpec c;
  c.name = "the child running " + run.name;
  c.exe = run.exe;
  c.args = run.args;
  c.args.push_back("--isolated-outcome");
  c.args.push_back(dir.file("outcome.json"));
  c.log_file = dir.file("child.log");
  ChildGroup group;
  group.spawn(c);
  std::string shown;
  const GroupResult g = group.wait_all(kNoLimitS, [&] {
    // An InterruptGuard's signal (bench_cmd): the throw ends the wait, `group` kills the child
    // and `dir` goes with its log.
    throw_if_interrupted("gpsm bench --isolate");
    if (!progress) return;
    const std::string line = last_line(c.log_file);
    if (!line.empty() && line != shown) progress(shown = line);
  });
  if (!g.ok) return failed(g.reason);
  std::ifstream f(dir.file("outcome.json"));
  if (!f)
    return failed(fmt::format("{} exited with code 0 but wrote no outcome: {}", c.name, log_tail(c.log_file)));
  nlohmann::json j;
  try {
    f >> j;
    return run_outcome_from_json(j);
  } catch (const std::exception& e) {
    return failed(fmt::format("{} wrote an outcome that cannot be read ({}): {}", c.name, e.what(), log_tail(c.log_file)));
  }
}

}  // namespace gpsm::apps
