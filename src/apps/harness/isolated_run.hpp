#pragma once
// `gpsm bench --isolate`: one run in a process of its own. A bench runs its paradigms one after
// another in one process, so each run allocates from the memory the runs before it freed, and on
// an H200 where a buffer sits in physical memory moves a memory-bound kernel by up to ~3 %
// (docs/bench.md, "Where the buffers sit"); a CUDA error that poisons the context (an illegal
// address) also ends every later run of the process. A child per run starts from a fresh CUDA
// context each time and keeps a crash to its own run. The parent holds no CUDA context while the
// child runs. Plain POSIX C++, no CUDA: the CPU tests drive it with /bin/sh.
#include <functional>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"

namespace gpsm::apps {

struct IsolatedRun {
  std::string name;               // in messages: "heat3d 256x256x256 gps on 2 GPUs"
  std::string exe;                // the child: this gpsm (/proc/self/exe)
  std::vector<std::string> args;  // its arguments; run_isolated appends `--isolated-outcome FILE`
};

// Starts the child, waits for it (no time limit: a run may take hours; the child's own checks
// bound its waits), and returns the outcome it wrote to FILE (run_outcome_json.hpp). While it
// runs, progress (when given) receives each new last line of the child's output. A child that
// writes no outcome (a crash, a signal, an exit before its run) gives a failed outcome whose
// reason says how it ended, with the last lines of its output; never a throw for that.
// Throws gpsm::Error only when the child cannot be started at all, and gpsm::Interrupted
// (common/interrupt.hpp) when an InterruptGuard recorded a signal: the child is killed and its
// folder removed first.
RunOutcome run_isolated(const IsolatedRun& run, const std::function<void(const std::string&)>& progress);

// The last non-empty line of a file (carriage returns dropped), at most max_bytes of it; "" when
// the file is missing or empty.
std::string last_line(const std::string& path, std::size_t max_bytes = 300);

}  // namespace gpsm::apps
