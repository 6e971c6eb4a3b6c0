#include "apps/stencil/nvshmem_proto.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/stencil/decomp.hpp"
#include "common/atomic_file.hpp"
#include "common/byte_record.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::jacobi {

namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'M', 'N', 'V', 'J', '1'};
constexpr std::uint32_t kVersion = 2;
constexpr std::size_t kHeaderBytes = 88;

// Field-by-field (de)serialization at fixed offsets (common/byte_record.hpp).
using byte_record::put;
using byte_record::put_array;
using byte_record::Reader;

[[noreturn]] void io_fail(const std::string& path, const std::string& what) {
  throw gpsm::Error("gpsm: nvshmem result file " + path + ": " + what);
}

std::string read_all(const std::string& path) { return byte_record::read_all(path, "nvshmem result file"); }

constexpr WorkerApp kApps[] = {WorkerApp::jacobi2d, WorkerApp::heat3d, WorkerApp::wave3d};

}  // namespace

const char* worker_app_name(WorkerApp a) {
  switch (a) {
    case WorkerApp::jacobi2d: return "jacobi2d";
    case WorkerApp::heat3d: return "heat3d";
    case WorkerApp::wave3d: return "wave3d";
  }
  return "?";
}

std::vector<std::string> to_args(const WorkerArgs& a) {
  return {"--app",    worker_app_name(a.app),    "--nz",      std::to_string(a.nz),
          "--axis",   axis_name(a.axis),         "--seed",    std::to_string(a.seed),
          "--rank",   std::to_string(a.rank),    "--ranks",   std::to_string(a.ranks),
          "--device", std::to_string(a.device),  "--nx",      std::to_string(a.nx),
          "--ny",     std::to_string(a.ny),      "--iters",   std::to_string(a.iters),
          "--nccheck", std::to_string(a.nccheck), "--tol",    fmt::format("{}", a.tol),
          "--warmup", std::to_string(a.warmup),  "--reps",    std::to_string(a.reps),
          "--uid-file", a.uid_file,              "--out",     a.out_file,
          "--timeout", std::to_string(a.timeout_s)};
}

WorkerArgs parse_worker_args(int argc, const char* const* argv) {
  WorkerArgs a;
  std::string tol, app_name = "jacobi2d", axis = "z";
  CLI::App app{"gpsm-nvshmem-stencil: one NVSHMEM PE of a gpsm bench nvshmem run (jacobi2d, heat3d or wave3d; "
               "started by gpsm)"};
  app.add_option("--app", app_name, "jacobi2d (default), heat3d or wave3d");
  app.add_option("--nz", a.nz, "heat3d / wave3d: z extent")->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  app.add_option("--axis", axis, "heat3d / wave3d: split axis x, y or z (default z)");
  app.add_option("--seed", a.seed, "heat3d / wave3d: initial values' seed");
  app.add_option("--rank", a.rank, "this PE")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--ranks", a.ranks, "PEs in the run")->required()->check(CLI::PositiveNumber);
  app.add_option("--device", a.device, "CUDA ordinal")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--nx", a.nx, "columns")->required()->check(CLI::Range(std::int64_t{3}, std::int64_t{1} << 40));
  app.add_option("--ny", a.ny, "rows")->required()->check(CLI::Range(std::int64_t{3}, std::int64_t{1} << 40));
  app.add_option("--iters", a.iters, "iteration cap")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--nccheck", a.nccheck, "norm every N iterations")->required()->check(CLI::PositiveNumber);
  app.add_option("--tol", tol, "stop at norm <= tol")->required();
  app.add_option("--warmup", a.warmup, "untimed solves")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--reps", a.reps, "timed solves")->required()->check(CLI::PositiveNumber);
  app.add_option("--uid-file", a.uid_file, "unique-ID file")->required();
  app.add_option("--out", a.out_file, "result file")->required();
  app.add_option("--timeout", a.timeout_s, "seconds to wait for the unique ID")->required()->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string("gpsm-nvshmem-stencil: ") + e.what());
  }
  // strtof, not a stream or CLI11's conversion: the shortest decimal reads back to the exact float
  // (denormals included: their ERANGE is not an error; overflow reads as infinity and is one).
  char* end = nullptr;
  a.tol = std::strtof(tol.c_str(), &end);
  if (tol.empty() || end != tol.c_str() + tol.size() || !std::isfinite(a.tol))
    throw std::invalid_argument("gpsm-nvshmem-stencil: --tol '" + tol + "' is not a finite float");
  if (a.rank >= a.ranks)
    throw std::invalid_argument(fmt::format("gpsm-nvshmem-stencil: --rank {} outside [0, {})", a.rank, a.ranks));
  bool known = false;
  for (WorkerApp w : kApps)
    if (app_name == worker_app_name(w)) {
      a.app = w;
      known = true;
    }
  if (!known)
    throw std::invalid_argument("gpsm-nvshmem-stencil: --app '" + app_name + "' is not jacobi2d, heat3d or wave3d");
  try {
    a.axis = parse_axis(axis);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("gpsm-nvshmem-stencil: --axis: ") + e.what());
  }
  if (a.app != WorkerApp::jacobi2d && a.nz < 3)
    throw std::invalid_argument(fmt::format("gpsm-nvshmem-stencil: --nz {} for {} (at least 3)", a.nz, app_name));
  return a;
}

void write_result(const std::string& path, const WorkerResult& r) {
  if (r.seconds.size() != r.iterations.size()) throw gpsm::Error("gpsm: write_result: inconsistent result (reps)");
  std::string b;
  b.reserve(kHeaderBytes + r.seconds.size() * 12 + r.rows.size() * sizeof(float));
  b.append(kMagic, sizeof(kMagic));
  put(b, kVersion);
  put(b, static_cast<std::int32_t>(r.rank));
  put(b, static_cast<std::int32_t>(r.ranks));
  put(b, static_cast<std::int32_t>(r.device));
  put(b, static_cast<std::int64_t>(r.nx));
  put(b, static_cast<std::int64_t>(r.ny));
  put(b, static_cast<std::int64_t>(r.first_row));
  put(b, static_cast<std::int64_t>(r.chunk));
  put(b, static_cast<std::int32_t>(r.seconds.size()));
  put(b, std::uint32_t{0});
  put(b, r.norm);
  put(b, static_cast<std::int64_t>(r.nz));
  put(b, static_cast<std::int64_t>(r.rows.size()));
  put_array(b, r.seconds);
  std::vector<std::int32_t> it(r.iterations.begin(), r.iterations.end());
  put_array(b, it);
  put_array(b, r.rows);
  write_file_atomic(path, b);
}

WorkerResult read_result(const std::string& path) {
  const std::string b = read_all(path);
  if (b.size() < kHeaderBytes) io_fail(path, fmt::format("{} bytes, shorter than the header", b.size()));
  if (std::memcmp(b.data(), kMagic, sizeof(kMagic)) != 0) io_fail(path, "not a gpsm nvshmem result (bad magic)");
  Reader rd{b, sizeof(kMagic)};
  const auto version = rd.get<std::uint32_t>();
  if (version != kVersion) io_fail(path, fmt::format("version {}, expected {}", version, kVersion));
  WorkerResult r;
  r.rank = rd.get<std::int32_t>();
  r.ranks = rd.get<std::int32_t>();
  r.device = rd.get<std::int32_t>();
  r.nx = rd.get<std::int64_t>();
  r.ny = rd.get<std::int64_t>();
  r.first_row = rd.get<std::int64_t>();
  r.chunk = rd.get<std::int64_t>();
  const auto reps = rd.get<std::int32_t>();
  rd.get<std::uint32_t>();
  r.norm = rd.get<double>();
  r.nz = rd.get<std::int64_t>();
  const auto stored = rd.get<std::int64_t>();
  if (reps < 0 || stored < 0 || stored > (std::int64_t{1} << 40))
    io_fail(path, "negative or absurd sizes in the header");
  const std::size_t cells = static_cast<std::size_t>(stored);
  const std::size_t want = kHeaderBytes + static_cast<std::size_t>(reps) * 12 + cells * sizeof(float);
  if (b.size() != want) io_fail(path, fmt::format("{} bytes, expected {} for {} reps and {} cells", b.size(), want, reps, cells));
  r.seconds = rd.get_array<double>(static_cast<std::size_t>(reps));
  const auto it = rd.get_array<std::int32_t>(static_cast<std::size_t>(reps));
  r.iterations.assign(it.begin(), it.end());
  r.rows = rd.get_array<float>(cells);
  return r;
}

namespace {

// What every app's gather checks: rank order, rank count, the reps, equal iterations everywhere
// (jacobi2d: every PE stops on the same norm sum), positive loop times; then per rep the slowest
// rank's loop time over the iterations. place(r, w, bad) checks rank r's cells (bad(what) throws)
// and places them.
template <class Place>
GatheredRun gather_common(const std::vector<WorkerResult>& results, int reps, Place place) {
  const int ranks = static_cast<int>(results.size());
  if (ranks < 1) throw gpsm::Error("gpsm: nvshmem: no worker results");
  GatheredRun g;
  g.sec_per_iter.assign(static_cast<std::size_t>(reps), 0.0);
  std::vector<double> slowest(static_cast<std::size_t>(reps), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const WorkerResult& w = results[r];
    auto bad = [&](const std::string& what) {
      throw gpsm::Error(fmt::format("gpsm: nvshmem: worker rank {} reported {}", r, what));
    };
    if (w.rank != r || w.ranks != ranks) bad(fmt::format("rank {} of {}", w.rank, w.ranks));
    if (static_cast<int>(w.seconds.size()) != reps || static_cast<int>(w.iterations.size()) != reps)
      bad(fmt::format("{} timed reps, not {}", w.seconds.size(), reps));
    for (int k = 0; k < reps; ++k) {
      if (w.iterations[k] != results[0].iterations[k])
        bad(fmt::format("{} iterations in rep {}, rank 0 {}", w.iterations[k], k + 1, results[0].iterations[k]));
      if (!(w.seconds[k] > 0)) bad(fmt::format("a loop time of {} s in rep {}", w.seconds[k], k + 1));
      slowest[k] = std::max(slowest[k], w.seconds[k]);
    }
    place(r, w, bad);
  }
  for (int k = 0; k < reps; ++k) {
    if (k > 0 && results[0].iterations[k] != results[0].iterations[0])
      throw gpsm::Error("gpsm: nvshmem: the timed reps ran different iteration counts");
    g.sec_per_iter[k] = slowest[k] / std::max(1, results[0].iterations[k]);
  }
  g.iterations = reps > 0 ? results[0].iterations[0] : 0;
  return g;
}

}  // namespace

GatheredRun gather_results(const std::vector<WorkerResult>& results, std::int64_t nx, std::int64_t ny, int reps) {
  const int ranks = static_cast<int>(results.size());
  std::vector<float> grid(static_cast<std::size_t>(nx * ny), 0.0f);
  GatheredRun g = gather_common(results, reps, [&](int r, const WorkerResult& w, const auto& bad) {
    const JacobiSlab s = jacobi_slab(nx, ny, ranks, r);
    if (w.nx != nx || w.ny != ny || w.nz != 1) bad(fmt::format("a {}x{}x{} grid, not {}x{}", w.nx, w.ny, w.nz, nx, ny));
    if (w.first_row != s.first_row || w.chunk != s.chunk)
      bad(fmt::format("rows {}+{}, not {}+{}", w.first_row, w.chunk, s.first_row, s.chunk));
    if (w.rows.size() != static_cast<std::size_t>(s.chunk * nx)) bad(fmt::format("{} cells", w.rows.size()));
    std::copy(w.rows.begin(), w.rows.end(), grid.begin() + s.first_row * nx);
  });
  g.grid = std::move(grid);
  return g;
}

GatheredRun gather_stencil3d_results(const std::vector<WorkerResult>& results, const std::int64_t n[3], Axis axis,
                                     int radius, int reps) {
  const int ranks = static_cast<int>(results.size());
  std::vector<float> grid(static_cast<std::size_t>(n[0] * n[1] * n[2]), 0.0f);
  GatheredRun g = gather_common(results, reps, [&](int r, const WorkerResult& w, const auto& bad) {
    const Slab3D s = slab3d(n, axis, radius, ranks, r);
    if (w.nx != n[0] || w.ny != n[1] || w.nz != n[2])
      bad(fmt::format("a {}x{}x{} box, not {}x{}x{}", w.nx, w.ny, w.nz, n[0], n[1], n[2]));
    if (w.first_row != s.first || w.chunk != s.count)
      bad(fmt::format("planes {}+{}, not {}+{}", w.first_row, w.chunk, s.first, s.count));
    if (w.rows.size() != static_cast<std::size_t>(s.local_cells()))
      bad(fmt::format("{} cells, not the {} of its local box", w.rows.size(), s.local_cells()));
    copy_slab3d_to_global(s, w.rows.data(), grid.data());
  });
  g.grid = std::move(grid);
  return g;
}

void write_file_atomic(const std::string& path, const std::string& bytes) { gpsm::write_file_atomic(path, bytes); }

std::string wait_for_file(const std::string& path, std::size_t size, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    if (f) {
      std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (b.size() == size) return b;
      // written by rename: a file of another size is not a partial write but a wrong file
      throw gpsm::Error(fmt::format("gpsm: {} has {} bytes, expected {}", path, b.size(), size));
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw gpsm::Error(fmt::format("gpsm: {} did not appear within {} s", path, timeout_s));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace gpsm::apps::jacobi
