#include "common/interrupt.hpp"

#include <signal.h>

#include <cstring>
#include <string>

namespace gpsm {
namespace {

volatile sig_atomic_t g_pending = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];
bool g_active = false;

extern "C" void note_signal(int sig) { g_pending = sig; }

}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_active) throw Error("gpsm: an InterruptGuard is already active");
  g_pending = 0;
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // waitpid and reads go on; the wait loop looks at the record
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
  g_active = true;
}

InterruptGuard::~InterruptGuard() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
  g_active = false;
  g_pending = 0;
}

int pending_interrupt() { return g_pending; }

void throw_if_interrupted(const char* what) {
  const int sig = g_pending;
  if (sig == 0) return;
  throw Interrupted(sig, std::string(what) + ": interrupted by signal " + std::to_string(sig) + " (" +
                             strsignal(sig) + "): its child process stopped, its temporary folders removed");
}

}  // namespace gpsm
