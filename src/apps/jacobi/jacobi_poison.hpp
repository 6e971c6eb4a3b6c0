#pragma once
// Which rows of a Jacobi slab (or grid) start as NaN: rows a paradigm must overwrite before they
// are read, so a missed transfer shows in the result. Shared by gpsm's kernels and the nvshmem
// worker (tools/gpsm-nvshmem-stencil), which initialize slabs the same way (jacobi_device.cuh).
namespace gpsm::apps::jacobi {

// halo_rows: the first and last row; inner_rows: every other row; all_rows: every row. Columns
// 0 and nx-1 (the boundary) are never poisoned.
enum class Poison { none, halo_rows, inner_rows, all_rows };

}  // namespace gpsm::apps::jacobi
