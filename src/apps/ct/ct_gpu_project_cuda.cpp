// One-shot projections on the GPU from host data (ct_gpu.hpp): upload, one launch, download.
#include <cuda_runtime.h>

#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_gpu.hpp"
#include "apps/ct/ct_kernels.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"

namespace gpsm::apps::ct {

namespace {
template <class T>
void upload(DevBuf<T>& b, int device, const T* h, std::size_t n) {
  b.alloc(device, n);
  GPSM_CUDA(cudaMemcpy(b.p, h, n * sizeof(T), cudaMemcpyHostToDevice));
}
}  // namespace

int device_sms(int device) {
  int sms = 0;
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

std::vector<float> forward_project_gpu(const Geometry& g, const std::vector<float>& image,
                                       const std::vector<std::int32_t>& views, int device, int tile_rows, int splits) {
  const std::vector<ViewPose> poses = view_poses(g);
  DevBuf<ViewPose> d_poses;
  DevBuf<float> d_image, d_out;
  DevBuf<std::int32_t> d_views;
  upload(d_poses, device, poses.data(), poses.size());
  upload(d_image, device, image.data(), image.size());
  upload(d_views, device, views.data(), views.size());
  const int count = static_cast<int>(views.size());
  std::vector<float> out(static_cast<std::size_t>(count * g.cells_per_view()));
  d_out.alloc(device, out.size());
  const int tr = tile_rows > 0 ? tile_rows : forward_tile_rows(g.rows, g.channels);
  ForwardSplit split;
  split.splits = splits > 0 ? splits
                            : forward_splits(forward_tiles(g.rows, tr), count, std::int64_t{g.nx} * g.ny, device_sms(device));
  DevBuf<double> scratch;
  if (split.splits > 1) {
    scratch.alloc(device, forward_scratch_doubles(split.splits, count, g.cells_per_view()));
    split.scratch = scratch.p;
  }
  GPSM_CUDA(cudaSetDevice(device));
  launch_forward_project(g, d_poses.p, d_image.p, d_views.p, count, tr, d_out.p, nullptr, split);
  GPSM_CUDA(cudaMemcpy(out.data(), d_out.p, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

std::vector<float> back_project_gpu(const Geometry& g, const std::vector<float>& proj,
                                    const std::vector<std::int32_t>& views, int y0, int y1, std::vector<float> image,
                                    int device) {
  const std::vector<ViewPose> poses = view_poses(g);
  DevBuf<ViewPose> d_poses;
  DevBuf<float> d_proj, d_image;
  DevBuf<std::int32_t> d_views;
  upload(d_poses, device, poses.data(), poses.size());
  upload(d_proj, device, proj.data(), proj.size());
  upload(d_views, device, views.data(), views.size());
  upload(d_image, device, image.data(), image.size());
  launch_back_project(g, d_poses.p, d_proj.p, d_views.p, static_cast<int>(views.size()), y0, y1, d_image.p, nullptr);
  GPSM_CUDA(cudaMemcpy(image.data(), d_image.p, image.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return image;
}

}  // namespace gpsm::apps::ct
