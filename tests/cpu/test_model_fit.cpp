// Fitting the transfer-time model t = c + bytes/BW (linear and piecewise) to synthetic sweeps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpsm/machine_model.hpp"

using gpsm::model::fit_linear;
using gpsm::model::fit_piecewise;
using gpsm::model::LinearFit;
using gpsm::model::PiecewiseFit;
using gpsm::model::predict_seconds;
using gpsm::model::Sample;

namespace {

// Powers of two from 4 B to 1 GiB: the sizes `gpsm scope` sweeps.
std::vector<double> sweep_sizes(double lo = 4, double hi = 1073741824.0) {
  std::vector<double> v;
  for (double b = lo; b <= hi; b *= 2) v.push_back(b);
  return v;
}

// Deterministic multiplicative noise in [-amp, +amp], not periodic over the sweep.
double noise(int i, double amp) { return 1.0 + amp * std::sin(1.7 * i + 0.3); }

std::vector<Sample> linear_samples(double c, double bw, double amp = 0) {
  std::vector<Sample> s;
  int i = 0;
  for (double b : sweep_sizes()) s.push_back({b, (c + b / bw) * noise(i++, amp)});
  return s;
}

double rel(double got, double want) { return std::abs(got - want) / std::abs(want); }

}  // namespace

TEST(ModelFitLinear, RecoversNoiselessParameters) {
  const LinearFit f = fit_linear(linear_samples(5e-6, 25e9));
  EXPECT_LT(rel(f.c_s, 5e-6), 1e-9);
  EXPECT_LT(rel(f.bw_Bps, 25e9), 1e-9);
  EXPECT_LT(f.max_rel_err, 1e-9);
}

TEST(ModelFitLinear, RecoversParametersWithOnePercentNoise) {
  const LinearFit f = fit_linear(linear_samples(8e-6, 180e9, 0.01));
  EXPECT_LT(rel(f.c_s, 8e-6), 0.01);
  EXPECT_LT(rel(f.bw_Bps, 180e9), 0.01);
  EXPECT_GT(f.max_rel_err, 0.001);  // the noise is seen...
  EXPECT_LT(f.max_rel_err, 0.03);   // ...and stays of the order of the noise
}

TEST(ModelFitLinear, RepeatedSamplesWithOutliers) {
  // Seven repetitions per size, one a 50% slower warm-up-like outlier, order shuffled.
  const double c = 3e-6, bw = 12e9;
  const double f7[] = {1.5, 1.01, 0.99, 1.0, 1.005, 0.995, 1.02};
  std::vector<Sample> s;
  const auto sizes = sweep_sizes();
  for (int r = 0; r < 7; ++r)
    for (size_t i = 0; i < sizes.size(); ++i) {
      const double b = sizes[(i * 7 + r) % sizes.size()];
      s.push_back({b, (c + b / bw) * f7[(r + i) % 7]});
    }
  const LinearFit f = fit_linear(s);
  EXPECT_LT(rel(f.c_s, c), 0.01);
  EXPECT_LT(rel(f.bw_Bps, bw), 0.01);
}

TEST(ModelFitLinear, LatencyOnlyDataGivesInfiniteBandwidth) {
  // Time does not grow with size (slightly decreasing): the slope clamps to 0, BW = +inf.
  std::vector<Sample> s = {{4, 2.0e-6}, {64, 1.99e-6}, {1024, 1.98e-6}, {4096, 1.97e-6}};
  const LinearFit f = fit_linear(s);
  EXPECT_TRUE(std::isinf(f.bw_Bps));
  EXPECT_GT(f.bw_Bps, 0);
  EXPECT_NEAR(f.c_s, 1.985e-6, 0.01e-6);
  EXPECT_LT(f.max_rel_err, 0.01);
}

TEST(ModelFitLinear, ConstantIsClampedAtZero) {
  // Pure bandwidth data whose best unconstrained intercept is negative.
  std::vector<Sample> s;
  for (double b = 1 << 20; b <= (1 << 30); b *= 2) s.push_back({b, b / 10e9});
  s.front().seconds *= 0.9;  // the smallest size looks faster than the line: intercept < 0
  const LinearFit f = fit_linear(s);
  EXPECT_EQ(f.c_s, 0.0);
  EXPECT_LT(rel(f.bw_Bps, 10e9), 0.02);
}

TEST(ModelFitLinear, RejectsDegenerateInput) {
  EXPECT_THROW(fit_linear({}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{1024, 1e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{1024, 1e-6}, {1024, 1.1e-6}, {1024, 0.9e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{4, 1e-6}, {8, 0.0}}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{4, 1e-6}, {8, -1e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{-4, 1e-6}, {8, 1e-6}}), std::invalid_argument);
  EXPECT_THROW(fit_linear({{4, 1e-6}, {8, std::numeric_limits<double>::quiet_NaN()}}),
               std::invalid_argument);
  EXPECT_NO_THROW(fit_linear({{4, 1e-6}, {8, 1.1e-6}}));
}

TEST(ModelFitPiecewise, LinearDataGivesOneSegment) {
  const PiecewiseFit f = fit_piecewise(linear_samples(5e-6, 25e9, 0.01));
  ASSERT_EQ(f.segments.size(), 1u);
  EXPECT_EQ(f.segments[0].min_bytes, 0.0);
  EXPECT_TRUE(std::isinf(f.segments[0].max_bytes));
  EXPECT_LT(rel(f.segments[0].bw_Bps, 25e9), 0.01);
  EXPECT_EQ(f.max_rel_err, f.segments[0].max_rel_err);
}

namespace {
// c = 2 us, 50 GB/s below 64 KiB; c = 10 us, 400 GB/s from 64 KiB on.
double two_seg(double b) { return b < 65536 ? 2e-6 + b / 50e9 : 10e-6 + b / 400e9; }
}  // namespace

TEST(ModelFitPiecewise, RecoversTwoSegments) {
  std::vector<Sample> s;
  for (double b : sweep_sizes()) s.push_back({b, two_seg(b)});
  const PiecewiseFit f = fit_piecewise(s);
  ASSERT_EQ(f.segments.size(), 2u);
  EXPECT_EQ(f.segments[0].min_bytes, 0.0);
  EXPECT_LT(rel(f.segments[0].max_bytes, 65536), 0.02);
  EXPECT_EQ(f.segments[1].min_bytes, f.segments[0].max_bytes);
  EXPECT_TRUE(std::isinf(f.segments[1].max_bytes));
  EXPECT_LT(rel(f.segments[0].bw_Bps, 50e9), 0.02);
  EXPECT_LT(rel(f.segments[1].bw_Bps, 400e9), 0.02);
  EXPECT_LT(rel(f.segments[0].c_s, 2e-6), 0.02);
  EXPECT_LT(rel(f.segments[1].c_s, 10e-6), 0.02);
  EXPECT_LT(f.max_rel_err, 0.05);
  for (double b : sweep_sizes()) EXPECT_LT(rel(predict_seconds(f, b), two_seg(b)), 1e-6) << b;
}

TEST(ModelFitPiecewise, RecoversTwoSegmentsFromNoisyRepeatedSamples) {
  std::vector<Sample> s;
  int i = 0;
  for (int r = 0; r < 5; ++r)
    for (double b : sweep_sizes()) s.push_back({b, two_seg(b) * noise(i++, 0.01)});
  const PiecewiseFit f = fit_piecewise(s);
  ASSERT_EQ(f.segments.size(), 2u);
  EXPECT_LT(rel(f.segments[0].max_bytes, 65536), 0.02);
  EXPECT_LT(rel(f.segments[0].bw_Bps, 50e9), 0.02);
  EXPECT_LT(rel(f.segments[1].bw_Bps, 400e9), 0.02);
}

TEST(ModelFitPiecewise, FewestSegmentsMeetingTolerance) {
  std::vector<Sample> s;
  for (double b : sweep_sizes()) s.push_back({b, two_seg(b)});
  // A loose tolerance accepts the single line even though it is visibly wrong.
  const PiecewiseFit loose = fit_piecewise(s, 3, 1e6);
  EXPECT_EQ(loose.segments.size(), 1u);
  EXPECT_GT(loose.max_rel_err, 0.05);
  // Capped at one segment: the best single line, error reported honestly.
  const PiecewiseFit one = fit_piecewise(s, 1, 0.05);
  EXPECT_EQ(one.segments.size(), 1u);
  EXPECT_GT(one.max_rel_err, 0.05);
  EXPECT_THROW(fit_piecewise(s, 0, 0.05), std::invalid_argument);
  EXPECT_THROW(fit_piecewise(s, 3, -1), std::invalid_argument);
}

TEST(ModelFitPiecewise, RecoversThreeSegmentsAndFallsBackToBest) {
  auto t = [](double b) {
    if (b < 4096) return 1e-6 + b / 5e9;
    if (b < 4194304) return 4e-6 + b / 40e9;
    return 30e-6 + b / 300e9;
  };
  std::vector<Sample> s;
  for (double b : sweep_sizes()) s.push_back({b, t(b)});
  const PiecewiseFit f3 = fit_piecewise(s, 3, 0.01);
  ASSERT_EQ(f3.segments.size(), 3u);
  EXPECT_LT(rel(f3.segments[0].max_bytes, 4096), 0.02);
  EXPECT_LT(rel(f3.segments[1].max_bytes, 4194304), 0.02);
  EXPECT_LT(rel(f3.segments[0].bw_Bps, 5e9), 0.02);
  EXPECT_LT(rel(f3.segments[1].bw_Bps, 40e9), 0.02);
  EXPECT_LT(rel(f3.segments[2].bw_Bps, 300e9), 0.02);
  EXPECT_LT(f3.max_rel_err, 1e-6);
  // Only two allowed: the tolerance cannot be met, the best 2-segment fit comes back.
  const PiecewiseFit f2 = fit_piecewise(s, 2, 0.01);
  ASSERT_EQ(f2.segments.size(), 2u);
  EXPECT_GT(f2.max_rel_err, 0.01);
  EXPECT_LT(f2.max_rel_err, fit_piecewise(s, 1, 0.01).max_rel_err);
}

TEST(ModelFitPiecewise, PredictionIsContinuousAtAKnee) {
  // Continuous curve whose slope changes at 1 MiB (cache-resident vs memory-bound).
  const double knee = 1048576, t_knee = 5e-6 + knee / 20e9;
  auto t = [&](double b) { return b < knee ? 5e-6 + b / 20e9 : t_knee + (b - knee) / 10e9; };
  std::vector<Sample> s;
  for (double b : sweep_sizes()) s.push_back({b, t(b)});
  const PiecewiseFit f = fit_piecewise(s, 3, 0.01);
  ASSERT_EQ(f.segments.size(), 2u);
  const double bp = f.segments[0].max_bytes;
  EXPECT_LT(rel(bp, knee), 0.02);
  EXPECT_LT(rel(f.segments[0].c_s, 5e-6), 1e-6);
  EXPECT_LT(rel(f.segments[0].bw_Bps, 20e9), 1e-6);
  EXPECT_LT(rel(f.segments[1].bw_Bps, 10e9), 1e-6);
  // The slower upper line extrapolates to a negative intercept; only its own range matters.
  EXPECT_LT(rel(f.segments[1].c_s, t_knee - knee / 10e9), 1e-6);
  EXPECT_LT(f.segments[1].c_s, 0);
  const double below = predict_seconds(f, std::nextafter(bp, 0.0));
  const double at = predict_seconds(f, bp);
  EXPECT_LT(rel(below, at), 1e-9);  // no jump at the boundary
  // Monotone non-decreasing across the whole range, and exact at every measured size.
  double prev = 0;
  for (double b = 0; b <= 4.0 * 1073741824.0; b = b * 1.3 + 1) {
    const double p = predict_seconds(f, b);
    EXPECT_GE(p, prev) << b;
    prev = p;
  }
  for (double b : sweep_sizes()) EXPECT_LT(rel(predict_seconds(f, b), t(b)), 1e-6) << b;
}

TEST(ModelFitPiecewise, SegmentsAreContiguousAndHalfOpen) {
  std::vector<Sample> s;
  for (double b : sweep_sizes()) s.push_back({b, two_seg(b)});
  const PiecewiseFit f = fit_piecewise(s);
  ASSERT_GE(f.segments.size(), 2u);
  for (size_t i = 1; i < f.segments.size(); ++i)
    EXPECT_EQ(f.segments[i].min_bytes, f.segments[i - 1].max_bytes);
  // At the boundary the upper segment applies (min_bytes <= bytes < max_bytes).
  const auto& hi = f.segments[1];
  EXPECT_DOUBLE_EQ(predict_seconds(f, hi.min_bytes), hi.c_s + hi.min_bytes / hi.bw_Bps);
  EXPECT_LT(predict_seconds(f, std::nextafter(hi.min_bytes, 0.0)), 5e-6);  // lower segment
  // Below zero falls into the first segment (the constant).
  EXPECT_NEAR(predict_seconds(f, -1), f.segments[0].c_s, 1e-15);
}

TEST(ModelFitPiecewise, PredictRejectsEmptyFitAndHandlesInfiniteBandwidth) {
  EXPECT_THROW(predict_seconds(PiecewiseFit{}, 1024), std::invalid_argument);
  PiecewiseFit f;
  gpsm::model::Segment seg;
  seg.min_bytes = 0;
  seg.max_bytes = std::numeric_limits<double>::infinity();
  seg.c_s = 3e-6;
  seg.bw_Bps = std::numeric_limits<double>::infinity();
  seg.max_rel_err = 0;
  f.segments.push_back(seg);
  EXPECT_EQ(predict_seconds(f, 0), 3e-6);
  EXPECT_EQ(predict_seconds(f, 1e12), 3e-6);
}
