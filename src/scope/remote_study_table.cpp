// The remote-access study's own terminal tables: the slowdowns of H3 and H4 (the figure the
// GPU-SM paper plots, not the raw times the generic table shows) and H5's cache ratios.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/sizes.hpp"
#include "scope/remote_study.hpp"

namespace gpsm::scope::remote {

namespace {

std::string slowdown_table(const TestResult& t, double tolerance) {
  std::vector<double> xs;
  std::size_t w = 10;
  for (const auto& s : t.series) {
    for (const auto& p : s.points) xs.push_back(p.x);
    w = std::max(w, s.label.size() + 2);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::string out = fmt::format("  slowdown (time / the series' all-local time) by % of remote accesses; "
                                "* = below {:.0f} %, hidden up to:\n",
                                tolerance * 100);
  out += fmt::format("  {:<{}}", "", w);
  for (double x : xs) out += fmt::format("{:>8}", fmt::format("{:g}%", x));
  out += fmt::format("{:>9}\n", "hidden");
  for (const auto& s : t.series) {
    const auto sl = slowdowns(s);
    out += fmt::format("  {:<{}}", s.label, w);
    std::vector<model::RemoteSlowdownPoint> pts;
    for (double x : xs) {
      std::string cell = "-";
      for (std::size_t i = 0; i < s.points.size() && !sl.empty(); ++i)
        if (s.points[i].x == x) {
          cell = fmt::format("{:.2f}{}", sl[i], sl[i] < 1 + tolerance ? "*" : " ");
          pts.push_back({x, sl[i]});
        }
      out += fmt::format("{:>8}", cell);
    }
    out += sl.empty() ? fmt::format("{:>9}\n", "-") : fmt::format("{:>8g}%\n", hidden_percent(pts, tolerance));
  }
  return out;
}

std::string cache_table(const TestResult& t) {
  // rows: structure sizes; columns: ldcg / ldg per occupancy (how much the read-only cache saves)
  std::map<std::string, std::map<double, double>> ldg, ldcg;  // occupancy text -> bytes -> us
  std::vector<double> sizes;
  for (const auto& s : t.series) {
    auto it = s.params.find("where");
    if (it == s.params.end() || it->second != "remote") continue;
    const std::string occ = s.params.count("occupancy") ? s.params.at("occupancy") : "?";
    const std::string read = s.params.count("read") ? s.params.at("read") : "";
    for (const auto& p : s.points) {
      (read == "ldg" ? ldg : ldcg)[occ][p.x] = p.value.median;
      sizes.push_back(p.x);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::string out = "  remote reads without / with the read-only cache (ldcg time / ldg time), by occupancy:\n";
  out += fmt::format("  {:<10}", "structure");
  for (const auto& [occ, m] : ldg) out += fmt::format("{:>14}", "occ " + occ);
  out += "\n";
  for (double b : sizes) {
    out += fmt::format("  {:<10}", format_size(static_cast<std::uint64_t>(b)));
    for (const auto& [occ, m] : ldg) {
      auto a = m.find(b);
      auto c = ldcg[occ].find(b);
      out += (a != m.end() && c != ldcg[occ].end() && a->second > 0) ? fmt::format("{:>13.2f}x", c->second / a->second)
                                                                     : fmt::format("{:>14}", "-");
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_study_table(const TestResult& t) {
  if (t.status != Status::ok || t.series.empty()) return "";
  if (t.name == kIntensity || t.name == kOccupancy) return slowdown_table(t, 0.10);
  if (t.name == kCache) return cache_table(t);
  return "";
}

}  // namespace gpsm::scope::remote
