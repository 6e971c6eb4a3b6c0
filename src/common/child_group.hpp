#pragma once
// A group of child processes that succeed or fail together (the nvshmem paradigm's workers, one
// per GPU): started with posix_spawn (the parent has CUDA initialized, so it must not fork and
// keep running), each child's stdout and stderr in its own log file, and a wait that never hangs:
// the first child to fail, or the deadline, ends it, and every child still running is killed.
// Plain POSIX C++, no CUDA: the CPU tests drive it with /bin/sh.
#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpsm {

struct ChildSpec {
  std::string name;                                       // in messages: "rank 1 (device 1)"
  std::string exe;                                        // path of the executable
  std::vector<std::string> args;                          // after argv[0]
  std::vector<std::pair<std::string, std::string>> env;   // set in the child's copy of this environment
  std::string log_file;                                   // the child's stdout and stderr (truncated)
};

struct GroupResult {
  bool ok = false;
  std::string reason;  // when !ok: what failed first (or the timeout), with the log's last lines
};

class ChildGroup {
 public:
  ChildGroup() = default;
  ~ChildGroup();  // kills (SIGKILL) and reaps every child still running
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  // Throws gpsm::Error when the log cannot be opened or posix_spawn fails (missing executable:
  // posix_spawn succeeds and the child exits 127, reported by wait_all).
  void spawn(const ChildSpec& c);
  // Waits until every child has exited. ok when all exited with status 0; otherwise the first
  // child seen exiting nonzero or by a signal, or the timeout, ends the wait and the others are
  // killed and reaped before it returns. tick, when given, is called about every 250 ms while
  // children run (a parent showing their progress, or watching for a signal); an exception from
  // it ends the wait, and the children still running are killed when the group goes.
  GroupResult wait_all(double timeout_s, const std::function<void()>& tick = {});
  std::size_t size() const { return kids_.size(); }

 private:
  struct Child {
    ChildSpec spec;
    pid_t pid = -1;
    bool running = false;
  };
  void kill_running();
  std::vector<Child> kids_;
};

// The last lines of a file, at most max_bytes, on one line (newlines shown as " | "); empty
// when the file is missing or empty.
std::string log_tail(const std::string& path, std::size_t max_bytes = 1200);

}  // namespace gpsm
