#include "apps/graph/graph_spec.hpp"
#include "common/memory_budget.hpp"
#include "common/split.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "gpsm/error.hpp"

namespace gpsm::apps::graph {
namespace {

constexpr const char* kForms =
    "use rmat:S[:EF], road:N or road:NXxNY, ratings:U[xI[xP]] or a .mtx / SNAP file path, optionally followed by "
    "@nnz (nnz-balanced rows) and @tol=X (PageRank tolerance)";

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument("bad graph '" + text + "': " + why + " (" + kForms + ")");
}

// Digits only, 1 .. max.
std::int64_t number(const std::string& text, const std::string& s, std::int64_t max) {
  if (s.empty() || s.size() > 12 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    bad(text, "'" + s + "' is not a positive integer");
  const std::int64_t v = std::stoll(s);
  if (v < 1 || v > max) bad(text, "'" + s + "' is outside 1.." + std::to_string(max));
  return v;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

std::string GraphSpec::base() const {
  switch (kind) {
    case GraphKind::rmat: return "rmat:" + std::to_string(scale) + (edge_factor != 16 ? ":" + std::to_string(edge_factor) : "");
    case GraphKind::road: return "road:" + std::to_string(nx) + "x" + std::to_string(ny);
    case GraphKind::ratings:
      return "ratings:" + std::to_string(users) + "x" + std::to_string(items) + "x" + std::to_string(per_user);
    case GraphKind::file: return path;
  }
  return "?";
}

GraphSpec parse_graph_spec(const std::string& text) {
  GraphSpec g;
  const std::vector<std::string> parts = split_fields(text, '@');
  const std::string& b = parts[0];
  if (b.empty()) bad(text, "no graph named");
  constexpr std::int64_t kMaxIds = 2147483647;  // int32 column ids
  if (starts_with(b, "rmat:")) {
    const auto f = split_fields(b.substr(5), ':');
    if (f.size() > 2) bad(text, "rmat takes a scale and an optional edge factor");
    g.kind = GraphKind::rmat;
    g.scale = static_cast<int>(number(text, f[0], 30));
    if (f.size() == 2) g.edge_factor = static_cast<int>(number(text, f[1], 1024));
  } else if (starts_with(b, "road:")) {
    const auto f = split_fields(b.substr(5), 'x');
    if (f.size() > 2) bad(text, "road takes N or NXxNY");
    g.kind = GraphKind::road;
    g.nx = number(text, f[0], 1 << 20);
    g.ny = f.size() == 2 ? number(text, f[1], 1 << 20) : g.nx;
    if (g.nx * g.ny > kMaxIds) bad(text, "more vertices than int32 ids hold");
    if (g.nx * g.ny < 2) bad(text, "a road grid needs at least 2 vertices");
  } else if (starts_with(b, "ratings:")) {
    const auto f = split_fields(b.substr(8), 'x');
    if (f.size() > 3) bad(text, "ratings takes U, UxI or UxIxP");
    g.kind = GraphKind::ratings;
    g.users = number(text, f[0], kMaxIds);
    g.items = f.size() >= 2 ? number(text, f[1], kMaxIds) : std::max<std::int64_t>(1, g.users / 10);
    if (f.size() == 3) g.per_user = number(text, f[2], 1 << 20);
  } else {
    g.kind = GraphKind::file;
    g.path = b;
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& o = parts[i];
    if (o == "nnz") {
      g.balance_nnz = true;
    } else if (starts_with(o, "tol=")) {
      std::size_t used = 0;
      try {
        g.tol = std::stod(o.substr(4), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != o.size() - 4 || !(g.tol > 0)) bad(text, "'" + o + "' needs a positive number");
    } else {
      bad(text, "unknown option '@" + o + "'");
    }
  }
  return g;
}

double graph_build_host_bytes(const GraphSpec& s) {
  constexpr double kEntry = sizeof(graph_io::Entry);  // 12 B
  switch (s.kind) {
    case GraphKind::rmat: {
      // rmat(): the vertex permutation (4 B), the drawn entries, then csr_from_entries' entries and
      // their row-sorted copy with row_ptr and its cursor (8 B each per vertex). The CSR's col and
      // val come after the entries are freed (weighted or not changes nothing at the peak).
      const double n = double(std::int64_t{1} << s.scale), m = n * s.edge_factor;
      return 2.0 * kEntry * m + (4.0 + 8.0 + 8.0) * n;
    }
    case GraphKind::road: {
      // grid2d(): entries reserved for 4 per vertex, the row-sorted copy of the ones drawn (both
      // directions of every grid edge), row_ptr and its cursor.
      const double n = double(s.nx) * double(s.ny);
      const double m = 2.0 * (double(s.nx - 1) * double(s.ny) + double(s.nx) * double(s.ny - 1));
      return kEntry * (4.0 * n + 16) + kEntry * m + 16.0 * n;
    }
    case GraphKind::ratings: {
      // ratings(): the item factors (rank 8 floats per item), row_ptr, col and val (4 B each per rating).
      const double k = double(std::min(s.per_user, s.items)), m = double(s.users) * k;
      const graph_io::RatingParams defaults;
      return 4.0 * double(defaults.rank) * double(s.items) + 8.0 * double(s.users) + 8.0 * m;
    }
    case GraphKind::file: return 0;
  }
  return 0;
}

graph_io::Csr build_graph(const GraphSpec& s, bool weighted, std::uint64_t seed) {
  require_host_memory(graph_build_host_bytes(s), "generating graph " + s.base(),
                      "use a smaller graph (docs/graphs.md)");
  switch (s.kind) {
    case GraphKind::rmat: {
      graph_io::RmatParams p;
      p.scale = s.scale;
      p.edge_factor = s.edge_factor;
      p.seed = seed;
      p.weighted = weighted;
      return graph_io::rmat(p);
    }
    case GraphKind::road: {
      graph_io::GridParams p;
      p.nx = s.nx;
      p.ny = s.ny;
      p.seed = seed;
      return graph_io::grid2d(p);
    }
    case GraphKind::ratings: {
      graph_io::RatingParams p;
      p.users = s.users;
      p.items = s.items;
      p.per_user = s.per_user;
      p.seed = seed;
      return graph_io::ratings(p);
    }
    case GraphKind::file: {
      graph_io::Csr m = graph_io::load_graph(s.path);
      if (weighted && !m.weighted()) m.val.assign(m.col.size(), 1.0f);
      return m;
    }
  }
  throw std::logic_error("build_graph: unknown kind");
}

graph_io::Csr build_square_graph(const GraphSpec& s, bool weighted, std::uint64_t seed, const char* app) {
  graph_io::Csr g = build_graph(s, weighted, seed);
  if (g.rows != g.cols) throw gpsm::Error(fmt::format("{}: {} is {} x {}, not square", app, s.base(), g.rows, g.cols));
  return g;
}

}  // namespace gpsm::apps::graph
