#include "apps/graph/graph_refs.hpp"

#include <cmath>
#include <limits>

#include "gpsm/error.hpp"
#include "apps/harness/reference_cache.hpp"
#include "common/omp.hpp"
#include "common/splitmix.hpp"

namespace gpsm::apps::graph {

std::vector<float> inverse_out_degree(const graph_io::Csr& g) {
  std::vector<float> inv(static_cast<std::size_t>(g.rows), 0.0f);
  for (std::int64_t u = 0; u < g.rows; ++u)
    if (g.row_nnz(u) > 0) inv[u] = 1.0f / static_cast<float>(g.row_nnz(u));
  return inv;
}

double pagerank_step(const graph_io::Csr& in, const std::vector<float>& inv_deg, const std::vector<float>& x,
                     std::vector<float>& y) {
  const std::int64_t n = in.rows;
  const float base = (1.0f - kDamping) / static_cast<float>(n);
  double change = 0;
  GPSM_OMP(parallel for schedule(dynamic, 1024) reduction(+ : change))
  for (std::int64_t v = 0; v < n; ++v) {
    double sum = 0;
    for (std::int64_t e = in.row_ptr[v]; e < in.row_ptr[v + 1]; ++e)
      sum += static_cast<double>(x[in.col[e]]) * inv_deg[in.col[e]];
    y[v] = base + kDamping * static_cast<float>(sum);
    change += std::fabs(static_cast<double>(y[v]) - x[v]);
  }
  return change;
}

double l1_distance(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::fabs(static_cast<double>(a[i]) - b[i]);
  return std::isnan(s) ? std::numeric_limits<double>::infinity() : s;
}

PageRankResult pagerank_reference(const graph_io::Csr& in, const std::vector<float>& inv_deg, int iters, double tol) {
  if (in.rows != in.cols) throw Error("pagerank: the graph must be square (" + std::to_string(in.rows) + " x " +
                                      std::to_string(in.cols) + ")");
  PageRankResult r;
  std::vector<float> x(static_cast<std::size_t>(in.rows), 1.0f / static_cast<float>(in.rows)), y(x.size());
  for (int it = 0; it < iters; ++it) {
    const double change = pagerank_step(in, inv_deg, x, y);
    x.swap(y);
    r.iterations = it + 1;
    if (tol > 0 && change <= tol) break;
  }
  r.rank = std::move(x);
  return r;
}

std::int64_t sssp_source(const graph_io::Csr& g) {
  std::int64_t best = 0;
  for (std::int64_t u = 1; u < g.rows; ++u)
    if (g.row_nnz(u) > g.row_nnz(best)) best = u;
  return best;
}

bool sssp_step(const graph_io::Csr& in, const std::vector<float>& x, std::vector<float>& y) {
  int changed = 0;
  GPSM_OMP(parallel for schedule(dynamic, 1024) reduction(| : changed))
  for (std::int64_t v = 0; v < in.rows; ++v) {
    float d = x[v];
    for (std::int64_t e = in.row_ptr[v]; e < in.row_ptr[v + 1]; ++e) d = std::fmin(d, x[in.col[e]] + in.val[e]);
    y[v] = d;
    changed |= d < x[v] ? 1 : 0;
  }
  return changed != 0;
}

SsspResult sssp_reference(const graph_io::Csr& in, std::int64_t source, int cap) {
  if (in.rows != in.cols || !in.weighted()) throw Error("sssp: the graph must be square and weighted");
  if (source < 0 || source >= in.rows) throw Error("sssp: source " + std::to_string(source) + " out of range");
  SsspResult r;
  std::vector<float> x(static_cast<std::size_t>(in.rows), std::numeric_limits<float>::infinity()), y(x.size());
  x[source] = 0;
  for (int it = 0; it < cap; ++it) {
    const bool changed = sssp_step(in, x, y);
    x.swap(y);
    r.iterations = it + 1;
    if (!changed) {
      r.converged = true;
      break;
    }
  }
  r.dist = std::move(x);
  return r;
}


std::vector<float> sgd_initial(std::int64_t rows, int k, std::uint64_t seed, int stream) {
  std::vector<float> v(static_cast<std::size_t>(rows) * k);
  const float scale = std::sqrt(12.0f / static_cast<float>(k));
  const std::uint64_t base = splitmix64(seed ^ (static_cast<std::uint64_t>(stream) << 56));
  GPSM_OMP(parallel for)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(v.size()); ++i)
    v[i] = scale * static_cast<float>(splitmix64(base + static_cast<std::uint64_t>(i)) >> 40) * (1.0f / 16777216.0f);
  return v;
}

void sgd_half_step(const graph_io::Csr& ratings, std::vector<float>& own, const std::vector<float>& other,
                   const SgdParams& p) {
  const int k = p.rank;
  GPSM_OMP(parallel for schedule(dynamic, 256))
  for (std::int64_t u = 0; u < ratings.rows; ++u) {
    float* pu = own.data() + u * k;
    for (std::int64_t e = ratings.row_ptr[u]; e < ratings.row_ptr[u + 1]; ++e) {
      const float* q = other.data() + static_cast<std::int64_t>(ratings.col[e]) * k;
      float pred = 0;
      for (int f = 0; f < k; ++f) pred += pu[f] * q[f];
      const float err = ratings.val[e] - pred;
      for (int f = 0; f < k; ++f) pu[f] += p.lr * (err * q[f] - p.lambda * pu[f]);
    }
  }
}

double rmse(const graph_io::Csr& ratings, const std::vector<float>& users, const std::vector<float>& items, int k) {
  double sum = 0;
  GPSM_OMP(parallel for schedule(dynamic, 1024) reduction(+ : sum))
  for (std::int64_t u = 0; u < ratings.rows; ++u)
    for (std::int64_t e = ratings.row_ptr[u]; e < ratings.row_ptr[u + 1]; ++e) {
      const float* a = users.data() + u * k;
      const float* b = items.data() + static_cast<std::int64_t>(ratings.col[e]) * k;
      double pred = 0;
      for (int f = 0; f < k; ++f) pred += static_cast<double>(a[f]) * b[f];
      const double err = ratings.val[e] - pred;
      sum += err * err;
    }
  const double r = std::sqrt(sum / static_cast<double>(std::max<std::int64_t>(1, ratings.nnz())));
  return std::isnan(r) ? std::numeric_limits<double>::infinity() : r;
}

SgdResult sgd_reference(const graph_io::Csr& ratings, const graph_io::Csr& by_item, const SgdParams& p, int epochs) {
  if (!ratings.weighted()) throw Error("als: the rating matrix has no values");
  SgdResult r;
  r.users = sgd_initial(ratings.rows, p.rank, p.seed, 0);
  r.items = sgd_initial(ratings.cols, p.rank, p.seed, 1);
  r.initial_rmse = rmse(ratings, r.users, r.items, p.rank);
  for (int e = 0; e < epochs; ++e) {
    sgd_half_step(ratings, r.users, r.items, p);
    sgd_half_step(by_item, r.items, r.users, p);
  }
  r.rmse = rmse(ratings, r.users, r.items, p.rank);
  return r;
}

void ref_fields(RefFields& f, PageRankResult& r) {
  f.array(r.rank);
  f.value(r.iterations);
}
void ref_fields(RefFields& f, SsspResult& r) {
  f.array(r.dist);
  f.value(r.iterations);
  f.value(r.converged);
}
void ref_fields(RefFields& f, SgdResult& r) {
  f.array(r.users);
  f.array(r.items);
  f.value(r.rmse);
  f.value(r.initial_rmse);
}

}  // namespace gpsm::apps::graph
