#pragma once
// gpsm's one exit-code scheme, the same for every subcommand (README.md, "Exit codes"):
//   0  ok
//   1  a run failed: a verification, a failed (or unsimulatable) run, a measurement error
//   2  bad usage or input: options, files, values, requests the machine cannot hold
//   3  no GPU, or fewer GPUs than the command needs, where one is needed
// A subcommand returns 0 or 1 itself; bad input and missing GPUs are thrown (BadInput, NoGpu)
// and every other exception is classified by classify_exception: before the command calls
// begin_work() an error is about its input (2), after it a run failed (1). Whatever escapes
// reaches the user as one `gpsm: <what>: <why>; <what to do>` line, never bare exception text.
#include <exception>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "gpsm/error.hpp"

namespace gpsm::cli {

enum ExitCode : int { kExitOk = 0, kExitRunFailed = 1, kExitBadInput = 2, kExitNoGpu = 3 };

// A command line, file or value the command cannot run with: exit 2.
struct BadInput : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// No GPU, or not enough, where the command needs them: exit 3.
struct NoGpu : gpsm::Error {
  using gpsm::Error::Error;
};

// For unsigned options: CLI11 would wrap "-1" to 2^64-1, so the sign is checked on the text.
inline const CLI::Validator kNonNegative(
    [](std::string& s) { return !s.empty() && s[0] == '-' ? "must be >= 0 (got " + s + ")" : std::string(); },
    "NONNEGATIVE");

// Arguments and inputs are checked; what fails from here on is a run (exit 1), not the input.
void begin_work();
bool work_begun();

// The exit code and the message line (without "\n") for an exception escaping subcommand `cmd`.
struct Verdict {
  int code;
  std::string message;
};
Verdict classify_exception(std::exception_ptr e, const std::string& cmd);

// Throws NoGpu when this machine has fewer than `need` GPUs: "gpsm <cmd>: <why>; <what to do>".
// ngpu: cuda_device_count()'s answer, why: its reason where 0.
void require_gpus(int ngpu, int need, const std::string& why, const std::string& cmd, const std::string& what_to_do);

}  // namespace gpsm::cli
