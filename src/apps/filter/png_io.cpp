#include "apps/filter/png_io.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/atomic_file.hpp"
#include "gpsm/error.hpp"

// stb's implementations live in this one translation unit; only PNG is decoded, no file I/O of
// stb's own is needed for writing (the bytes go through write_file_atomic).
#define STBI_ONLY_PNG
#define STBI_FAILURE_USERMSG
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
#include "stb/stb_image.h"
#include "stb/stb_image_write.h"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace gpsm::apps::filter {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why, const std::string& todo) {
  throw std::invalid_argument("gpsm: filter: " + path + ": " + why + "; " + todo);
}

float luma(float r, float g, float b) { return 0.2126f * r + 0.7152f * g + 0.0722f * b; }

}  // namespace

Image read_png_gray(const std::string& path, PngInfo* info) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    bad(path, std::strerror(errno), errno == ENOENT ? "check the path" : "check the file's permissions");
  if (S_ISDIR(st.st_mode)) bad(path, "is a directory", "give a PNG file");
  if (st.st_size == 0) bad(path, "empty file, not a PNG", "give a PNG file");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) bad(path, std::strerror(errno), "check the file's permissions");
  int w = 0, h = 0, c = 0;
  const bool sixteen = stbi_is_16_bit_from_file(f) != 0;
  std::fseek(f, 0, SEEK_SET);
  if (stbi_info_from_file(f, &w, &h, &c) == 0) {
    std::fclose(f);
    bad(path, std::string("not a readable PNG (") + stbi_failure_reason() + ")", "give an 8- or 16-bit PNG");
  }
  std::fseek(f, 0, SEEK_SET);
  void* data = sixteen ? static_cast<void*>(stbi_load_from_file_16(f, &w, &h, &c, 0))
                       : static_cast<void*>(stbi_load_from_file(f, &w, &h, &c, 0));
  std::fclose(f);
  if (data == nullptr)
    bad(path, std::string("corrupt PNG (") + stbi_failure_reason() + ")", "give an intact 8- or 16-bit PNG");
  Image im{w, h, std::vector<float>(static_cast<std::size_t>(w) * static_cast<std::size_t>(h))};
  auto sample = [&](std::size_t i) {  // divided, not times a rounded reciprocal: k / 255 is the nearest float
    return sixteen ? static_cast<float>(static_cast<const std::uint16_t*>(data)[i]) / 65535.0f
                   : static_cast<float>(static_cast<const std::uint8_t*>(data)[i]) / 255.0f;
  };
  for (std::size_t p = 0; p < im.px.size(); ++p) {
    const std::size_t s = p * static_cast<std::size_t>(c);
    im.px[p] = c >= 3 ? luma(sample(s), sample(s + 1), sample(s + 2)) : sample(s);  // alpha (c 2, 4) dropped
  }
  stbi_image_free(data);
  if (info != nullptr) *info = PngInfo{sixteen ? 16 : 8, c};
  return im;
}

std::uint8_t to_gray8(float v) {
  const float c = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);  // NaN reads as 0: neither comparison holds
  return static_cast<std::uint8_t>(std::lround((c == c ? c : 0.0f) * 255.0f));
}

void write_png_gray8(const std::string& path, const Image& im) {
  if (im.width < 1 || im.height < 1 || im.width > (1 << 24) || im.height > (1 << 24))
    throw gpsm::Error("gpsm: filter: cannot write a " + std::to_string(im.width) + "x" + std::to_string(im.height) +
                      " image as PNG; sides from 1 to 16777216 pixels");
  std::vector<std::uint8_t> g(im.px.size());
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = to_gray8(im.px[i]);
  std::string bytes;
  auto sink = [](void* ctx, void* d, int n) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n); };
  if (stbi_write_png_to_func(sink, &bytes, static_cast<int>(im.width), static_cast<int>(im.height), 1, g.data(),
                             static_cast<int>(im.width)) == 0)
    throw gpsm::Error("gpsm: filter: " + path + ": the PNG encoder failed; try a smaller image");
  write_file_atomic(path, std::string_view(bytes));
}

}  // namespace gpsm::apps::filter
