#pragma once
// What `gpsm bench --app fd3d` runs: GPU-SM's finite-difference configurations (GPU-SM paper §3.3.1,
// Table 1: halos 2 to 16, volumes 128^3 to 768^3, the domain split along X, Y or Z). Plain C++,
// checked by the CPU tests.
//
// --size grammar, one entry:
//   N:hR[:AXES]            an N^3 volume, halo (star radius) R
//   NXxNYxNZ:hR[:AXES]     any box
//   table1[:AXES]          Table 1's twelve volume-halo pairs (128, 512, 768 x h2, h4, h8, h16)
// AXES is one or more of x, y, z ("z", "xz", "xyz"): an entry per axis, which wins over --axis;
// without it the run takes --axis. The volume includes the fixed boundary layer, R cells thick on
// every face, as heat3d's and wave3d's do.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"

namespace gpsm::apps::fd3d {

// The halos the kernels are compiled for: Table 1's (each one is a register queue of 2R + 1
// planes and an unrolled star; fd3d_kernels.cu).
constexpr int kHalos[] = {2, 4, 8, 16};
bool halo_compiled(int r);
constexpr const char* kHaloList = "2, 4, 8 or 16";

struct FdSize {
  std::int64_t n[3] = {0, 0, 0};  // x, y, z, boundary layer included
  int radius = 0;
  std::optional<Axis> axis;       // from the size; empty: --axis
  // Canonical: "512:h4:z" for a cube, "640x512x384:h4" otherwise; the axis only when given.
  std::string label() const;
};

// One entry without AXES lists or table1 (what expand_fd_size gives). Throws
// std::invalid_argument "bad --size '<s>' for fd3d: <why> (use N:hR[:x|y|z] ...)".
FdSize parse_fd_size(const std::string& s);

// One --size entry to the sizes it stands for, each canonical (FdSize::label): "512:h4:xz" ->
// "512:h4:x", "512:h4:z"; "table1" -> "128:h2" ... "768:h16". Throws as parse_fd_size.
std::vector<std::string> expand_fd_size(const std::string& entry);

// The axis a run splits: the size's, else the one --axis gave.
inline Axis axis_of(const FdSize& f, Axis fallback) { return f.axis ? *f.axis : fallback; }

}  // namespace gpsm::apps::fd3d
