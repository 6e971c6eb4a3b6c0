#pragma once
// CPU references of the graph apps (plain C++, OpenMP where built with it), the arithmetic the
// GPU kernels (graph_kernels.cu) repeat:
//   PageRank, pull form over in-edges (the transpose): y[v] = (1 - d) / N + d * sum_{u -> v} x[u] / outdeg(u)
//     with d = 0.85, x0 = 1 / N; dangling vertices' rank is not redistributed (as GAP's pr.cc).
//   SSSP, Bellman-Ford as min-plus SpMV (Jacobi form): y[v] = min(x[v], min_{u -> v} x[u] + w(u, v)),
//     float adds, +inf unreached; exact on any number of GPUs (min and one add per term).
//   Matrix factorization by SGD in alternating half-steps: each user row walks its ratings in
//     column order updating only its own factor (items fixed), then each item row the same over
//     the transpose (users fixed); no two threads ever write one factor, so the result does not
//     depend on the GPU count.
#include <cstdint>
#include <vector>

#include "apps/graph_io/graph.hpp"

namespace gpsm::apps {
class RefFields;  // apps/harness/reference_cache.hpp
}  // namespace gpsm::apps

namespace gpsm::apps::graph {

constexpr float kDamping = 0.85f;

// 1 / outdeg(u), 0 where u has no out-edges.
std::vector<float> inverse_out_degree(const graph_io::Csr& g);

struct PageRankResult {
  std::vector<float> rank;
  int iterations = 0;
};
// in: the in-edge CSR (transpose of the graph). tol > 0: stop after the first iteration whose
// L1 change sum |y - x| is <= tol (it counts); else run exactly `iters`.
PageRankResult pagerank_reference(const graph_io::Csr& in, const std::vector<float>& inv_deg, int iters, double tol);
// One iteration (the step the reference repeats); returns the L1 change.
double pagerank_step(const graph_io::Csr& in, const std::vector<float>& inv_deg, const std::vector<float>& x,
                     std::vector<float>& y);
double l1_distance(const std::vector<float>& a, const std::vector<float>& b);

struct SsspResult {
  std::vector<float> dist;
  int iterations = 0;      // iterations run, the last (no change) one included when converged
  bool converged = false;  // an iteration changed nothing
};
// The lowest-id vertex of the largest out-degree (a source that reaches much of an R-MAT graph).
std::int64_t sssp_source(const graph_io::Csr& g);
// in: the weighted in-edge CSR. Runs until an iteration changes nothing or `cap` iterations.
SsspResult sssp_reference(const graph_io::Csr& in, std::int64_t source, int cap);
// One iteration; returns whether any distance dropped.
bool sssp_step(const graph_io::Csr& in, const std::vector<float>& x, std::vector<float>& y);

struct SgdParams {
  int rank = 16;  // factor length k
  float lr = 0.01f, lambda = 0.05f;
  std::uint64_t seed = 1;
};
// rows x k factors, uniform in [0, sqrt(12 / k)) from a hash of (seed, stream, index), so a
// product of a user and an item factor starts near 3.
std::vector<float> sgd_initial(std::int64_t rows, int k, std::uint64_t seed, int stream);
// Each row of `ratings` (rows: the factors in `own`) walks its entries in order:
// e = r - p.q; p += lr (e q - lambda p) component by component; `other` is read only.
void sgd_half_step(const graph_io::Csr& ratings, std::vector<float>& own, const std::vector<float>& other,
                   const SgdParams& p);
// Root mean square error of p_u . q_i against the ratings (users x items CSR).
double rmse(const graph_io::Csr& ratings, const std::vector<float>& users, const std::vector<float>& items, int k);

struct SgdResult {
  std::vector<float> users, items;
  double rmse = 0, initial_rmse = 0;
};
// epochs x (user half-step over `ratings`, item half-step over `by_item` = its transpose).
SgdResult sgd_reference(const graph_io::Csr& ratings, const graph_io::Csr& by_item, const SgdParams& p, int epochs);

// The results as entries of gpsm bench --isolate's shared references (reference_cache.hpp).
void ref_fields(RefFields& f, PageRankResult& r);
void ref_fields(RefFields& f, SsspResult& r);
void ref_fields(RefFields& f, SgdResult& r);

}  // namespace gpsm::apps::graph
