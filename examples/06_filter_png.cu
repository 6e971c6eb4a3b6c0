// Example 6: filter a PNG across every GPU of the machine through one distributed array.
//
//   ./example_06_filter_png IN.png [--out OUT.png] [--k K] [--iters N] [--gpus N | --devices 0,1,...]
//
// IN: an 8- or 16-bit PNG, gray or colour (made gray: Rec. 709 luma of the stored values, samples
// scaled to [0, 1], alpha dropped). The image is filtered N times (default 1) by the K x K
// binomial Gaussian (K odd, default 5) with clamp-to-edge borders, and written as an 8-bit gray
// PNG (default IN's name with .filtered.png).
//
// The image lives in a distributed array (Context::alloc_distributed, GPU-SM's NUMA shared
// memory): one virtual range, its rows cut in one slab per GPU, each slab backed by memory on its
// GPU. Each GPU's kernel computes its own rows; the (K-1)/2 rows above and below its slab it loads
// straight from its neighbours' memory through the same view, no copies and no second pointer.
// The host checks the result against its own filter, bit for bit (the same float operations in
// the same order, no fused multiply-add on either side).
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"

#define STBI_ONLY_PNG
#define STBI_FAILURE_USERMSG
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb/stb_image.h"
#include "stb/stb_image_write.h"

using gpsm::DistributedView;

[[noreturn]] static void fail(const std::string& what, const std::string& why, int code = example::kBadArguments) {
  std::fprintf(stderr, "example 06: %s: %s\n", what.c_str(), why.c_str());
  std::exit(code);
}

// ---- One output pixel, the same code on the host and on the GPUs -------------------------------
__host__ __device__ inline std::int64_t clamp_to(std::int64_t v, std::int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }
__host__ __device__ inline float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);  // never fused into an FMA: the host rounds the product the same way
#else
  return a * b;
#endif
}
__host__ __device__ inline float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
// acc = 0; rows j top to bottom, columns i left to right: acc += w[j*k + i] * in(x + i - r, y + j - r).
template <class Row>
__host__ __device__ inline float pixel(const Row& row, const float* w, int k, std::int64_t x, std::int64_t y,
                                       std::int64_t width, std::int64_t height) {
  const int r = (k - 1) / 2;
  float acc = 0.0f;
  for (int j = 0; j < k; ++j) {
    const float* p = row(clamp_to(y + j - r, height));
    for (int i = 0; i < k; ++i) acc = add(acc, mul(w[j * k + i], p[clamp_to(x + i - r, width)]));
  }
  return acc;
}

// The host's rows of a row-major image (a functor, not a lambda: it is called from host-device code).
struct HostRows {
  const float* img;
  std::int64_t width;
  __host__ __device__ const float* operator()(std::int64_t gy) const { return img + gy * width; }
};

__constant__ float c_w[15 * 15];

// Rank r's rows [y0, y1) of `out` from `in`. Its own slab is one block of the array: found once,
// indexed locally; a halo row's block (the neighbour's) is looked up through the view.
__global__ void filter_rows(DistributedView<float> in, DistributedView<float> out, std::int64_t width,
                            std::int64_t height, std::int64_t y0, std::int64_t y1, int k) {
  const std::int64_t x = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t y = y0 + blockIdx.y * static_cast<std::int64_t>(blockDim.y) + threadIdx.y;
  if (x >= width || y >= y1) return;
  const gpsm::BlockBox mine = in.block(0, y0);
  auto row = [&](std::int64_t gy) -> const float* {
    const gpsm::BlockBox b = mine.contains(0, gy, 0) ? mine : in.block(0, gy);
    return in.block_data(b) + b.local(0, gy, 0);
  };
  const float v = pixel(row, c_w, k, x, y, width, height);
  const gpsm::BlockBox o = out.block(0, y0);
  out.block_data(o)[o.local(x, y, 0)] = v;
}

int main(int argc, char** argv) {
  std::string in_path, out_path;
  int k = 5, iters = 1;
  std::vector<char*> rest{argv[0]};  // --gpus / --devices go to example::devices_from_args
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--out" && has_value) out_path = argv[++i];
    else if (a == "--k" && has_value) k = example::parse_count("--k", argv[++i]);
    else if (a == "--iters" && has_value) iters = example::parse_count("--iters", argv[++i]);
    else if ((a == "--gpus" || a == "--devices") && has_value) rest.push_back(argv[i]), rest.push_back(argv[++i]);
    else if (!a.empty() && a[0] != '-' && in_path.empty()) in_path = a;
    else fail("usage", std::string(argv[0]) + " IN.png [--out OUT.png] [--k K] [--iters N] [--gpus N | --devices 0,1,...]");
  }
  if (in_path.empty()) fail("usage", "give the PNG to filter: " + std::string(argv[0]) + " IN.png");
  if (k < 3 || k > 15 || k % 2 == 0) fail("--k", std::to_string(k) + " is not an odd side from 3 to 15");
  if (iters < 1) fail("--iters", "at least 1");
  if (out_path.empty()) out_path = in_path.substr(0, in_path.rfind(".png") == std::string::npos ? in_path.size() : in_path.rfind(".png")) + ".filtered.png";

  // ---- The PNG, made gray float, checked before any GPU is looked for ----
  FILE* f = std::fopen(in_path.c_str(), "rb");
  if (f == nullptr) fail(in_path, std::strerror(errno));
  const bool sixteen = stbi_is_16_bit_from_file(f) != 0;
  std::fseek(f, 0, SEEK_SET);
  int w = 0, h = 0, c = 0;
  void* data = sixteen ? static_cast<void*>(stbi_load_from_file_16(f, &w, &h, &c, 0))
                       : static_cast<void*>(stbi_load_from_file(f, &w, &h, &c, 0));
  std::fclose(f);
  if (data == nullptr) fail(in_path, std::string("not a readable PNG (") + stbi_failure_reason() + ")");
  const std::int64_t W = w, H = h;
  std::vector<float> img(static_cast<std::size_t>(W * H));
  for (std::size_t p = 0; p < img.size(); ++p) {
    auto s = [&](int ch) {
      const std::size_t i = p * c + ch;
      return sixteen ? static_cast<const std::uint16_t*>(data)[i] / 65535.0f : static_cast<const std::uint8_t*>(data)[i] / 255.0f;
    };
    img[p] = c >= 3 ? 0.2126f * s(0) + 0.7152f * s(1) + 0.0722f * s(2) : s(0);
  }
  stbi_image_free(data);
  std::vector<float> wts(static_cast<std::size_t>(k * k));  // binomial Gaussian: C(k-1, i) C(k-1, j) / 4^(k-1)
  std::vector<double> b(k, 1.0);
  for (int n = 1; n < k; ++n)
    for (int i = n - 1; i >= 1; --i) b[i] += b[i - 1];
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) wts[j * k + i] = static_cast<float>(b[j] * b[i] / double(1ull << (2 * (k - 1))));

  const std::vector<int> devices = example::devices_from_args(static_cast<int>(rest.size()), rest.data());
  const int n = static_cast<int>(devices.size());
  if (H / n < (k - 1) / 2) fail(in_path, std::to_string(H) + " rows are too few for " + std::to_string(n) + " GPUs and a " +
                                             std::to_string(k) + "x" + std::to_string(k) + " filter; use fewer GPUs");
  try {
    gpsm::gps::Context ctx(devices);
    // Two images (ping-pong), rows cut in n slabs, slab r on rank r's GPU.
    const gpsm::BlockSpec slabs = gpsm::blocks::along({std::uint64_t(W), std::uint64_t(H), 1}, gpsm::Axis::y, n);
    auto a = ctx.alloc_distributed<float>(slabs, {"image_a"});
    auto bimg = ctx.alloc_distributed<float>(slabs, {"image_b"});
    a.upload(img);
    for (int r = 0; r < n; ++r) {
      example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
      example::check(cudaMemcpyToSymbol(c_w, wts.data(), wts.size() * sizeof(float)), "cudaMemcpyToSymbol");
    }
    for (int it = 0; it < iters; ++it) {
      auto& src = it % 2 == 0 ? a : bimg;
      auto& dst = it % 2 == 0 ? bimg : a;
      for (int r = 0; r < n; ++r) {
        const std::int64_t y0 = slabs.cuts[1][r], y1 = slabs.cuts[1][r + 1];
        example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
        const dim3 block(32, 8), grid((W + 31) / 32, (y1 - y0 + 7) / 8);
        filter_rows<<<grid, block, 0, ctx.stream(r)>>>(src.view(r), dst.view(r), W, H, y0, y1, k);
        example::check(cudaGetLastError(), "filter_rows launch");
      }
      ctx.synchronize();  // every GPU's rows written before any GPU reads them as halos
    }
    const std::vector<float> got = (iters % 2 == 0 ? a : bimg).download();

    // ---- The host's filter: the same arithmetic, bit for bit ----
    std::vector<float> cur = img, next(img.size());
    for (int it = 0; it < iters; ++it) {
      const HostRows row{cur.data(), W};
      for (std::int64_t y = 0; y < H; ++y)
        for (std::int64_t x = 0; x < W; ++x) next[y * W + x] = pixel(row, wts.data(), k, x, y, W, H);
      cur.swap(next);
    }
    std::size_t bad = 0;
    for (std::size_t p = 0; p < got.size(); ++p) bad += std::memcmp(&got[p], &cur[p], sizeof(float)) != 0;
    std::printf("example 06: %s %lldx%lld (%d-bit, %d channel(s), made gray), %dx%d Gaussian x%d on %d GPU(s) [%s] "
                "through one distributed array:",
                in_path.c_str(), (long long)W, (long long)H, sixteen ? 16 : 8, c, k, k, iters, n,
                example::join(devices).c_str());
    for (int r = 0; r < n; ++r)
      std::printf(" rows %llu-%llu on GPU %d%s", (unsigned long long)slabs.cuts[1][r],
                  (unsigned long long)slabs.cuts[1][r + 1] - 1, ctx.device(r), r + 1 < n ? "," : "");
    std::printf("\n");
    if (bad != 0) {
      std::printf("example 06: FAILED: %zu of %zu pixels differ from the CPU filter\n", bad, got.size());
      return example::kWrongResult;
    }
    std::vector<std::uint8_t> g8(got.size());
    for (std::size_t p = 0; p < got.size(); ++p) {
      const float v = got[p] < 0.0f ? 0.0f : (got[p] > 1.0f ? 1.0f : got[p]);
      g8[p] = static_cast<std::uint8_t>(v * 255.0f + 0.5f);
    }
    if (stbi_write_png(out_path.c_str(), w, h, 1, g8.data(), w) == 0) fail(out_path, "cannot write the PNG", example::kRuntimeError);
    std::printf("example 06: equal to the CPU filter bit for bit; wrote %s\n", out_path.c_str());
  } catch (const gpsm::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return example::kRuntimeError;
  }
  return 0;
}
