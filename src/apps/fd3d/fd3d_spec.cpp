#include "apps/fd3d/fd3d_spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace gpsm::apps::fd3d {

namespace {

// Largest extent: a cube of it is far beyond any GPU's memory, and cell counts stay well inside 64 bits.
constexpr std::int64_t kMaxExtent = 99999;

[[noreturn]] void bad(const std::string& s, const std::string& why) {
  throw std::invalid_argument("bad --size '" + s + "' for fd3d: " + why +
                              " (use N:hR[:AXES], NXxNYxNZ:hR[:AXES] or table1[:AXES]; R one of " + kHaloList +
                              ", AXES some of x, y, z; e.g. 512:h4:z)");
}

// A positive decimal count, the whole text; -1 when it is not one.
std::int64_t count(const std::string& t) {
  if (t.empty() || t.size() > 9) return -1;
  for (char c : t)
    if (c < '0' || c > '9') return -1;
  return std::strtoll(t.c_str(), nullptr, 10);
}

std::vector<std::string> split_colons(const std::string& s) {
  std::vector<std::string> parts;
  for (std::size_t b = 0;;) {
    const std::size_t e = s.find(':', b);
    parts.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return parts;
    b = e + 1;
  }
}

// "xz" -> {x, z} in x, y, z order; empty when the text is not a set of axis letters.
std::vector<Axis> axes_of(const std::string& t) {
  bool seen[3] = {false, false, false};
  for (char c : t) {
    if (c < 'x' || c > 'z' || seen[c - 'x']) return {};
    seen[c - 'x'] = true;
  }
  std::vector<Axis> v;
  for (int a = 0; a < 3; ++a)
    if (seen[a]) v.push_back(static_cast<Axis>(a));
  return v;
}

// The entry split into its size (without AXES) and its axes (empty: none given).
struct Entry {
  std::string base;
  std::vector<Axis> axes;
};
Entry split_axes(const std::string& s) {
  std::vector<std::string> parts = split_colons(s);
  Entry e;
  if (parts.size() >= 2) {
    e.axes = axes_of(parts.back());
    if (!e.axes.empty()) parts.pop_back();
  }
  for (std::size_t i = 0; i < parts.size(); ++i) e.base += (i ? ":" : "") + parts[i];
  return e;
}

}  // namespace

bool halo_compiled(int r) { return std::find(std::begin(kHalos), std::end(kHalos), r) != std::end(kHalos); }

std::string FdSize::label() const {
  std::string s = n[0] == n[1] && n[1] == n[2] ? fmt::format("{}", n[0]) : fmt::format("{}x{}x{}", n[0], n[1], n[2]);
  s += fmt::format(":h{}", radius);
  if (axis) s += std::string(":") + axis_name(*axis);
  return s;
}

FdSize parse_fd_size(const std::string& s) {
  const std::vector<std::string> parts = split_colons(s);
  if (parts.size() < 2 || parts.size() > 3) bad(s, "expected the volume and the halo");
  FdSize f;
  const std::string& dims = parts[0];
  std::vector<std::string> d{""};
  for (char c : dims) {
    if (c == 'x') d.emplace_back();
    else d.back() += c;
  }
  if (d.size() != 1 && d.size() != 3) bad(s, "the volume is not N or NXxNYxNZ");
  for (int a = 0; a < 3; ++a) {
    f.n[a] = count(d[d.size() == 1 ? 0 : a]);
    if (f.n[a] < 1) bad(s, "the volume is not N or NXxNYxNZ with positive counts");
    if (f.n[a] > kMaxExtent) bad(s, fmt::format("an extent past {}", kMaxExtent));
  }
  const std::string& h = parts[1];
  const std::int64_t r = h.size() >= 2 && h[0] == 'h' ? count(h.substr(1)) : -1;
  if (r < 0) bad(s, fmt::format("'{}' is not a halo hR", h));
  if (!halo_compiled(static_cast<int>(r)))
    bad(s, fmt::format("halo {} is not one the kernels are compiled for", r));
  f.radius = static_cast<int>(r);
  for (int a = 0; a < 3; ++a)
    if (f.n[a] < 2 * f.radius + 1)
      bad(s, fmt::format("extent {} leaves no interior inside a boundary layer of {} cells (need >= {})", f.n[a],
                         f.radius, 2 * f.radius + 1));
  if (parts.size() == 3) {
    const std::vector<Axis> ax = axes_of(parts[2]);
    if (ax.size() != 1) bad(s, fmt::format("'{}' is not one axis x, y or z", parts[2]));
    f.axis = ax[0];
  }
  return f;
}

std::vector<std::string> expand_fd_size(const std::string& entry) {
  const Entry e = split_axes(entry);
  std::vector<std::string> bases;
  if (e.base != "table1" && e.base.rfind("table1:", 0) == 0)
    bad(entry, fmt::format("'{}' after table1 is not a set of axes", e.base.substr(7)));
  if (e.base == "table1") {
    for (int n : {128, 512, 768})
      for (int r : kHalos) bases.push_back(fmt::format("{}:h{}", n, r));
  } else {
    bases.push_back(e.base);
  }
  std::vector<std::string> out;
  for (const std::string& b : bases) {
    if (e.axes.empty()) {
      out.push_back(parse_fd_size(b).label());
      continue;
    }
    for (Axis a : e.axes) out.push_back(parse_fd_size(b + ":" + axis_name(a)).label());
  }
  return out;
}

}  // namespace gpsm::apps::fd3d
