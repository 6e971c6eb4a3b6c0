#pragma once
// CT reconstruction on one GPU (plain declarations; the code is in *_cuda.cpp): the projector
// pair as one-shot calls on host data (what the GPU tests compare with the CPU core), and the
// whole PWLS-OS run of ct_pwls.hpp with every phase on the device.
#include <cstdint>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_pwls.hpp"
#include "apps/ct/ct_scan.hpp"

namespace gpsm::apps::ct {

// forward_project on device `device`: A_{views[k]} image, [k][row][channel]. tile_rows 0: the
// default tiling (forward_tile_rows); a smaller value forces more row tiles (tests). splits 0:
// forward_splits for the device's SMs; a positive value forces that many column splits (tests).
std::vector<float> forward_project_gpu(const Geometry& g, const std::vector<float>& image,
                                       const std::vector<std::int32_t>& views, int device = 0, int tile_rows = 0,
                                       int splits = 0);

// The SMs of CUDA device `device` (forward_splits' argument).
int device_sms(int device);

// back_project on the device: `image` with planes [y0, y1) replaced by A^T proj over the views.
std::vector<float> back_project_gpu(const Geometry& g, const std::vector<float>& proj,
                                    const std::vector<std::int32_t>& views, int y0, int y1, std::vector<float> image,
                                    int device = 0);

// Where a GPU run's time went (CUDA events on its stream, milliseconds, summed over the run).
struct GpuPhaseTimes {
  double setup_ms = 0;     // upload, d = A^T W A 1 (one forward and one back projection of all views)
  double forward_ms = 0;   // phase 1: forward projection of each subset's views and the weighted residual
  double update_ms = 0;    // phases 2-4: back projection, penalty and update of every y-plane
  double cost_ms = 0;      // the cost after each iteration (a forward projection of all views and the sums)
  int subset_updates = 0;  // how many subset updates forward_ms and update_ms cover
};

// pwls_os on one GPU: the same d, beta, subsets and order; the same cost and RMSE records (the
// cost's sums on the device, the RMSE on the host from the downloaded image).
PwlsRun pwls_os_gpu(const Geometry& g, const Scan& scan, const PwlsSettings& s, std::vector<float> x0, int iterations,
                    const std::vector<float>& truth, int device = 0, GpuPhaseTimes* times = nullptr);

}  // namespace gpsm::apps::ct
