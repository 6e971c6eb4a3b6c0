#include "scope/text_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "scope/remote_study.hpp"

namespace gpsm::scope {

int gpu_index(const std::string& node) {
  if (node.rfind("gpu", 0) != 0 || node.size() < 4) return -1;
  for (size_t i = 3; i < node.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(node[i]))) return -1;
  return std::stoi(node.substr(3));
}

namespace {

std::string param(const Series& s, const std::string& k) {
  auto it = s.params.find(k);
  return it == s.params.end() ? std::string() : it->second;
}

const Point* point_at(const Series& s, double x) {
  const Point* best = nullptr;
  for (const auto& p : s.points)
    if (!best || std::fabs(p.x - x) < std::fabs(best->x - x)) best = &p;
  return best;
}

// A table cell: two decimals, or three significant digits below 0.1 (lat_hot_word's
// sub-nanosecond times in us would all read 0.00).
std::string value_cell(double v, int width) {
  return v != 0 && std::fabs(v) < 0.1 ? fmt::format("{:>{}.3g}", v, width) : fmt::format("{:>{}.2f}", v, width);
}

std::string xlabel(const std::string& x_name, double x) {
  if (x_name == "bytes") return format_size(static_cast<std::uint64_t>(x));
  if (x_name == "bytes_per_line") return fmt::format("{}B/line", x);
  if (x_name == "vector_bytes") return fmt::format("{}B vec", x);
  if (x_name == "blocks") return fmt::format("{} blk", x);
  return fmt::format("{}", x);
}

// Matrix of medians for GPU->GPU series of one direction; empty if not applicable.
std::string matrix(const TestResult& t, const std::string& direction, double x) {
  std::map<std::pair<int, int>, double> cell;
  std::set<int> gpus;
  for (const auto& s : t.series) {
    if (param(s, "direction") != direction) continue;
    const int a = gpu_index(param(s, "src")), b = gpu_index(param(s, "dst"));
    if (a < 0 || b < 0) return {};
    const Point* p = point_at(s, x);
    if (!p) continue;
    cell[{a, b}] = p->value.median;
    gpus.insert(a);
    gpus.insert(b);
  }
  if (cell.empty()) return {};
  const Point* any = point_at(t.series.front(), x);
  std::string out = fmt::format("  {} {} ({}, median {}): row = src, column = dst\n", t.name, direction, t.unit,
                                any ? xlabel(t.x_name, any->x) : "");
  out += "        ";
  for (int b : gpus) out += fmt::format("{:>9}", b);
  out += "\n";
  for (int a : gpus) {
    out += fmt::format("  {:>6}", a);
    for (int b : gpus) {
      auto it = cell.find({a, b});
      out += it == cell.end() ? fmt::format("{:>9}", "-") : value_cell(it->second, 9);
    }
    out += "\n";
  }
  return out;
}

std::string render_generic(const TestResult& t, double peak_x) {
  std::string out = fmt::format("{} [{}] {}\n", t.name, t.group, t.description);
  if (t.status != Status::ok) {
    out += fmt::format("  {}: {}\n", t.status == Status::waived ? "WAIVED" : "FAILED", t.reason);
    return out;
  }
  if (t.series.empty()) return out + "  (no data)\n";
  // GPU pair matrices where they apply (bandwidth at the peak size)
  std::string m;
  if (t.unit == "GB/s" && t.x_name == "bytes") {
    m += matrix(t, "uni", peak_x);
    m += matrix(t, "bidir", peak_x);
  }
  if (!m.empty()) return out + m;
  // otherwise: one row per series, a column per x (at most 8 shown: ends and evenly spaced)
  std::vector<double> xs;
  for (const auto& s : t.series)
    for (const auto& p : s.points) xs.push_back(p.x);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  if (xs.size() > 8) {
    std::vector<double> pick;
    for (int i = 0; i < 8; ++i) pick.push_back(xs[i * (xs.size() - 1) / 7]);
    xs = pick;
  }
  size_t w = 10;
  for (const auto& s : t.series) w = std::max(w, s.label.size() + 2);
  if (t.x_name == "none") {
    out += fmt::format("  {:<{}}{:>12}{:>12}{:>12}\n", "", w, "median " + t.unit, "min", "max");
    for (const auto& s : t.series) {
      const auto& v = s.points.front().value;
      out += fmt::format("  {:<{}}{:>12.3f}{:>12.3f}{:>12.3f}\n", s.label, w, v.median, v.min, v.max);
    }
    return out;
  }
  out += fmt::format("  {:<{}}", "median " + t.unit, w);
  for (double x : xs) out += fmt::format("{:>11}", xlabel(t.x_name, x));
  out += "\n";
  for (const auto& s : t.series) {
    out += fmt::format("  {:<{}}", s.label, w);
    for (double x : xs) {
      const Point* p = nullptr;
      for (const auto& q : s.points)
        if (q.x == x) p = &q;
      out += p ? value_cell(p->value.median, 11) : fmt::format("{:>11}", "-");
    }
    out += "\n";
  }
  return out;
}

}  // namespace

// The generic table, then a study test's own (the slowdowns the GPU-SM paper plots).
std::string render_test(const TestResult& t, double peak_x) {
  return render_generic(t, peak_x) + remote::render_study_table(t);
}

}  // namespace gpsm::scope
