#include "common/child_group.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "gpsm/error.hpp"

extern char** environ;

namespace gpsm {

namespace {

std::string describe_status(int status) {
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    return code == 127 ? "exited with code 127 (could not be executed?)" : fmt::format("exited with code {}", code);
  }
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("ended with wait status {}", status);
}

std::string with_tail(const std::string& what, const std::string& log) {
  const std::string tail = log_tail(log);
  return tail.empty() ? what + " (no output)" : what + ": " + tail;
}

}  // namespace

std::string log_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!all.empty() && (all.back() == '\n' || all.back() == '\r' || all.back() == ' ')) all.pop_back();
  if (all.size() > max_bytes) {
    all = all.substr(all.size() - max_bytes);
    const auto nl = all.find('\n');  // start at a whole line when one fits
    if (nl != std::string::npos && nl + 1 < all.size()) all = all.substr(nl + 1);
    all = "... " + all;
  }
  std::string out;
  for (char c : all) {
    if (c == '\n') out += " | ";
    else if (c != '\r') out += c;
  }
  return out;
}

ChildGroup::~ChildGroup() { kill_running(); }

void ChildGroup::spawn(const ChildSpec& c) {
  std::set<std::string> overridden;
  for (const auto& kv : c.env) overridden.insert(kv.first);
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string s(*e);
    if (overridden.count(s.substr(0, s.find('='))) == 0) env.push_back(s);
  }
  for (const auto& kv : c.env) env.push_back(kv.first + "=" + kv.second);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args{c.exe};
  args.insert(args.end(), c.args.begin(), c.args.end());
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  int rc = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, c.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  if (rc == 0) rc = posix_spawn(&pid, c.exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw gpsm::Error(fmt::format("gpsm: cannot start {} ({}): {} (log {})", c.name, c.exe, std::strerror(rc), c.log_file));
  Child k;
  k.spec = c;
  k.pid = pid;
  k.running = true;
  kids_.push_back(std::move(k));
}

void ChildGroup::kill_running() {
  for (auto& k : kids_)
    if (k.running) kill(k.pid, SIGKILL);
  for (auto& k : kids_)
    if (k.running) {
      int st = 0;
      while (waitpid(k.pid, &st, 0) < 0 && errno == EINTR) {
      }
      k.running = false;
    }
}

GroupResult ChildGroup::wait_all(double timeout_s, const std::function<void()>& tick) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto next_tick = std::chrono::steady_clock::now();
  GroupResult out;
  for (;;) {
    bool any = false;
    for (auto& k : kids_) {
      if (!k.running) continue;
      int st = 0;
      const pid_t r = waitpid(k.pid, &st, WNOHANG);
      if (r == 0) {
        any = true;
        continue;
      }
      k.running = false;
      if (r < 0) {  // not our child any more (cannot happen unless someone else reaped it)
        out.reason = fmt::format("{} could not be waited for ({})", k.spec.name, std::strerror(errno));
      } else if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        out.reason = with_tail(fmt::format("{} {}", k.spec.name, describe_status(st)), k.spec.log_file);
      }
      if (!out.reason.empty()) {
        kill_running();
        return out;
      }
    }
    if (!any) {
      out.ok = true;
      return out;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string hung;
      for (auto& k : kids_)
        if (k.running) hung += (hung.empty() ? "" : "; ") + with_tail(k.spec.name, k.spec.log_file);
      kill_running();
      out.reason = fmt::format("timed out after {} s, killed the workers still running: {}", timeout_s, hung);
      return out;
    }
    if (tick && std::chrono::steady_clock::now() >= next_tick) {
      tick();
      next_tick = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace gpsm
