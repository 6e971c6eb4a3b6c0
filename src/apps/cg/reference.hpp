#pragma once
// The CPU reference of the CG app (plain C++, OpenMP where available): Standard and Pipelined CG
// with exactly the arithmetic of the GPU kernels (cg_math.hpp), dot products cut the way the
// plan splits the rows, so every GPU paradigm must reproduce its residual history bit for bit.
//
// Standard CG (Hestenes-Stiefel), x0 = 0, r0 = b, p_-1 = 0, beta_-1 = 0, rho_0 = (r0, r0):
//   p_k = r_k + beta_{k-1} p_{k-1};  q = A p_k;  alpha = rho_k / (p_k, q)
//   x += alpha p_k;  r_{k+1} = r_k - alpha q;  rho_{k+1} = (r, r);  beta_k = rho_{k+1} / rho_k
// Pipelined CG (Ghysels and Vanroose 2014, Algorithm 4 without preconditioner, whose u equals r
// and q equals s): w_0 = A r_0; per iteration i the reductions gamma = (r, r), delta = (w, r)
// overlap n = A w; beta = gamma / gamma_prev (0 at i = 0), alpha = gamma / (delta - beta gamma /
// alpha_prev) (gamma / delta at i = 0); z = n + beta z; s = w + beta s; p = r + beta p;
// x += alpha p; r -= alpha s; w -= alpha z.
// Both stop after `iters` iterations, when ||r|| <= threshold, or on an exact zero (a residual of
// zero, or a zero denominator), so no run ever divides by zero.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/variant.hpp"

namespace gpsm::apps {
class RefFields;  // apps/harness/reference_cache.hpp
}  // namespace gpsm::apps

namespace gpsm::apps::cg {

// ---- partitioned dot products (cg_math.hpp's order) ------------------------------------------
// Partial of chunk c of rank r over the products a_i * b_i of its rows (a, b: the rank's local
// rows, at least rows long).
double chunk_partial(const Plan& plan, int r, std::int64_t c, const double* a, const double* b);
// Every chunk's partial of rank r (a, b: global vectors).
std::vector<double> chunk_partials(const Plan& plan, int r, const std::vector<double>& a, const std::vector<double>& b);
// A rank's partial from its chunk partials (parts[c * stride + which] for c < chunks).
double rank_partial(const double* parts, std::int64_t chunks, int stride = 1, int which = 0);
// Rank partials added in rank order.
double global_sum(const std::vector<double>& rank_parts);
// The whole dot product over global vectors, as every GPU run computes it.
double partitioned_dot(const Plan& plan, const std::vector<double>& a, const std::vector<double>& b);

// What every implementation starts from.
struct Start {
  std::vector<double> b;   // A * 1
  double rho0 = 0;         // (b, b), partitioned
  double threshold = 0;    // tol * ||b||; 0: fixed iterations
  std::vector<double> w0;  // pipelined only: A * b
};
Start make_start(const Matrix& a, const Plan& plan, Variant v, double tol);

struct Solve {
  std::vector<double> rho;  // squared recurrence residual norm of iterations 0 .. iterations
  int iterations = 0;
  std::vector<double> x;    // the solution (global rows)
  double max_x_norm = 0;    // max over the iterates of ||x_j||_2 (the residual gap bound)
};
Solve reference_solve(const Matrix& a, const Plan& plan, const Start& s, Variant v, int iters);
// The solve as an entry of gpsm bench --isolate's shared references (reference_cache.hpp).
void ref_fields(RefFields& f, Solve& s);

// ---- verification (a GPU run against the reference) -------------------------------------------
struct Check {
  double history_error = 0;    // max over iterations of | ||r||_got - ||r||_ref | / ||r||_ref
  double x_error = 0;          // max |x - x_ref| / max |x_ref|
  double true_residual = 0;    // ||b - A x|| recomputed on the host from the run's x
  double solver_residual = 0;  // the run's last recurrence residual, sqrt(rho[iterations])
  double gap_bound = 0;        // what | true - solver | may be (residual_gap_bound)
  std::string failure;         // empty when the run passes
  double error() const { return history_error > x_error ? history_error : x_error; }
};
constexpr double kAgreement = 1e-10;  // history and x, relative: the same arithmetic agrees to the bit
// The gap between the true residual ||b - A x_k|| and the recurrence residual ||r_k|| that
// rounding allows. Standard CG: Greenbaum's bound, eps * O(k) * (||A|| max_j ||x_j|| + ||b||), taken
// as 10 (k + 1) eps (||A||_inf max_j ||x_j|| + ||b||). Pipelined CG: its local rounding errors are
// amplified along the recurrences (Cools et al. 2018, "Analyzing the effect of local rounding error
// propagation on the maximal attainable accuracy of the pipelined Conjugate Gradient method"), by
// an amount the matrix decides: the standard bound plus twice the gap the reference run shows.
double residual_gap_bound(Variant v, int iterations, double norm_a, double max_x_norm, double norm_b, double ref_gap);
// ||b - A x|| in long double accumulation.
double true_residual(const Matrix& a, const std::vector<double>& b, const std::vector<double>& x);
Check check_solve(const Matrix& a, const Start& s, const Solve& ref, const Solve& got, Variant v);

}  // namespace gpsm::apps::cg
