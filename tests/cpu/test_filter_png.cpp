// PNG in and out (src/apps/filter/png_io.cpp): 8/16-bit gray and colour made gray, the round
// trip of what gpsm writes, and bad files refused with what and why.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "apps/filter/png_io.hpp"

using namespace gpsm::apps::filter;

namespace {

const std::string kPng = std::string(GPSM_FIXTURES_DIR) + "/png/";

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gpsm_png_" + std::to_string(::getpid()) + "_" + name;
}

std::string read_error(const std::string& path) {
  try {
    read_png_gray(path);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

float luma(float r, float g, float b) { return 0.2126f * r + 0.7152f * g + 0.0722f * b; }

}  // namespace

TEST(FilterPng, Reads16BitGrayExactly) {
  PngInfo info;
  const Image im = read_png_gray(kPng + "gray16_5x3.png", &info);
  EXPECT_EQ(info.bits, 16);
  EXPECT_EQ(info.channels, 1);
  ASSERT_EQ(im.width, 5);
  ASSERT_EQ(im.height, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x)
      EXPECT_EQ(im.px[y * 5 + x], static_cast<float>(13107 * x + 1000 * y) / 65535.0f) << x << "," << y;
}

TEST(FilterPng, ColourBecomesRec709LumaAndAlphaIsDropped) {
  PngInfo info;
  const Image rgb = read_png_gray(kPng + "rgb8_4x2.png", &info);
  EXPECT_EQ(info.bits, 8);
  EXPECT_EQ(info.channels, 3);
  auto s8 = [](int v) { return static_cast<float>(v) / 255.0f; };
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(rgb.px[y * 4 + x], luma(s8(60 * x + y), s8(255 - 60 * x), s8(17 * (x + 4 * y))));
  const Image rgba = read_png_gray(kPng + "rgba16_3x2.png", &info);
  EXPECT_EQ(info.bits, 16);
  EXPECT_EQ(info.channels, 4);
  auto s16 = [](int v) { return static_cast<float>(v) / 65535.0f; };
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      EXPECT_EQ(rgba.px[y * 3 + x], luma(s16(20000 * x), s16(30000 * y), s16(65535 - 9000 * x)));
  const Image ga = read_png_gray(kPng + "graya8_3x1.png", &info);
  EXPECT_EQ(info.channels, 2);
  for (int x = 0; x < 3; ++x) EXPECT_EQ(ga.px[x], s8(100 * x + 7));
}

TEST(FilterPng, WhatGpsmWritesReadsBackAsItsEightBitValues) {
  Image im{7, 3, std::vector<float>(21)};
  for (int i = 0; i < 21; ++i) im.px[i] = static_cast<float>(i * 12) / 255.0f;
  im.px[0] = -0.5f;  // clamped to 0
  im.px[1] = 7.0f;   // clamped to 1
  const std::string p = temp_path("round.png");
  write_png_gray8(p, im);
  PngInfo info;
  const Image back = read_png_gray(p, &info);
  std::remove(p.c_str());
  EXPECT_EQ(info.bits, 8);
  EXPECT_EQ(info.channels, 1);
  ASSERT_EQ(back.width, 7);
  ASSERT_EQ(back.height, 3);
  EXPECT_EQ(back.px[0], 0.0f);
  EXPECT_EQ(back.px[1], 1.0f);
  for (int i = 2; i < 21; ++i) EXPECT_EQ(back.px[i], static_cast<float>(to_gray8(im.px[i])) / 255.0f) << i;
  for (int i = 2; i < 21; ++i) EXPECT_EQ(to_gray8(im.px[i]), i * 12);
  EXPECT_EQ(to_gray8(0.5f / 255.0f), 1);  // rounded to nearest, halves away from zero
  EXPECT_EQ(to_gray8(0.49f / 255.0f), 0);
}

TEST(FilterPng, BadFilesSayWhatAndWhy) {
  EXPECT_NE(read_error("/nonexistent/a.png").find("gpsm: filter: /nonexistent/a.png: No such file or directory; check the path"),
            std::string::npos);
  EXPECT_NE(read_error(testing::TempDir()).find(": is a directory; give a PNG file"), std::string::npos);
  const std::string empty = temp_path("empty.png");
  { std::ofstream(empty).flush(); }
  EXPECT_NE(read_error(empty).find("empty file, not a PNG"), std::string::npos);
  const std::string text = temp_path("text.png");
  { std::ofstream(text) << "not an image at all\n"; }
  EXPECT_NE(read_error(text).find("not a readable PNG"), std::string::npos) << read_error(text);
  // A PNG cut after its header: the size is known, the pixels are not.
  std::ifstream src(kPng + "gray16_5x3.png", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  const std::string cut = temp_path("cut.png");
  { std::ofstream(cut, std::ios::binary) << bytes.substr(0, 40); }
  const std::string e = read_error(cut);
  EXPECT_NE(e.find("gpsm: filter: " + cut + ": "), std::string::npos) << e;
  EXPECT_TRUE(e.find("corrupt PNG") != std::string::npos || e.find("not a readable PNG") != std::string::npos) << e;
  for (const std::string& f : {empty, text, cut}) std::remove(f.c_str());
}
