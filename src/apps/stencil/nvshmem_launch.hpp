#pragma once
// Jacobi 2D on NVSHMEM (`gpsm bench --paradigm nvshmem`): NVIDIA multi-gpu-programming-models'
// "nvshmem" variant. NVSHMEM needs one process (PE) per GPU and gpsm bench is one process that
// already holds CUDA, so the run is done by workers: gpsm-nvshmem-stencil (tools/gpsm-nvshmem-stencil),
// started once per GPU with posix_spawn, bootstrapped with NVSHMEM's unique ID (rank 0 writes it
// to a file in a private temporary folder, the others read it), each solving its slab and writing
// its times and rows to a result file (nvshmem_proto.hpp). This side launches them, waits
// (never longer than the timeout), and gathers their results for the app to verify. No CUDA here.
// heat3d and wave3d's nvshmem paradigm runs on the same workers and this same parent side
// (run_nvshmem with their WorkerApp): each PE steps its slab3d box with the app's own step kernel,
// storing its boundary planes straight into the neighbours' symmetric buffers (nvshmem_ptr).
#include <functional>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/stencil/nvshmem_proto.hpp"

namespace gpsm::apps::jacobi {

// Whether this gpsm was built with NVSHMEM, i.e. with the worker (src/CMakeLists.txt:
// GPSM_HAVE_NVSHMEM).
bool nvshmem_built();
constexpr const char* kNvshmemMissing =
    "built without NVSHMEM (run scripts/setup.sh, or install the nvidia-nvshmem-cu13 wheel for python3, and rebuild)";

// The workers' file names: the stencils' (jacobi2d, heat3d, wave3d) and CG's. A worker is looked
// for in $GPSM_NVSHMEM_WORKER (stencils) / $GPSM_NVSHMEM_CG_WORKER (CG) (a path), then next to
// this executable (/proc/self/exe's folder: build/bin, or the install's bin).
constexpr const char* kNvshmemWorkerName = "gpsm-nvshmem-stencil";
constexpr const char* kNvshmemCgWorkerName = "gpsm-nvshmem-cg";
// Seconds the whole run (every worker: NVSHMEM start-up, warm-ups, timed reps) may take before
// the workers are killed and the run reported failed: $GPSM_NVSHMEM_TIMEOUT_S, default 120.
constexpr int kNvshmemDefaultTimeoutS = 120;

// Throws gpsm::Error naming what is missing (and the CMake target that builds it).
std::string find_nvshmem_worker(const char* name = kNvshmemWorkerName);
int nvshmem_timeout_s();  // throws gpsm::Error for a malformed $GPSM_NVSHMEM_TIMEOUT_S

// Environment every worker gets on top of this process's: NVLink multicast off (NVSHMEM and the
// NCCL it may load), and, unless already set, a single-node set-up (no remote transport, the
// unique-ID bootstrap over loopback, no NCCL inside NVSHMEM).
std::vector<std::pair<std::string, std::string>> nvshmem_worker_env();

// The launch every nvshmem paradigm shares: one worker `name` (find_nvshmem_worker) per device,
// args(rank, uid_file, out_file, timeout_s) its command line, nvshmem_worker_env() on top of this
// environment, all of them in a private temporary folder; waits at most nvshmem_timeout_s(), then
// calls read(rank, out_file) for every rank before the folder is removed. Throws gpsm::Error when
// a worker cannot start, fails (its exit and its output's last lines) or hangs past the timeout.
using WorkerArgsOf =
    std::function<std::vector<std::string>(int rank, const std::string& uid_file, const std::string& out_file, int timeout_s)>;
void run_nvshmem_workers(const char* name, const std::vector<int>& devices, const WorkerArgsOf& args,
                         const std::function<void(int rank, const std::string& out_file)>& read,
                         const std::function<void(const std::string&)>& progress);

struct NvshmemRun {
  GatheredRun gathered;
  double link_bytes_per_iter = 0;
};
// Runs req.warmup + req.reps solves of req.problem as `app` on req.devices, one worker per device,
// and gathers the global grid (jacobi2d: gather_results; heat3d / wave3d: the global box,
// gather_stencil3d_results). Throws gpsm::Error when a worker cannot start, fails (its exit and
// its output's last lines), hangs past the timeout, or reports results that do not fit the
// decomposition.
NvshmemRun run_nvshmem(const RunRequest& req, WorkerApp app = WorkerApp::jacobi2d);

// Bytes between GPUs per iteration: each rank puts its first and last computed rows (nx - 2
// floats each, the interior columns, as p2p_inline stores them) into its neighbours' halos, and
// every nccheck iterations the norm partials are collected on every PE (ranks - 1 floats to
// each). Barrier traffic is not counted. One GPU: 0 (its puts stay on it).
// heat3d / wave3d: the interior cells of the `radius` planes each rank stores into each
// neighbour, as p2p_inline (slab3d_halo_bytes(..., false)); no norm.
double nvshmem_link_bytes_per_iter(const Problem& p, int ranks, WorkerApp app = WorkerApp::jacobi2d);
// The halo depth of a 3D app (heat3d 1, wave3d 2); 0 for jacobi2d.
int worker_app_radius(WorkerApp app);

}  // namespace gpsm::apps::jacobi
