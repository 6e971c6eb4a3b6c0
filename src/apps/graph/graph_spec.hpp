#pragma once
// What a graph app's --size names (docs/graphs.md "Graph apps"): a generated graph or a file,
// plus options after '@':
//   rmat:S[:EF]       R-MAT, 2^S vertices, EF (default 16) edges drawn per vertex (Graph500 a,b,c)
//   road:N | road:NXxNY   road-like 4-neighbour grid, weights in [1, 100)
//   ratings:U[xI[xP]] U users, I items (default U / 10), P ratings per user (default 20)
//   PATH              a Matrix Market (.mtx) or SNAP edge-list file (cached as PATH.gpsmcsr)
//   @nnz              rows split across GPUs by nnz instead of equal row counts
//   @tol=X            PageRank: stop when the L1 change of an iteration is <= X (iterations: cap)
// Plain C++ (CPU-tested).
#include <cstdint>
#include <string>

#include "apps/graph_io/graph.hpp"

namespace gpsm::apps::graph {

enum class GraphKind { rmat, road, ratings, file };

struct GraphSpec {
  GraphKind kind = GraphKind::rmat;
  int scale = 0, edge_factor = 16;          // rmat
  std::int64_t nx = 0, ny = 0;              // road
  std::int64_t users = 0, items = 0, per_user = 20;  // ratings
  std::string path;                         // file
  bool balance_nnz = false;                 // @nnz
  double tol = 0;                           // @tol=X; 0: fixed iterations
  std::string base() const;                 // the text before the first '@'
};

// Throws std::invalid_argument naming the bad text and the accepted forms.
GraphSpec parse_graph_spec(const std::string& text);

// Peak host bytes of building the generated graph s (build_graph): rmat and road build 12-B
// entries, then csr_from_entries holds them and their row-sorted copy with two row arrays;
// ratings fills the CSR directly. 0 for a file: the readers check their headers themselves.
double graph_build_host_bytes(const GraphSpec& s);

// The graph (rows = sources / users). Refuses (gpsm::Error with the figure, require_host_memory) a
// generated graph whose build does not fit the host's memory. weighted: rmat draws weights in [1, 100); road is always
// weighted; a file without weights gets weight 1 where weighted is asked. seed: generators' seed.
graph_io::Csr build_graph(const GraphSpec& s, bool weighted, std::uint64_t seed);
// build_graph for an app over the vertices (pagerank, sssp): a graph that is not square is
// refused, gpsm::Error "app: <graph> is R x C, not square".
graph_io::Csr build_square_graph(const GraphSpec& s, bool weighted, std::uint64_t seed, const char* app);

}  // namespace gpsm::apps::graph
