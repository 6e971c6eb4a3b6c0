// The parent side of the nvshmem paradigm: launch one worker per GPU, wait, gather.
#include "apps/stencil/nvshmem_launch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/child_group.hpp"
#include "common/self_exe.hpp"
#include "common/temp_dir.hpp"
#include "gpsm/error.hpp"

#ifndef GPSM_HAVE_NVSHMEM
#define GPSM_HAVE_NVSHMEM 0
#endif

namespace gpsm::apps::jacobi {

namespace fs = std::filesystem;

bool nvshmem_built() { return GPSM_HAVE_NVSHMEM != 0; }

std::string find_nvshmem_worker(const char* name) {
  const bool cg = std::string(name) == kNvshmemCgWorkerName;
  const char* var = cg ? "GPSM_NVSHMEM_CG_WORKER" : "GPSM_NVSHMEM_WORKER";
  if (const char* e = std::getenv(var); e != nullptr && *e != '\0') {
    if (access(e, X_OK) != 0)
      throw gpsm::Error(fmt::format("gpsm: nvshmem: {}='{}' is not an executable file", var, e));
    return e;
  }
  const fs::path self = self_exe(std::string("nvshmem: finding ") + name);
  const fs::path w = self.parent_path() / name;
  std::string target = name;
  std::replace(target.begin(), target.end(), '-', '_');
  if (access(w.c_str(), X_OK) != 0)
    throw gpsm::Error(fmt::format("gpsm: nvshmem: the worker {} is not next to {} (build the target {}, "
                                  "or set {} to its path)",
                                  w.string(), self.string(), target, var));
  return w.string();
}

int nvshmem_timeout_s() {
  const char* e = std::getenv("GPSM_NVSHMEM_TIMEOUT_S");
  if (e == nullptr || *e == '\0') return kNvshmemDefaultTimeoutS;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(e, &end, 10);
  if (end == e || *end != '\0' || errno != 0 || v < 1 || v > 86400)
    throw gpsm::Error(std::string("gpsm: GPSM_NVSHMEM_TIMEOUT_S='") + e + "' is not a number of seconds in [1, 86400]");
  return static_cast<int>(v);
}

std::vector<std::pair<std::string, std::string>> nvshmem_worker_env() {
  // Always: NVLink multicast must never be used on these shared hosts (docs/bench.md, nvshmem).
  std::vector<std::pair<std::string, std::string>> env{{"NVSHMEM_DISABLE_NVLS", "1"}, {"NCCL_NVLS_ENABLE", "0"}};
  // Defaults for one node; a value the user set wins.
  const std::pair<const char*, const char*> defaults[] = {
      {"NVSHMEM_REMOTE_TRANSPORT", "none"},         // P2P only: no InfiniBand probing
      {"NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo"},  // the workers and rank 0's bootstrap socket share one host
      {"NVSHMEM_DISABLE_NCCL", "1"},                // NVSHMEM's own collectives: no NCCL start-up per PE
  };
  for (const auto& [k, v] : defaults) {
    const char* cur = std::getenv(k);
    if (cur == nullptr || *cur == '\0') env.emplace_back(k, v);
  }
  return env;
}

int worker_app_radius(WorkerApp app) {
  return app == WorkerApp::heat3d ? 1 : app == WorkerApp::wave3d ? 2 : 0;
}

double nvshmem_link_bytes_per_iter(const Problem& p, int ranks, WorkerApp app) {
  if (ranks <= 1) return 0;
  if (app != WorkerApp::jacobi2d) return slab3d_halo_bytes(p.n, p.axis, worker_app_radius(app), ranks, false);
  const double n = ranks;
  const double halo = 2.0 * n * static_cast<double>(p.n[0] - 2) * sizeof(float);
  const double norm = n * (n - 1) * sizeof(float) / std::max(1, p.nccheck);
  return halo + norm;
}

void run_nvshmem_workers(const char* name, const std::vector<int>& devices, const WorkerArgsOf& args,
                         const std::function<void(int rank, const std::string& out_file)>& read,
                         const std::function<void(const std::string&)>& progress) {
  const int ranks = static_cast<int>(devices.size());
  if (ranks < 1) throw gpsm::Error("gpsm: nvshmem: no devices");
  const std::string worker = find_nvshmem_worker(name);
  const int timeout = nvshmem_timeout_s();
  TempDir dir("gpsm-nvshmem", "nvshmem");
  const auto env = nvshmem_worker_env();
  ChildGroup group;
  std::vector<std::string> outs;
  for (int r = 0; r < ranks; ++r) {
    outs.push_back(dir.file(fmt::format("rank{}.bin", r)));
    ChildSpec c;
    c.name = fmt::format("nvshmem worker rank {} (device {})", r, devices[r]);
    c.exe = worker;
    c.args = args(r, dir.file("uid"), outs.back(), timeout);
    c.env = env;
    c.log_file = dir.file(fmt::format("rank{}.log", r));
    group.spawn(c);
  }
  if (progress) progress(fmt::format("nvshmem: {} worker processes running", ranks));
  const GroupResult g = group.wait_all(timeout);
  if (!g.ok) throw gpsm::Error("gpsm: nvshmem: " + g.reason);
  for (int r = 0; r < ranks; ++r) read(r, outs[r]);
}

NvshmemRun run_nvshmem(const RunRequest& req, WorkerApp app) {
  const int ranks = static_cast<int>(req.devices.size());
  const Problem& p = req.problem;
  std::vector<WorkerResult> results;
  run_nvshmem_workers(
      kNvshmemWorkerName, req.devices,
      [&](int r, const std::string& uid, const std::string& out, int timeout) {
        WorkerArgs a;
        a.app = app;
        a.nz = app == WorkerApp::jacobi2d ? 1 : p.n[2];
        a.axis = p.axis;
        a.seed = p.seed;
        a.rank = r;
        a.ranks = ranks;
        a.device = req.devices[r];
        a.nx = p.n[0];
        a.ny = p.n[1];
        a.iters = p.iters;
        a.nccheck = p.nccheck;
        a.tol = p.tol;
        a.warmup = req.warmup;
        a.reps = req.reps;
        a.uid_file = uid;
        a.out_file = out;
        a.timeout_s = timeout;
        return to_args(a);
      },
      [&](int, const std::string& out) { results.push_back(read_result(out)); }, req.progress);
  NvshmemRun out;
  out.gathered = app == WorkerApp::jacobi2d
                     ? gather_results(results, p.n[0], p.n[1], req.reps)
                     : gather_stencil3d_results(results, p.n, p.axis, worker_app_radius(app), req.reps);
  out.link_bytes_per_iter = nvshmem_link_bytes_per_iter(p, ranks, app);
  return out;
}

}  // namespace gpsm::apps::jacobi
