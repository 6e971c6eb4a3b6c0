#pragma once
// What `gpsm bench` (the parent) and its NVSHMEM workers (gpsm-nvshmem-stencil, one process per
// GPU: NVSHMEM needs one PE per process) tell each other, in plain C++ so the CPU tests check it.
// One worker serves every app with an nvshmem paradigm (--app): jacobi2d, heat3d and wave3d.
//   WorkerArgs     the worker's command line (to_args / parse_worker_args are inverses);
//   WorkerResult   the binary result file each worker writes and the parent reads;
//   the unique-ID hand-over: rank 0 writes NVSHMEM's unique ID to a file the others wait for.
//
// Result file (host byte order: parent and workers run on one host), version 2:
//   offset          type               field
//   0               char[8]            magic "GPSMNVJ1"
//   8               u32                version (2)
//   12              i32                rank
//   16              i32                ranks
//   20              i32                device (CUDA ordinal the worker ran on)
//   24              i64                nx
//   32              i64                ny
//   40              i64                first_row (global row of the first stored row; heat3d / wave3d:
//                                      global split coordinate of the first owned plane)
//   48              i64                chunk (rows stored; heat3d / wave3d: planes owned)
//   56              i32                reps (timed repetitions R)
//   60              u32                reserved (0)
//   64              f64                norm (last timed rep's final norm, as the worker computed it; 0 for 3D)
//   72              i64                nz (1 for jacobi2d)
//   80              i64                cells (C: floats stored at the end)
//   88              f64[R]             seconds: solve-loop wall time of each timed rep
//   88 + 8R         i32[R]             iterations each timed rep ran
//   88 + 12R        f32[C]             jacobi2d: the rank's rows (local rows 1..chunk, C = chunk * nx);
//                                      heat3d / wave3d: the rank's whole local box (Slab3D::local,
//                                      halos included, x fastest) holding the last iteration's result
// after the last timed rep. The file is exactly that long; read_result rejects anything else.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"

namespace gpsm::apps::jacobi {

// What the worker solves.
enum class WorkerApp : std::uint8_t { jacobi2d, heat3d, wave3d };
const char* worker_app_name(WorkerApp a);  // the app's name in gpsm bench: "jacobi2d" | "heat3d" | "wave3d"

struct WorkerArgs {
  WorkerApp app = WorkerApp::jacobi2d;
  int rank = 0, ranks = 1;
  int device = 0;                // CUDA ordinal (the parent's numbering: the worker inherits its environment)
  std::int64_t nx = 0, ny = 0;
  std::int64_t nz = 1;           // heat3d / wave3d (>= 3 there)
  Axis axis = Axis::z;           // heat3d / wave3d: the split axis
  std::uint32_t seed = 1;        // heat3d / wave3d: initial values
  int iters = 0, nccheck = 1;    // nccheck and tol: jacobi2d only
  float tol = 0;                 // passed as the shortest decimal that reads back to the same float
  int warmup = 0, reps = 1;
  std::string uid_file;          // rank 0 writes NVSHMEM's unique ID here, the others wait for it
  std::string out_file;          // the result file
  int timeout_s = 120;           // how long a worker waits for the unique ID
};

// The arguments after argv[0].
std::vector<std::string> to_args(const WorkerArgs& a);
// argv as main() gets it; throws std::invalid_argument naming a bad or missing option.
WorkerArgs parse_worker_args(int argc, const char* const* argv);

struct WorkerResult {
  int rank = 0, ranks = 1, device = 0;
  std::int64_t nx = 0, ny = 0, first_row = 0, chunk = 0;
  std::int64_t nz = 1;
  double norm = 0;
  std::vector<double> seconds;   // one per timed rep
  std::vector<int> iterations;   // one per timed rep
  std::vector<float> rows;       // jacobi2d: chunk * nx; heat3d / wave3d: the local box (file comment)
};

// Throws gpsm::Error naming the file on any I/O error; read_result also on a malformed file.
void write_result(const std::string& path, const WorkerResult& r);
WorkerResult read_result(const std::string& path);

// What the parent makes of every rank's result: the grid (ny x nx, interior rows filled, halo
// rows zero, as Slabs::gather), per timed rep the slowest rank's loop time divided by the
// iterations, and the iterations (equal on every rank and rep, or it throws gpsm::Error).
struct GatheredRun {
  std::vector<float> grid;
  std::vector<double> sec_per_iter;
  int iterations = 0;
};
// Checks each result against the decomposition the parent asked for (rank, ranks, nx, ny,
// jacobi_slab's rows, reps) and throws gpsm::Error saying which rank disagrees.
GatheredRun gather_results(const std::vector<WorkerResult>& results, std::int64_t nx, std::int64_t ny, int reps);
// heat3d / wave3d: the global box of extents n (x fastest) from every rank's local box, as
// Slabs::gather (owned planes, and the first and last ranks' boundary halos), after the same
// checks against slab3d(n, axis, radius, ranks, rank).
GatheredRun gather_stencil3d_results(const std::vector<WorkerResult>& results, const std::int64_t n[3], Axis axis,
                                     int radius, int reps);

// Writes `bytes` to path through a temporary file and a rename, so a reader never sees part of it.
void write_file_atomic(const std::string& path, const std::string& bytes);
// Waits (polling) until `path` exists with exactly `size` bytes and returns them; throws
// gpsm::Error after timeout_s seconds.
std::string wait_for_file(const std::string& path, std::size_t size, double timeout_s);

}  // namespace gpsm::apps::jacobi
