#pragma once
// PNG in and out for `gpsm filter` (stb_image / stb_image_write, Debian's libstb-dev, header-only
// and staged in .deps/stb for the GPU machine). Plain C++, checked by the CPU tests.
//
// Reading: 8- or 16-bit PNG, gray, gray+alpha, RGB or RGBA (palette images come out as RGB);
// alpha is dropped, colour becomes gray as the Rec. 709 luma of the stored values,
// 0.2126 R + 0.7152 G + 0.0722 B (no gamma conversion), and samples are scaled to [0, 1]
// (divided by 255 or 65535).
// Writing: 8-bit gray, each value clamped to [0, 1], times 255, rounded to the nearest integer.
#include <cstdint>
#include <string>

#include "apps/filter/filter_reference.hpp"

namespace gpsm::apps::filter {

struct PngInfo {
  int bits = 8;      // 8 or 16
  int channels = 1;  // as stored: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
};

// Throws std::invalid_argument "gpsm: filter: <path>: <why>; <what to do>" for a missing,
// unreadable, empty or corrupt file, or a file that is not a PNG.
Image read_png_gray(const std::string& path, PngInfo* info = nullptr);
// Written whole or not at all (common/atomic_file.hpp). Throws gpsm::Error when it cannot.
void write_png_gray8(const std::string& path, const Image& im);
// The 8-bit sample write_png_gray8 stores for v.
std::uint8_t to_gray8(float v);

}  // namespace gpsm::apps::filter
