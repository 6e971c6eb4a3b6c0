#pragma once
// What `gpsm bench --app cg --paradigm nvshmem_std|nvshmem_pipe` (the parent) and its NVSHMEM
// workers (gpsm-nvshmem-cg, one process per GPU: NVSHMEM needs one PE per process) tell each
// other, in plain C++ so the CPU tests check it.
//   CgWorkerArgs    the worker's command line (to_args / parse_cg_worker_args are inverses);
//   CgWorkerResult  the binary result file each worker writes and the parent reads;
//   gather_cg_results  every rank's result made into the run's Solve and times.
// The worker builds the matrix, the split and the start from the same --size entry as the parent
// (the same deterministic code: generators, or the Matrix Market file), so only the entry
// crosses, not the matrix; the parent checks the rows each worker reports against its own split.
//
// Result file (host byte order: parent and workers run on one host), version 1:
//   offset          type      field
//   0               char[8]   magic "GPSMNVCG"
//   8               u32       version (1)
//   12              i32       rank
//   16              i32       ranks
//   20              i32       device (CUDA ordinal the worker ran on)
//   24              i64       row_begin (global index of the rank's first row)
//   32              i64       rows (R: the rank's rows)
//   40              i32       reps (timed repetitions P)
//   44              i32       iterations (I: of the last timed rep, as the rank recorded it; -1: none)
//   48              f64[P]    seconds: wall time of each timed solve
//   48 + 8P         i32[P]    iterations each timed rep ran (as the rank recorded them)
//   48 + 12P        f64[H]    residual history of the last timed rep, H = I + 1 (0 when I < 0)
//   ...             f64[R]    the rank's rows of x after the last timed rep
// The file is exactly that long; read_cg_result rejects anything else.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"

namespace gpsm::apps::cg {

struct CgWorkerArgs {
  Variant variant = Variant::standard;
  std::string matrix;            // the --size entry (matrix.hpp's grammar, @nnz and @tol included)
  std::string spmv;              // GPSM_CG_SPMV's value in the parent ("" : automatic)
  std::string values;            // GPSM_CG_VALUES's value in the parent ("" : automatic)
  std::string index;             // GPSM_CG_INDEX's value in the parent ("" : automatic)
  std::string rows_per_thread;   // GPSM_CG_ROWS_PER_THREAD's value in the parent ("" : automatic)
  int iters = 0;                 // iteration cap
  int rank = 0, ranks = 1;
  int device = 0;                // CUDA ordinal (the parent's numbering: the worker inherits its environment)
  int warmup = 0, reps = 1;
  std::string uid_file;          // rank 0 writes NVSHMEM's unique ID here, the others wait for it
  std::string out_file;          // the result file
  int timeout_s = 120;           // how long a worker waits for the unique ID
};

// "std" | "pipe": the variant on the worker's command line.
const char* worker_variant_name(Variant v);
// The arguments after argv[0].
std::vector<std::string> to_args(const CgWorkerArgs& a);
// argv as main() gets it; throws std::invalid_argument naming a bad or missing option.
CgWorkerArgs parse_cg_worker_args(int argc, const char* const* argv);

struct CgWorkerResult {
  int rank = 0, ranks = 1, device = 0;
  std::int64_t row_begin = 0, rows = 0;
  std::vector<double> seconds;  // one per timed rep
  std::vector<int> iterations;  // one per timed rep
  int last_iterations = -1;     // the last timed rep's count, the length of rho minus one
  std::vector<double> rho;      // the last timed rep's history
  std::vector<double> x;        // the rank's rows
};

// Throw gpsm::Error naming the file on any I/O error; read_cg_result also on a malformed file.
void write_cg_result(const std::string& path, const CgWorkerResult& r);
CgWorkerResult read_cg_result(const std::string& path);

struct CgGathered {
  Solve solve;                        // combine_rank_solves (rank_solves.hpp)
  std::vector<double> sec_per_iter;   // per timed rep: the slowest rank's seconds over the iterations
};
// Checks each result against the split the parent made (rank order, rank count, rows, reps,
// equal per-rep iteration counts on every rank) and throws gpsm::Error saying which rank disagrees.
CgGathered gather_cg_results(const std::vector<CgWorkerResult>& results, const Plan& plan, int cap, int reps);

}  // namespace gpsm::apps::cg
