// The exit-code scheme (exit_codes.hpp): one classification of whatever a subcommand throws.
#include "exit_codes.hpp"

#include <new>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpsm::cli {

namespace {
bool g_work_begun = false;

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Library messages mostly carry "gpsm: " or "gpsm <cmd>: " already; others get "gpsm: ".
std::string prefixed(const std::string& what, const std::string& cmd) {
  if (starts_with(what, "gpsm: ") || starts_with(what, ("gpsm " + cmd + ": ").c_str())) return what;
  return "gpsm: " + what;
}

// std::stoi & co. throw with their own name as the whole message ("stoull").
bool bare_conversion_name(const std::string& what) {
  static const std::regex re("^sto(i|l|ll|ul|ull|f|d|ld)$");
  return std::regex_match(what, re);
}
}  // namespace

void begin_work() { g_work_begun = true; }
bool work_begun() { return g_work_begun; }

void require_gpus(int ngpu, int need, const std::string& why, const std::string& cmd, const std::string& what_to_do) {
  if (ngpu >= need) return;
  if (ngpu == 0)
    throw NoGpu(fmt::format("gpsm {}: no CUDA GPU on this machine ({}); {}", cmd, why, what_to_do));
  throw NoGpu(fmt::format("gpsm {}: this machine has {} GPU{}, the command needs {}; {}", cmd, ngpu, ngpu == 1 ? "" : "s",
                          need, what_to_do));
}

Verdict classify_exception(std::exception_ptr e, const std::string& cmd) {
  const int failed_or_bad = g_work_begun ? kExitRunFailed : kExitBadInput;
  try {
    std::rethrow_exception(e);
  } catch (const NoGpu& x) {
    return {kExitNoGpu, prefixed(x.what(), cmd)};
  } catch (const BadInput& x) {
    return {kExitBadInput, prefixed(x.what(), cmd)};
  } catch (const std::bad_alloc&) {
    return {failed_or_bad,
            fmt::format("gpsm {}: out of host memory ({}); the request needs more memory than this machine can give: "
                        "use a smaller size, fewer GPUs or fewer iterations",
                        cmd, g_work_begun ? "during the run" : "while reading the input")};
  } catch (const std::length_error& x) {
    return {failed_or_bad, fmt::format("gpsm {}: a size exceeds what one allocation can hold ({}); use a smaller size "
                                       "or input",
                                       cmd, x.what())};
  } catch (const std::out_of_range& x) {
    const std::string w = x.what();
    if (bare_conversion_name(w))
      return {kExitBadInput, fmt::format("gpsm {}: a number is out of range (std::{}); check the numeric options and "
                                         "files given",
                                         cmd, w)};
    return {failed_or_bad, prefixed(w, cmd)};
  } catch (const std::invalid_argument& x) {
    const std::string w = x.what();
    if (bare_conversion_name(w))
      return {kExitBadInput, fmt::format("gpsm {}: a number could not be read (std::{}); check the numeric options "
                                         "and files given",
                                         cmd, w)};
    return {kExitBadInput, prefixed(w, cmd)};
  } catch (const nlohmann::json::exception& x) {
    return {failed_or_bad, fmt::format("gpsm {}: unexpected JSON ({}); check the files given", cmd, x.what())};
  } catch (const std::exception& x) {
    const std::string w = x.what();
    return {failed_or_bad, w.empty() ? fmt::format("gpsm {}: failed without a message", cmd) : prefixed(w, cmd)};
  } catch (...) {
    return {kExitRunFailed, fmt::format("gpsm {}: failed with an unknown exception", cmd)};
  }
}

}  // namespace gpsm::cli
