#pragma once
// fd3d's CPU reference (OpenMP where available) through fd3d_math.hpp's update, and the sampled
// check of a step that large volumes use instead of a whole reference run.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::fd3d {

struct FdProblem {
  std::int64_t n[3] = {0, 0, 0};  // x, y, z, boundary layer included
  int radius = 0;
  int iters = 0;
  std::uint32_t seed = 1;
};

// Every cell initial_value(global cell index, seed) (stencil_math.hpp), the boundary layer too.
std::vector<float> fd3d_initial(const FdProblem& p);

// One step: every updated cell (coordinates in [R, n - R)) of `in` whose z lies in [z0, z1) into
// `out`; out's other cells untouched.
void fd3d_step(const FdProblem& p, const float* in, float* out, std::int64_t z0, std::int64_t z1);

// p.iters steps from fd3d_initial; the boundary layer keeps its initial values. Throws
// std::invalid_argument for a halo outside [1, 16], an extent < 2R + 1 or iters < 0.
std::vector<float> fd3d_reference(const FdProblem& p);

// The planes along z a sampled check recomputes: the first and last R + 2, and `spread` more
// spaced evenly between them (each at most once, ascending).
std::vector<std::int64_t> sampled_planes(const FdProblem& p, int spread);

// Whether `next` is one step of `prev` on the given z planes (every cell of each, boundary cells
// unchanged from prev), bit for bit: "" or what differs first ("plane 17: cell (x, y) is a, the
// step gives b"). The check of a one-GPU run's last step, from its last two buffers.
std::string check_step(const FdProblem& p, const std::vector<float>& prev, const std::vector<float>& next,
                       const std::vector<std::int64_t>& planes);

// Multiply-adds of a whole reference run (9R + 1 FLOPs per updated cell and step): what decides
// whether the app computes it on the CPU or checks a one-GPU run instead (fd3d_app_cuda.cpp).
double reference_flops(const FdProblem& p);

}  // namespace gpsm::apps::fd3d
