#pragma once
// SIGINT, SIGTERM and SIGHUP noted instead of ending the process at once, while a parent of child
// processes has something to clean up: `gpsm bench --isolate` holds a child and a folder that can
// hold gigabytes of shared references in $TMPDIR, which a Ctrl-C (or a `timeout`) would otherwise
// leave behind. The handler only records the signal (all a handler may safely do); the parent's
// wait loop sees it and throws Interrupted, the child group's destructor kills its children and
// the folders' destructors remove them, and main re-raises the signal with its default action, so
// the shell sees the process ended by it. Plain POSIX C++, CPU-tested.
#include "gpsm/error.hpp"

namespace gpsm {

// What throw_if_interrupted throws: the signal, and a line saying what was cleaned up.
class Interrupted : public Error {
 public:
  Interrupted(int sig, const std::string& what) : Error(what), sig_(sig) {}
  int signal() const { return sig_; }

 private:
  int sig_;
};

// While one lives, SIGINT, SIGTERM and SIGHUP are recorded, not acted on; the handlers it found
// come back when it goes. One at a time (the handlers are process-wide). Clears the record both
// when made and when gone.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// The signal recorded since the guard was made, or 0.
int pending_interrupt();
// Throws Interrupted when a signal was recorded; `what` names the command for the message.
void throw_if_interrupted(const char* what);

}  // namespace gpsm
