#include "apps/ct/ct_slices.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "apps/ct/ct_phantom.hpp"
#include "apps/filter/png_io.hpp"
#include "common/atomic_file.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::ct {

std::vector<Slice> central_slices(const Geometry& g, const std::vector<float>& mu) {
  if (mu.size() != static_cast<std::size_t>(g.voxels()))
    throw std::invalid_argument(fmt::format("ct slices: {} voxels for a {}-voxel image", mu.size(), g.voxels()));
  const auto hu = [&](int ix, int iy, int iz) {
    return static_cast<float>(hu_from_mu(mu[static_cast<std::size_t>(g.voxel_index(ix, iy, iz))]));
  };
  std::vector<Slice> s(3);
  s[0] = {"axial", g.ny, g.nx, {}};
  s[1] = {"coronal", g.nz, g.nx, {}};
  s[2] = {"sagittal", g.nz, g.ny, {}};
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix) s[0].hu.push_back(hu(ix, iy, g.nz / 2));
  for (int iz = 0; iz < g.nz; ++iz)
    for (int ix = 0; ix < g.nx; ++ix) s[1].hu.push_back(hu(ix, g.ny / 2, iz));
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy) s[2].hu.push_back(hu(g.nx / 2, iy, iz));
  return s;
}

std::string slices_stem(const std::string& size) {
  std::string s = "ct-" + size;
  for (char& c : s)
    if (c == ':' || c == '@' || c == '/' || c == '=') c = '_';
  return s;
}

namespace {

// A JSON string of s (the size text is checked before any run, but a path-like size may hold anything).
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      o += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    o += c;
  }
  return o + "\"";
}

std::string numbers(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + (std::isfinite(v[i]) ? fmt::format("{:.9g}", v[i]) : std::string("null"));
  return out + "]";
}

// Little-endian float32 bytes (every platform gpsm builds on is little-endian; checked).
void append_f32(std::string& out, const std::vector<float>& v) {
  static_assert(sizeof(float) == 4);
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  if (first != 1) throw std::logic_error("ct slices: a big-endian host; the .f32 file is little-endian");
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

}  // namespace

filter::Image windowed(const Slice& s) {
  filter::Image im;
  im.width = s.cols;
  im.height = s.rows;
  im.px.resize(s.hu.size());
  const double lo = kSliceWindowHu[0], span = kSliceWindowHu[1] - kSliceWindowHu[0];
  for (int r = 0; r < s.rows; ++r)  // the last slice row first: y and z grow upward in the picture
    for (int c = 0; c < s.cols; ++c)
      im.px[static_cast<std::size_t>(r) * s.cols + c] =
          static_cast<float>((s.hu[static_cast<std::size_t>(s.rows - 1 - r) * s.cols + c] - lo) / span);
  return im;
}

std::string write_slice_pictures(const std::string& dir, const SlicePictures& p) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(fmt::format("gpsm: ct pictures: {}: cannot create the folder ({}); pass a writable --pictures folder",
                            dir, ec.message()));
  const std::string stem = slices_stem(p.size);
  std::string raw, index;
  const char* images[] = {"phantom", "first iterate", "final image"};
  const char* short_names[] = {"phantom", "first", "final"};
  const std::vector<float>* vols[] = {&p.phantom, &p.first, &p.final_image};
  for (int k = 0; k < 3; ++k)
    for (const Slice& s : central_slices(p.g, *vols[k])) {
      const std::string png = fmt::format("{}-{}-{}.png", stem, short_names[k], s.plane);
      filter::write_png_gray8((fs::path(dir) / png).string(), windowed(s));
      index += fmt::format(
          "{}    {{\"image\": \"{}\", \"plane\": \"{}\", \"rows\": {}, \"cols\": {}, \"offset\": {}, \"png\": \"{}\"}}",
          index.empty() ? "" : ",\n", images[k], s.plane, s.rows, s.cols, raw.size(), png);
      append_f32(raw, s.hu);
    }
  const std::string json = fmt::format(
      "{{\n  \"schema\": \"gpsm.ct_slices\",\n  \"schema_version\": 1,\n  \"size\": {},\n  \"geometry\": \"{}\",\n"
      "  \"voxel_mm\": [{:.9g}, {:.9g}, {:.9g}],\n  \"subsets\": {},\n  \"raw\": \"{}.f32\",\n"
      "  \"slices\": [\n{}\n  ],\n  \"cost\": {},\n  \"rmse_hu\": {}\n}}\n",
      quoted(p.size), p.g.label(), p.g.dx, p.g.dx, p.g.dz, p.subsets, stem, index, numbers(p.cost), numbers(p.rmse_hu));
  const std::string base = (fs::path(dir) / stem).string();
  write_file_atomic(base + ".f32", raw);  // gpsm::Error naming the path and the system's reason
  write_file_atomic(base + ".json", json);
  return base + ".json";
}

}  // namespace gpsm::apps::ct
