#pragma once
// Shared by the GPU tests of the bench apps: find an app, run one paradigm on the first `gpus`
// GPUs (one warm-up, one timed rep), and the GPU counts worth trying on this machine.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "gps_test_util.hpp"

namespace apptest {

inline std::unique_ptr<gpsm::apps::App> app_named(const std::string& name) {
  for (auto& a : gpsm::apps::make_apps())
    if (a->name() == name) return std::move(a);
  return nullptr;
}

// chunk: proact's request (bytes 0 and no source: not asked, copy engines with the app's default).
inline gpsm::apps::RunOutcome run(gpsm::apps::App& app, gpsm::apps::Paradigm p, int gpus,
                                  const gpsm::apps::Problem& prob, const gpsm::apps::ProactChunk& chunk = {}) {
  gpsm::apps::RunRequest r;
  if (chunk.bytes > 0 || !chunk.source.empty()) r.proact_chunk = [chunk](std::uint64_t) { return chunk; };
  r.paradigm = p;
  r.devices = gpstest::all_devices();
  r.devices.resize(static_cast<std::size_t>(gpus));
  r.problem = prob;
  r.reps = 1;
  r.warmup = 1;
  return app.run(r);
}

// An app whose nvshmem paradigms find their workers (the stencils' and CG's): the test binary is
// not in build/bin next to them, so they are named by path unless the environment already names them.
inline std::unique_ptr<gpsm::apps::App> nvshmem_app(const std::string& name) {
#ifdef GPSM_NVSHMEM_WORKER_PATH
  setenv("GPSM_NVSHMEM_WORKER", GPSM_NVSHMEM_WORKER_PATH, 0);
#endif
#ifdef GPSM_NVSHMEM_CG_WORKER_PATH
  setenv("GPSM_NVSHMEM_CG_WORKER", GPSM_NVSHMEM_CG_WORKER_PATH, 0);
#endif
  return app_named(name);
}

// An app's run option (an environment variable) set for a scope, then unset.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// In a build without NVSHMEM the paradigm must say so, and the test is skipped (never passed).
#define GPSM_SKIP_WITHOUT_NVSHMEM(app)                                                                          \
  do {                                                                                                          \
    if (!(app)->has(gpsm::apps::Paradigm::nvshmem)) {                                                           \
      const gpsm::apps::RunOutcome o_ = apptest::run(*(app), gpsm::apps::Paradigm::nvshmem, 1, (app)->problem("64", 5)); \
      EXPECT_EQ(o_.status, gpsm::apps::RunStatus::unsupported);                                                 \
      EXPECT_NE(o_.reason.find("NVSHMEM"), std::string::npos) << o_.reason;                                     \
      GTEST_SKIP() << "gpsm built without NVSHMEM (" << o_.reason << ")";                                       \
    }                                                                                                           \
  } while (0)

// 1, 2 and all GPUs (as many of those as exist).
inline std::vector<int> gpu_counts() {
  const int all = static_cast<int>(gpstest::all_devices().size());
  std::vector<int> counts{1};
  if (all >= 2) counts.push_back(2);
  if (all > 2) counts.push_back(all);
  return counts;
}

}  // namespace apptest
