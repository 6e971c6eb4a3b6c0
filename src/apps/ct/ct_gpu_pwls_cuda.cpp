// PWLS-OS on one GPU (ct_gpu.hpp): the scan, weights, image and d live on the device for the
// whole run; each subset update is phase 1 (forward projection of the subset's views, weighted
// residual) then phases 2-4 (back projection, penalty and update of every y-plane into the other
// image buffer). The host only orders the launches, and reads two doubles (the cost's sums) and,
// when there is a phantom to compare with, the image after each iteration.
#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_gpu.hpp"
#include "apps/ct/ct_kernels.hpp"
#include "apps/ct/ct_projector.hpp"
#include "apps/ct/ct_subsets.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"

namespace gpsm::apps::ct {

namespace {

template <class T>
void upload(DevBuf<T>& b, int device, const T* h, std::size_t n) {
  b.alloc(device, n);
  GPSM_CUDA(cudaMemcpy(b.p, h, n * sizeof(T), cudaMemcpyHostToDevice));
}

// Elapsed time of work enqueued between two events on one stream.
class PhaseClock {
 public:
  explicit PhaseClock(cudaStream_t st) : st_(st) {
    GPSM_CUDA(cudaEventCreate(&a_));
    GPSM_CUDA(cudaEventCreate(&b_));
  }
  ~PhaseClock() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  void start() { GPSM_CUDA(cudaEventRecord(a_, st_)); }
  // Waits for the phase and adds its time to *ms.
  void stop(double* ms) {
    GPSM_CUDA(cudaEventRecord(b_, st_));
    GPSM_CUDA(cudaEventSynchronize(b_));
    float t = 0;
    GPSM_CUDA(cudaEventElapsedTime(&t, a_, b_));
    *ms += t;
  }

 private:
  cudaStream_t st_;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

class Stream {
 public:
  Stream() { GPSM_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace

PwlsRun pwls_os_gpu(const Geometry& g, const Scan& scan, const PwlsSettings& s, std::vector<float> x0, int iterations,
                    const std::vector<float>& truth, int device, GpuPhaseTimes* times) {
  GpuPhaseTimes local;
  GpuPhaseTimes& t = times != nullptr ? *times : local;
  GPSM_CUDA(cudaSetDevice(device));
  Stream stream;
  const cudaStream_t st = stream.get();
  PhaseClock clock(st);
  const std::int64_t sino = g.sinogram_cells(), voxels = g.voxels();
  const int tile_rows = forward_tile_rows(g.rows, g.channels);

  // Setup: poses, scan, weights, every subset's views (one array, subset m at offset[m]), d.
  clock.start();
  const std::vector<ViewPose> poses = view_poses(g);
  const std::vector<std::int32_t> every = all_views(g);
  std::vector<std::int32_t> subset_list;
  std::vector<std::size_t> offset;
  for (int m = 0; m < s.subsets; ++m) {
    offset.push_back(subset_list.size());
    const std::vector<std::int32_t> v = subset_views(g.views, s.subsets, m);
    subset_list.insert(subset_list.end(), v.begin(), v.end());
  }
  offset.push_back(subset_list.size());
  // Column splits of each forward launch (ct_forward_tiles.hpp): the subsets' largest view count
  // and all views (d's setup, the cost), one scratch for the larger need.
  const int sms = device_sms(device);
  int largest = 0;
  for (int m = 0; m < s.subsets; ++m)
    largest = std::max(largest, static_cast<int>(offset[static_cast<std::size_t>(m) + 1] - offset[static_cast<std::size_t>(m)]));
  DevBuf<double> d_split;
  ForwardSplit sub{forward_splits_for(g, tile_rows, largest, sms), nullptr};
  ForwardSplit all{forward_splits_for(g, tile_rows, g.views, sms), nullptr};
  const std::size_t scratch = std::max(forward_scratch_doubles(sub.splits, largest, g.cells_per_view()),
                                       forward_scratch_doubles(all.splits, g.views, g.cells_per_view()));
  if (scratch > 0) d_split.alloc(device, scratch);
  sub.scratch = all.scratch = d_split.p;
  DevBuf<ViewPose> d_poses;
  DevBuf<std::int32_t> d_every, d_subsets;
  DevBuf<float> d_y, d_w, d_x, d_next, d_d, d_sino;
  DevBuf<double> d_sums;
  upload(d_poses, device, poses.data(), poses.size());
  upload(d_every, device, every.data(), every.size());
  upload(d_subsets, device, subset_list.data(), subset_list.size());
  upload(d_y, device, scan.y.data(), scan.y.size());
  upload(d_w, device, scan.w.data(), scan.w.size());
  d_sino.alloc(device, static_cast<std::size_t>(sino));  // A x of all views; a subset's residual fits in it
  d_d.alloc(device, static_cast<std::size_t>(voxels));
  d_next.alloc(device, static_cast<std::size_t>(voxels));
  d_sums.alloc(device, 2);
  // d = A^T W A 1, as data_curvature: the ones image goes through d_x, which x0 then replaces.
  const std::vector<float> ones(static_cast<std::size_t>(voxels), 1.0f);
  upload(d_x, device, ones.data(), ones.size());
  launch_forward_project(g, d_poses.p, d_x.p, d_every.p, g.views, tile_rows, d_sino.p, st, all);
  launch_scale(d_sino.p, d_w.p, sino, st);
  launch_back_project(g, d_poses.p, d_sino.p, d_every.p, g.views, 0, g.ny, d_d.p, st);
  std::vector<float> d(static_cast<std::size_t>(voxels));
  GPSM_CUDA(cudaMemcpyAsync(d.data(), d_d.p, d.size() * sizeof(float), cudaMemcpyDeviceToHost, st));
  GPSM_CUDA(cudaMemcpyAsync(d_x.p, x0.data(), x0.size() * sizeof(float), cudaMemcpyHostToDevice, st));
  clock.stop(&t.setup_ms);
  const Penalty pen = make_penalty(g, s, d);

  PwlsRun run;
  auto record = [&] {
    clock.start();
    GPSM_CUDA(cudaMemsetAsync(d_sums.p, 0, 2 * sizeof(double), st));
    launch_forward_project(g, d_poses.p, d_x.p, d_every.p, g.views, tile_rows, d_sino.p, st, all);
    launch_data_term(d_sino.p, d_y.p, d_w.p, sino, d_sums.p, st);
    launch_penalty_pairs(g, pen, d_x.p, d_sums.p + 1, st);
    double sums[2];
    GPSM_CUDA(cudaMemcpyAsync(sums, d_sums.p, sizeof(sums), cudaMemcpyDeviceToHost, st));
    clock.stop(&t.cost_ms);
    run.cost.push_back(0.5 * sums[0] + pen.beta * sums[1]);
    if (!truth.empty()) {
      GPSM_CUDA(cudaMemcpy(x0.data(), d_x.p, x0.size() * sizeof(float), cudaMemcpyDeviceToHost));
      run.rmse_hu.push_back(rmse_hu(x0, truth));
    }
  };
  record();
  const std::vector<int> order = subset_order(s.subsets);
  for (int it = 0; it < iterations; ++it) {
    for (int m : order) {
      const std::int32_t* views = d_subsets.p + offset[static_cast<std::size_t>(m)];
      const int count = static_cast<int>(offset[static_cast<std::size_t>(m) + 1] - offset[static_cast<std::size_t>(m)]);
      clock.start();
      launch_forward_project(g, d_poses.p, d_x.p, views, count, tile_rows, d_sino.p, st, sub);
      launch_weighted_residual(g, d_y.p, d_w.p, views, count, d_sino.p, st);
      clock.stop(&t.forward_ms);
      clock.start();
      launch_update_planes(g, pen, d_d.p, s.subsets, d_x.p, d_poses.p, d_sino.p, views, count, 0, g.ny, d_next.p, st);
      clock.stop(&t.update_ms);
      std::swap(d_x.p, d_next.p);  // both on `device`: only the pointers trade places
      ++t.subset_updates;
    }
    record();
  }
  run.x.resize(static_cast<std::size_t>(voxels));
  GPSM_CUDA(cudaMemcpy(run.x.data(), d_x.p, run.x.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return run;
}

}  // namespace gpsm::apps::ct
