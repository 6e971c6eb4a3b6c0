// Example 5: a user's Matrix Market system A x = b solved by a CPU-free conjugate gradient on GPS
// memory: one persistent kernel per GPU for the whole solve, no host round trip per iteration.
//
//   ./example_05_cg_matrix_market [FILE.mtx] [--gpus N] [--iters K] [--tol T]
//
// FILE: a square, symmetric positive definite matrix in Matrix Market coordinate format (real,
// integer or pattern; general or symmetric), as SuiteSparse ships them. Without FILE the example
// solves a 2D 5-point Poisson matrix on a 256 x 256 grid. b = A*1, x0 = 0; the solve stops after
// K iterations (default 5000) or when the relative residual falls below T (default 1e-8).
//
// Rows are split in contiguous blocks over the GPUs. The search direction p is a GPS array: the
// SpMV of each GPU gathers p by global column from its replica, and each GPU's stores of its own
// rows of p are published, inline, to the GPUs that read them. Which GPUs those are is learned
// by running one iteration between Context::tracking_start() and tracking_stop(), as example 2
// does. Dot products are reduced across GPUs by the device fence (DeviceFence::arrive_and_reduce)
// in a fixed order, so every GPU gets the same bits and takes the same branch.
// At the end the host recomputes ||b - A x|| / ||b|| in double from the CSR and compares it with
// the solver's own residual.
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"

using gpsm::gps::Context;
using gpsm::gps::DeviceFence;
using gpsm::gps::View;

[[noreturn]] static void fail(const std::string& what, const std::string& why, int code = example::kBadArguments) {
  std::fprintf(stderr, "example 05: %s: %s\n", what.c_str(), why.c_str());
  std::exit(code);
}

// ---- The matrix on the host: CSR, columns sorted, duplicates summed ----------------------------
struct Csr {
  std::int64_t n = 0;
  std::vector<std::int64_t> ptr;
  std::vector<std::int32_t> col;
  std::vector<double> val;
};

struct Entry {  // one coordinate of the file, 0-based
  std::int64_t i, j;
  double v;
};

static Csr to_csr(std::int64_t n, std::vector<Entry> e) {
  std::sort(e.begin(), e.end(), [](const Entry& u, const Entry& v) { return u.i != v.i ? u.i < v.i : u.j < v.j; });
  Csr a;
  a.n = n;
  a.ptr.assign(n + 1, 0);
  for (std::size_t k = 0; k < e.size(); ++k) {
    if (k > 0 && e[k].i == e[k - 1].i && e[k].j == e[k - 1].j) {
      a.val.back() += e[k].v;  // Matrix Market: repeated coordinates add up
      continue;
    }
    a.col.push_back(static_cast<std::int32_t>(e[k].j));
    a.val.push_back(e[k].v);
    ++a.ptr[e[k].i + 1];
  }
  for (std::int64_t i = 0; i < n; ++i) a.ptr[i + 1] += a.ptr[i];
  return a;
}

// Reads the next number of a line into v; false when there is none or it is not a number.
template <class T>
static bool next(const char*& s, T& v) {
  char* end = nullptr;
  errno = 0;
  bool ok = true;
  if constexpr (std::is_same_v<T, double>) {
    v = std::strtod(s, &end);
    ok = std::isfinite(v);  // "inf", "nan", 1e999: not a matrix entry
  } else {
    v = std::strtoll(s, &end, 10);
    ok = errno == 0;
  }
  if (!ok || end == s || (*end != '\0' && !std::isspace(static_cast<unsigned char>(*end)))) return false;
  s = end;
  return true;
}
static std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.10g", v);
  return b;
}
static bool blank(const char* s) {
  while (std::isspace(static_cast<unsigned char>(*s))) ++s;
  return *s == '\0';
}

static Csr read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string line, banner, object, format, field, symmetry;
  std::getline(in, line);
  std::string low = line;
  for (char& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::istringstream(low) >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket" || object != "matrix")
    fail(path, "not a Matrix Market file (line 1 is '" + line.substr(0, 60) + "')");
  if (format != "coordinate") fail(path, "format '" + format + "': only the sparse coordinate format is read");
  if (field != "real" && field != "integer" && field != "pattern")
    fail(path, "field '" + field + "': only real, integer or pattern (CG here is real)");
  if (symmetry != "general" && symmetry != "symmetric")
    fail(path, "symmetry '" + symmetry + "': only general or symmetric (CG needs a symmetric matrix)");
  const bool pattern = field == "pattern", symmetric = symmetry == "symmetric";

  long long lineno = 1, rows = 0, cols = 0, nnz = 0;
  while (std::getline(in, line) && (++lineno, line.empty() || line[0] == '%' || blank(line.c_str()))) {
  }
  const char* s = line.c_str();
  if (!in || !next(s, rows) || !next(s, cols) || !next(s, nnz) || !blank(s))
    fail(path, "line " + std::to_string(lineno) + ": expected the size line 'ROWS COLS NONZEROS'");
  if (rows != cols) fail(path, "the matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ": CG needs a square one");
  if (rows < 1 || rows > INT32_MAX || nnz < 1 || nnz > rows * rows) fail(path, "line " + std::to_string(lineno) + ": sizes out of range");

  std::vector<Entry> e;
  e.reserve(static_cast<std::size_t>(symmetric ? 2 * nnz : nnz));
  long long read = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '%' || blank(line.c_str())) continue;
    const std::string at = "line " + std::to_string(lineno);
    if (read == nnz) fail(path, at + ": more entries than the " + std::to_string(nnz) + " the size line declares");
    long long i = 0, j = 0;
    double v = 1.0;  // pattern: every stored entry is 1
    s = line.c_str();
    if (!next(s, i) || !next(s, j) || (!pattern && !next(s, v)) || !blank(s))
      fail(path, at + ": expected 'ROW COL" + (pattern ? "'" : " VALUE'") + ", got '" + line.substr(0, 60) + "'");
    if (i < 1 || i > rows || j < 1 || j > cols)
      fail(path, at + ": index (" + std::to_string(i) + ", " + std::to_string(j) + ") outside 1.." + std::to_string(rows));
    if (symmetric && j > i) fail(path, at + ": entry above the diagonal in a symmetric file (only the lower triangle is stored)");
    e.push_back({i - 1, j - 1, v});
    if (symmetric && i != j) e.push_back({j - 1, i - 1, v});
    ++read;
  }
  if (read != nnz) fail(path, "the size line declares " + std::to_string(nnz) + " entries, the file has " + std::to_string(read));
  Csr a = to_csr(rows, e);

  // CG needs A symmetric positive definite. Symmetry is checked entry by entry (a general file
  // written from a symmetric matrix carries both halves, equal up to its printed digits); a
  // missing or non-positive diagonal entry rules out positive definiteness.
  for (std::int64_t i = 0; i < a.n; ++i) {
    bool diag = false;
    for (std::int64_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) {
      const std::int64_t j = a.col[k];
      if (j == i) diag = a.val[k] > 0;
      const auto b = a.col.begin() + a.ptr[j], end = a.col.begin() + a.ptr[j + 1];
      const auto m = std::lower_bound(b, end, static_cast<std::int32_t>(i));
      const double t = (m != end && *m == i) ? a.val[m - a.col.begin()] : 0.0;
      if (std::fabs(t - a.val[k]) > 1e-12 * std::max(std::fabs(t), std::fabs(a.val[k])))
        fail(path, "not symmetric: A(" + std::to_string(i + 1) + "," + std::to_string(j + 1) + ") = " + num(a.val[k]) +
                       " but A(" + std::to_string(j + 1) + "," + std::to_string(i + 1) + ") = " + num(t));
    }
    if (!diag) fail(path, "row " + std::to_string(i + 1) + " has no positive diagonal entry: not positive definite, which CG needs");
  }
  return a;
}

// The default system: -Laplace on a g x g grid, 5-point stencil, Dirichlet boundary.
static Csr poisson2d(std::int64_t g) {
  std::vector<Entry> e;
  for (std::int64_t y = 0; y < g; ++y)
    for (std::int64_t x = 0; x < g; ++x) {
      const std::int64_t i = y * g + x;
      e.push_back({i, i, 4.0});
      if (x > 0) e.push_back({i, i - 1, -1.0});
      if (x + 1 < g) e.push_back({i, i + 1, -1.0});
      if (y > 0) e.push_back({i, i - g, -1.0});
      if (y + 1 < g) e.push_back({i, i + g, -1.0});
    }
  return to_csr(g * g, e);
}

// ---- The solver: one persistent kernel per GPU --------------------------------------------------
constexpr int kThreads = 256;

struct Solve {
  const std::int64_t* ptr;  // this GPU's rows of A (CSR, local row offsets, global columns)
  const std::int32_t* col;
  const double* val;
  std::int64_t first, rows;  // global index of local row 0; row count
  View<double> p;            // search direction, all n rows: a GPS array
  double *x, *r, *q;         // this GPU's rows only: nobody else reads them
  double* part;              // one partial per block: what the fence sums in block order
  DeviceFence fence;
  int iters;
  double rho0, threshold;  // (r0, r0) and (tol ||b||)^2
  double* out;             // [0]: the last (r, r), [1]: iterations run
};

// Sum over the block's threads as a fixed tree: the same bits on every run.
__device__ double block_sum(double v) {
  __shared__ double s[kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int o = kThreads / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  const double t = s[0];
  __syncthreads();
  return t;
}

// A dot product over every row of every GPU. Each block stores its partial; the fence's last
// block on each GPU adds them in block order (gpu_values), and every block adds the GPUs' sums in
// rank order. A float atomicAdd would sum in arrival order: GPUs could then disagree on alpha.
__device__ double all_reduce(const Solve& s, int round, double mine) {
  const double b = block_sum(mine);
  if (threadIdx.x == 0) s.part[blockIdx.x] = b;
  double total[1];
  auto gpu_values = [&s](double* gpu) {
    double v = 0;
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) v += __ldcg(s.part + k);  // L2: other SMs wrote it
    const double t = block_sum(v);
    if (threadIdx.x == 0) gpu[0] = t;
  };
  // published = false: since the last fence round this block stored only plain local memory.
  s.fence.arrive_and_reduce<1>(round, false, gpu_values, total);
  return total[0];
}

// Standard CG (Hestenes and Stiefel). Why p and not r in GPS memory: the SpMV gathers p, so
// publishing p is the direct way; it costs a third fence round per iteration (after p is
// formed), where gpsm's bench (src/apps/cg, docs/cg.md) publishes r instead and has every GPU
// form the p entries it reads from r itself, saving that round at the price of more code.
__global__ void __launch_bounds__(kThreads) cg_solve(const __grid_constant__ Solve s) {
  const std::int64_t t0 = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const std::int64_t stride = gridDim.x * static_cast<std::int64_t>(kThreads);
  double rho = s.rho0, rr = s.rho0;
  int round = 0, k = 0;
  while (k < s.iters && rr > s.threshold) {
    // q = A p on this GPU's rows; peers' entries of p come from this GPU's replica, where their
    // owners' stores arrived before the last fence round. Then (p, q).
    double pq = 0;
    for (std::int64_t i = t0; i < s.rows; i += stride) {
      double sum = 0;
      for (std::int64_t e = s.ptr[i]; e < s.ptr[i + 1]; ++e) sum = fma(s.val[e], s.p.load(s.col[e]), sum);
      s.q[i] = sum;
      pq = fma(s.p.load(s.first + i), sum, pq);
    }
    pq = all_reduce(s, round++, pq);
    if (pq == 0) break;  // p = 0: nothing left to solve, and alpha would divide by zero
    const double alpha = rho / pq;
    // x += alpha p, r -= alpha q, then (r, r).
    double part = 0;
    for (std::int64_t i = t0; i < s.rows; i += stride) {
      s.x[i] = fma(alpha, s.p.load(s.first + i), s.x[i]);
      s.r[i] = fma(-alpha, s.q[i], s.r[i]);
      part = fma(s.r[i], s.r[i], part);
    }
    rr = all_reduce(s, round++, part);
    ++k;
    if (k == s.iters || rr <= s.threshold) break;  // every GPU decides on the same bits
    // p = r + beta p on this GPU's rows, through the view: each store also goes to every GPU
    // subscribed to its page. The fence round then makes them visible before the next SpMV, and
    // keeps any GPU from overwriting p while another still gathers the old one (the two rounds above).
    const double beta = rr / rho;
    rho = rr;
    for (std::int64_t i = t0; i < s.rows; i += stride) s.p.store(s.first + i, fma(beta, s.p.load(s.first + i), s.r[i]));
    s.fence.sync(round++, /*published=*/true);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    s.out[0] = rr;
    s.out[1] = k;
  }
}

// Plain device memory (not GPS memory: only its own GPU reads it), freed when run() returns.
struct DeviceMemory {
  std::vector<std::pair<int, void*>> blocks;
  template <class T>
  T* copy_of(int dev, const std::vector<T>& v) {
    void* p = nullptr;
    example::check(cudaSetDevice(dev), "cudaSetDevice");
    example::check(cudaMalloc(&p, std::max<std::size_t>(1, v.size()) * sizeof(T)), "cudaMalloc");
    blocks.emplace_back(dev, p);
    example::check(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
    return static_cast<T*>(p);
  }
  ~DeviceMemory() {
    for (auto [dev, p] : blocks) cudaSetDevice(dev), cudaFree(p);
  }
};

static int run(const Csr& a, const std::vector<double>& b, const std::vector<int>& devices, int iters, double tol) {
  Context ctx(devices);
  const int n = ctx.size();
  double bb = 0;
  for (double v : b) bb += v * v;
  const double bnorm = std::sqrt(bb);

  // p: inline publishing (the only mode a device fence publishes). 4 KiB pages (512 rows): a GPU
  // that reads a few of a neighbour's rows subscribes to those pages only, and each store of
  // p goes to a page's subscribers, so smaller pages mean fewer stores no one reads.
  auto opts = gpsm::gps::with_mode(gpsm::gps::PublishMode::inline_store);
  opts.page_bytes = 4096;
  auto p = ctx.alloc<double>(a.n, opts);

  // Blocks per GPU: every block must be resident (the fence waits on all of them), and more blocks
  // than rows / kThreads would only idle and slow the fence down.
  int blocks = INT32_MAX;
  for (int g = 0; g < n; ++g) {
    int per_sm = 0, sms = 0;
    example::check(cudaSetDevice(ctx.device(g)), "cudaSetDevice");
    example::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cg_solve, kThreads, 0), "occupancy");
    example::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device(g)), "SM count");
    blocks = std::min(blocks, per_sm * sms);
  }
  const std::int64_t most_rows = (a.n + n - 1) / n;  // the largest GPU's share
  blocks = static_cast<int>(std::min<std::int64_t>(blocks, (most_rows + kThreads - 1) / kThreads));
  ctx.check_coresident(reinterpret_cast<const void*>(&cg_solve), blocks, kThreads, 0);

  DeviceMemory mem;
  std::vector<Solve> gpus(n);  // each GPU's kernel argument, less what changes per launch
  for (int g = 0; g < n; ++g) {  // contiguous blocks of rows
    const std::int64_t first = a.n * g / n, last = a.n * (g + 1) / n, e0 = a.ptr[first], e1 = a.ptr[last];
    std::vector<std::int64_t> ptr(a.ptr.begin() + first, a.ptr.begin() + last + 1);
    for (auto& v : ptr) v -= e0;
    const int d = ctx.device(g);
    Solve& s = gpus[g];
    s.ptr = mem.copy_of(d, ptr);
    s.col = mem.copy_of(d, std::vector<std::int32_t>(a.col.begin() + e0, a.col.begin() + e1));
    s.val = mem.copy_of(d, std::vector<double>(a.val.begin() + e0, a.val.begin() + e1));
    s.first = first;
    s.rows = last - first;
    s.x = mem.copy_of(d, std::vector<double>(s.rows));
    s.r = mem.copy_of(d, std::vector<double>(s.rows));
    s.q = mem.copy_of(d, std::vector<double>(s.rows));
    s.part = mem.copy_of(d, std::vector<double>(blocks));
    s.out = mem.copy_of(d, std::vector<double>(2));
    s.rho0 = bb;
    s.threshold = tol * tol * bb;
  }

  // One solve of at most `k` iterations from x0 = 0, r0 = p0 = b; returns its wall time (ms).
  auto solve = [&](int k) {
    p.upload(b);  // every replica: whatever the subscriptions, p0 = b everywhere
    std::vector<DeviceFence> fences = ctx.device_fences(blocks);  // zeroed: taken before each launch
    for (int g = 0; g < n; ++g) {
      Solve& s = gpus[g];
      example::check(cudaSetDevice(ctx.device(g)), "cudaSetDevice");
      example::check(cudaMemsetAsync(s.x, 0, s.rows * sizeof(double), ctx.stream(g)), "x0");
      example::check(cudaMemcpyAsync(s.r, b.data() + s.first, s.rows * sizeof(double), cudaMemcpyHostToDevice, ctx.stream(g)), "r0");
      s.p = p.view(g);
      s.fence = fences[g];
      s.iters = k;
    }
    ctx.synchronize();  // the initial state in place (pageable copies may land late): not timed
    const auto t0 = std::chrono::steady_clock::now();
    for (int g = 0; g < n; ++g) {
      void* args[] = {&gpus[g]};
      example::check(cudaSetDevice(ctx.device(g)), "cudaSetDevice");
      example::check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&cg_solve), dim3(blocks), dim3(kThreads), args,
                                                 0, ctx.stream(g)),
                     "cooperative launch");
    }
    ctx.synchronize();  // a device wait that timed out becomes a gpsm::Error here
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };

  // Learn the subscriptions from one tracked iteration: each GPU stays subscribed to the pages of
  // p its SpMV read (its own and its neighbours' edge pages), so a store of p goes only there.
  ctx.tracking_start();
  solve(1);
  ctx.tracking_stop();
  const double ms = solve(iters);

  // Every GPU must have ended on the same (r, r) and iteration: the reductions are bitwise equal.
  double out0[2] = {0, 0};
  std::vector<double> x(a.n);
  for (int g = 0; g < n; ++g) {
    double o[2];
    example::check(cudaMemcpy(o, gpus[g].out, sizeof(o), cudaMemcpyDeviceToHost), "result");
    example::check(cudaMemcpy(x.data() + gpus[g].first, gpus[g].x, gpus[g].rows * sizeof(double), cudaMemcpyDeviceToHost), "x");
    if (g == 0) std::memcpy(out0, o, sizeof(o));
    if (std::memcmp(o, out0, sizeof(o)) != 0) {
      std::printf("WRONG: GPU %d ended with (r,r) = %.17g after %g iterations, GPU 0 with %.17g after %g\n", g, o[0], o[1],
                  out0[0], out0[1]);
      return example::kWrongResult;
    }
  }
  // The CPU check: ||b - A x|| on the host CSR, in double. Also || |A| |x| ||, the scale of the
  // rounding in A x: below about 100 eps times it, b - A x measures rounding, not the residual.
  double res = 0, scale = 0;
  for (std::int64_t i = 0; i < a.n; ++i) {
    double ax = 0, abs_ax = 0;
    for (std::int64_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) {
      ax += a.val[k] * x[a.col[k]];
      abs_ax += std::fabs(a.val[k] * x[a.col[k]]);
    }
    res += (b[i] - ax) * (b[i] - ax);
    scale += abs_ax * abs_ax;
  }
  const double host_rel = std::sqrt(res) / bnorm, solver_rel = std::sqrt(out0[0]) / bnorm;
  const double floor = 100 * 2.220446049250313e-16 * std::sqrt(scale) / bnorm;
  const int done = static_cast<int>(out0[1]);
  const bool converged = out0[0] <= tol * tol * bb;  // the kernel's own stopping test

  std::printf("CG on %d GPU(s) (%s), %d blocks x %d threads each; p in a GPS array of %llu pages:", n,
              example::join(devices).c_str(), blocks, kThreads, static_cast<unsigned long long>(p.subscriptions().pages()));
  const auto pages = p.subscriptions().summary().pages_per_device;
  for (int g = 0; g < n; ++g) std::printf(" GPU %d subscribes to %llu", g, static_cast<unsigned long long>(pages[g]));
  std::printf("\n  %d iterations (%s) in %.3f ms, %.2f us per iteration\n", done,
              converged ? "reached --tol" : "stopped at --iters or a zero step", ms, 1e3 * ms / std::max(done, 1));
  std::printf("  relative residual: solver %.3e, recomputed on the host ||b - A x|| / ||b|| = %.3e\n", solver_rel, host_rel);

  // The solver's residual is a recurrence; the true one drifts from it by rounding, never by 10x
  // unless an entry of p arrived stale or not at all. Near the rounding floor (--tol 0 and many
  // iterations) the recurrence keeps shrinking while the true residual cannot: there only the
  // floor is asked of it.
  if (!(host_rel <= std::max(10 * solver_rel, floor) && solver_rel <= 10 * host_rel + floor)) {
    std::printf("WRONG: the recomputed residual is not within 10x of the solver's (rounding floor %.1e)\n", floor);
    return example::kWrongResult;
  }
  if (converged && !(host_rel < 10 * tol)) {
    std::printf("WRONG: the solver reached --tol %g, but the recomputed residual is above 10x that\n", tol);
    return example::kWrongResult;
  }
  if (!converged) std::printf("  note: --tol %g not reached in %d iterations (more --iters, or a better-conditioned matrix)\n", tol, done);
  std::printf("OK\n");
  return 0;
}

int main(int argc, char** argv) {
  std::string file;
  int gpus = 0, iters = 5000;
  double tol = 1e-8;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    char* end = nullptr;
    if (arg == "--gpus" && has_value) {
      gpus = example::parse_count("--gpus", argv[++i]);
      if (gpus < 1) fail("--gpus", "at least 1");
    } else if (arg == "--iters" && has_value) {
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 100000000) fail("--iters", std::string("expected 1..1e8, got '") + argv[i] + "'");
      iters = static_cast<int>(v);
    } else if (arg == "--tol" && has_value) {
      tol = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(tol >= 0 && tol < 1)) fail("--tol", std::string("expected a number in [0, 1), got '") + argv[i] + "'");
    } else if (arg[0] != '-' && file.empty()) {
      file = arg;
    } else {
      std::fprintf(stderr, "usage: %s [FILE.mtx] [--gpus N] [--iters K (5000)] [--tol T (1e-8)]\n", argv[0]);
      return arg == "--help" ? 0 : example::kBadArguments;
    }
  }
  // The file first, so a bad one is reported on any machine, with or without a GPU.
  Csr a;
  if (file.empty()) {
    std::printf("no FILE.mtx given: solving the 2D 5-point Poisson matrix of a 256 x 256 grid\n");
    a = poisson2d(256);
  } else {
    a = read_matrix_market(file);
  }
  std::printf("matrix %s: %lld rows, %lld nonzeros; b = A*1, x0 = 0, at most %d iterations, --tol %g\n",
              file.empty() ? "poisson2d 256x256" : file.c_str(), static_cast<long long>(a.n),
              static_cast<long long>(a.ptr[a.n]), iters, tol);

  // b = A 1 (so x = 1 solves it); a matrix whose rows all sum to zero would give b = 0.
  std::vector<double> b(a.n, 0.0);
  for (std::int64_t i = 0; i < a.n; ++i)
    for (std::int64_t k = a.ptr[i]; k < a.ptr[i + 1]; ++k) b[i] += a.val[k];
  if (std::none_of(b.begin(), b.end(), [](double v) { return v != 0; }))
    fail(file, "every row sums to zero, so b = A*1 = 0 and there is nothing to solve");

  int present = 0;
  const cudaError_t e = cudaGetDeviceCount(&present);
  if (e != cudaSuccess || present == 0) {
    std::printf("gpsm: no CUDA device found (%s); this example needs at least one GPU\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return example::kNoGpu;
  }
  const int usable = std::min(present, gpsm::gps::kMaxDevices);
  if (gpus > usable) fail("--gpus " + std::to_string(gpus), "only " + std::to_string(usable) + " GPU(s) usable here");
  if (a.n < (gpus > 0 ? gpus : usable)) fail("--gpus", "more GPUs than the matrix has rows");
  std::vector<int> devices(gpus > 0 ? gpus : usable);
  for (std::size_t d = 0; d < devices.size(); ++d) devices[d] = static_cast<int>(d);
  try {
    return run(a, b, devices, iters, tol);
  } catch (const gpsm::Error& err) {
    std::fprintf(stderr, "%s\n", err.what());
    return example::kRuntimeError;
  }
}
