#include "apps/graph/graph_spec.hpp"
#include "common/split.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

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

graph_io::Csr build_graph(const GraphSpec& s, bool weighted, std::uint64_t seed) {
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

}  // namespace gpsm::apps::graph
