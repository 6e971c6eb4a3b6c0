#pragma once
// `gpsm bench --app ct --size`: a geometry (ct_geometry.hpp's names or NXxNYxNZ:VIEWSxROWSxCHANNELS
// [:ORBIT]) optionally followed by @subsets=M (ordered subsets per iteration, default the seed's
// 24), and the memory a run of it needs (plain C++, CPU-tested), checked before any work.
#include <string>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

inline constexpr int kDefaultSubsets = 24;  // the PROACT dissertation's case study
inline constexpr int kDefaultIterations = 3;
inline constexpr double kBenchI0 = 1e5;         // incident photons per ray of the simulated scan
inline constexpr unsigned kBenchScanSeed = 17;  // its Poisson noise's seed

struct CtBenchSpec {
  std::string text;  // as given
  Geometry g;
  int subsets = kDefaultSubsets;
};

// Throws std::invalid_argument("bad --size '<text>' for ct: <why>; use <syntax>") for an unknown
// geometry, a bad modifier, or subsets outside 1..views.
CtBenchSpec parse_bench_spec(const std::string& text);
inline constexpr const char* kBenchSizeSyntax =
    "small, medium, seed or NXxNYxNZ:VIEWSxROWSxCHANNELS[:helical|:circular], then optionally @subsets=M";

// Peak host bytes of a bench run: phantom, line integrals, the scan's y and w, the reference's and
// a run's images and the downloads of d and the iterate.
double ct_host_bytes(const CtBenchSpec& s);
// Device bytes of the busiest GPU (rank 0): y and w, A x of every view (d and the cost), two
// images, d, two residual buffers of the largest subset, the view lists and poses.
double ct_gpu_bytes_per_gpu(const CtBenchSpec& s);

}  // namespace gpsm::apps::ct
