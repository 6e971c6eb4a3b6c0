#pragma once
// What `gpsm bench` (the parent) and its NVSHMEM workers (gpsm-nvshmem-jacobi, one process per
// GPU: NVSHMEM needs one PE per process) tell each other, in plain C++ so the CPU tests check it:
//   WorkerArgs     the worker's command line (to_args / parse_worker_args are inverses);
//   WorkerResult   the binary result file each worker writes and the parent reads;
//   the unique-ID hand-over: rank 0 writes NVSHMEM's unique ID to a file the others wait for.
//
// Result file (host byte order: parent and workers run on one host), version 1:
//   offset          type               field
//   0               char[8]            magic "GPSMNVJ1"
//   8               u32                version (1)
//   12              i32                rank
//   16              i32                ranks
//   20              i32                device (CUDA ordinal the worker ran on)
//   24              i64                nx
//   32              i64                ny
//   40              i64                first_row (global row of the first stored row)
//   48              i64                chunk (rows stored)
//   56              i32                reps (timed repetitions R)
//   60              u32                reserved (0)
//   64              f64                norm (last timed rep's final norm, as the worker computed it)
//   72              f64[R]             seconds: solve-loop wall time of each timed rep
//   72 + 8R         i32[R]             iterations each timed rep ran
//   72 + 12R        f32[chunk * nx]    the rank's rows (local rows 1..chunk) after the last timed rep
// The file is exactly that long; read_result rejects anything else.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::jacobi {

struct WorkerArgs {
  int rank = 0, ranks = 1;
  int device = 0;                // CUDA ordinal (the parent's numbering: the worker inherits its environment)
  std::int64_t nx = 0, ny = 0;
  int iters = 0, nccheck = 1;
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
  double norm = 0;
  std::vector<double> seconds;   // one per timed rep
  std::vector<int> iterations;   // one per timed rep
  std::vector<float> rows;       // chunk * nx
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

// Writes `bytes` to path through a temporary file and a rename, so a reader never sees part of it.
void write_file_atomic(const std::string& path, const std::string& bytes);
// Waits (polling) until `path` exists with exactly `size` bytes and returns them; throws
// gpsm::Error after timeout_s seconds.
std::string wait_for_file(const std::string& path, std::size_t size, double timeout_s);

}  // namespace gpsm::apps::jacobi
