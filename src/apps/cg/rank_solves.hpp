#pragma once
// The solve of a CG run from what each GPU recorded (plain C++, CPU-tested): every GPU reduces
// the same sums in the same order, so every GPU's iteration count and residual history must be
// the same, bit for bit; the solution is the GPUs' rows of x in global row order. One process's
// GPUs (gather_solve, cg_data.hpp) and the NVSHMEM workers' result files (cg_worker_proto.hpp)
// both end here.
#include <cstdint>
#include <vector>

#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"

namespace gpsm::apps::cg {

struct RankSolve {
  std::int32_t iterations = -1;  // -1: not recorded
  std::vector<double> rho;       // iterations + 1 entries
  std::vector<double> x;         // the rank's rows (plan.rank[r].local_rows())
};

// Throws gpsm::Error naming the first rank that recorded no iteration count in [0, cap], a
// history or x of the wrong length, or a count or history differing from rank 0's.
Solve combine_rank_solves(const Plan& plan, std::int32_t cap, const std::vector<RankSolve>& ranks);

}  // namespace gpsm::apps::cg
