#include "apps/cg/cg_worker_proto.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/cg/rank_solves.hpp"
#include "common/atomic_file.hpp"
#include "common/byte_record.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'M', 'N', 'V', 'C', 'G'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 48;

using byte_record::put;
using byte_record::put_array;
using byte_record::Reader;

[[noreturn]] void io_fail(const std::string& path, const std::string& what) {
  throw gpsm::Error("gpsm: cg nvshmem result file " + path + ": " + what);
}

}  // namespace

const char* worker_variant_name(Variant v) { return v == Variant::standard ? "std" : "pipe"; }

std::vector<std::string> to_args(const CgWorkerArgs& a) {
  return {"--variant", worker_variant_name(a.variant), "--matrix",  a.matrix,
          "--spmv",    a.spmv.empty() ? "auto" : a.spmv, "--values", a.values.empty() ? "auto" : a.values,
          "--index",   a.index.empty() ? "auto" : a.index,
          "--rows-per-thread", a.rows_per_thread.empty() ? "auto" : a.rows_per_thread,
          "--iters",   std::to_string(a.iters),
          "--rank",    std::to_string(a.rank),          "--ranks",   std::to_string(a.ranks),
          "--device",  std::to_string(a.device),        "--warmup",  std::to_string(a.warmup),
          "--reps",    std::to_string(a.reps),          "--uid-file", a.uid_file,
          "--out",     a.out_file,                      "--timeout", std::to_string(a.timeout_s)};
}

CgWorkerArgs parse_cg_worker_args(int argc, const char* const* argv) {
  CgWorkerArgs a;
  std::string variant;
  CLI::App app{"gpsm-nvshmem-cg: one NVSHMEM PE of a gpsm bench cg nvshmem_std / nvshmem_pipe run (started by gpsm)"};
  app.add_option("--variant", variant, "std or pipe")->required();
  app.add_option("--matrix", a.matrix, "the --size entry")->required();
  app.add_option("--spmv", a.spmv, "auto, csr or sell (GPSM_CG_SPMV)")->required();
  app.add_option("--values", a.values, "auto, f64, f32 or table (GPSM_CG_VALUES)")->required();
  app.add_option("--index", a.index, "auto, i32 or i16 (GPSM_CG_INDEX)")->required();
  app.add_option("--rows-per-thread", a.rows_per_thread, "auto, 1, 2, 4 or 8 (GPSM_CG_ROWS_PER_THREAD)")->required();
  app.add_option("--iters", a.iters, "iteration cap")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--rank", a.rank, "this PE")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--ranks", a.ranks, "PEs in the run")->required()->check(CLI::PositiveNumber);
  app.add_option("--device", a.device, "CUDA ordinal")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", a.warmup, "untimed solves")->required()->check(CLI::NonNegativeNumber);
  app.add_option("--reps", a.reps, "timed solves")->required()->check(CLI::PositiveNumber);
  app.add_option("--uid-file", a.uid_file, "unique-ID file")->required();
  app.add_option("--out", a.out_file, "result file")->required();
  app.add_option("--timeout", a.timeout_s, "seconds to wait for the unique ID")->required()->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string("gpsm-nvshmem-cg: ") + e.what());
  }
  if (variant == "std") a.variant = Variant::standard;
  else if (variant == "pipe") a.variant = Variant::pipelined;
  else throw std::invalid_argument("gpsm-nvshmem-cg: --variant '" + variant + "' is not std or pipe");
  if (a.rank >= a.ranks)
    throw std::invalid_argument(fmt::format("gpsm-nvshmem-cg: --rank {} outside [0, {})", a.rank, a.ranks));
  if (a.matrix.empty()) throw std::invalid_argument("gpsm-nvshmem-cg: --matrix is empty");
  if (a.spmv == "auto") a.spmv.clear();
  if (a.values == "auto") a.values.clear();
  if (a.index == "auto") a.index.clear();
  if (a.rows_per_thread == "auto") a.rows_per_thread.clear();
  return a;
}

void write_cg_result(const std::string& path, const CgWorkerResult& r) {
  if (r.seconds.size() != r.iterations.size()) throw gpsm::Error("gpsm: write_cg_result: inconsistent result (reps)");
  if (r.rho.size() != static_cast<std::size_t>(std::max(r.last_iterations + 1, 0)) ||
      r.x.size() != static_cast<std::size_t>(r.rows))
    throw gpsm::Error("gpsm: write_cg_result: inconsistent result (history or rows)");
  std::string b;
  b.append(kMagic, sizeof(kMagic));
  put(b, kVersion);
  put(b, static_cast<std::int32_t>(r.rank));
  put(b, static_cast<std::int32_t>(r.ranks));
  put(b, static_cast<std::int32_t>(r.device));
  put(b, static_cast<std::int64_t>(r.row_begin));
  put(b, static_cast<std::int64_t>(r.rows));
  put(b, static_cast<std::int32_t>(r.seconds.size()));
  put(b, static_cast<std::int32_t>(r.last_iterations));
  put_array(b, r.seconds);
  put_array(b, std::vector<std::int32_t>(r.iterations.begin(), r.iterations.end()));
  put_array(b, r.rho);
  put_array(b, r.x);
  gpsm::write_file_atomic(path, b);
}

CgWorkerResult read_cg_result(const std::string& path) {
  const std::string b = byte_record::read_all(path, "cg nvshmem result file");
  if (b.size() < kHeaderBytes) io_fail(path, fmt::format("{} bytes, shorter than the header", b.size()));
  if (std::memcmp(b.data(), kMagic, sizeof(kMagic)) != 0) io_fail(path, "not a gpsm cg nvshmem result (bad magic)");
  Reader rd{b, sizeof(kMagic)};
  const auto version = rd.get<std::uint32_t>();
  if (version != kVersion) io_fail(path, fmt::format("version {}, expected {}", version, kVersion));
  CgWorkerResult r;
  r.rank = rd.get<std::int32_t>();
  r.ranks = rd.get<std::int32_t>();
  r.device = rd.get<std::int32_t>();
  r.row_begin = rd.get<std::int64_t>();
  r.rows = rd.get<std::int64_t>();
  const auto reps = rd.get<std::int32_t>();
  r.last_iterations = rd.get<std::int32_t>();
  if (reps < 0 || r.rows < 0 || r.rows > (std::int64_t{1} << 36) || r.last_iterations < -1)
    io_fail(path, "negative or absurd sizes in the header");
  const std::size_t hist = static_cast<std::size_t>(r.last_iterations + 1);
  const std::size_t want = kHeaderBytes + static_cast<std::size_t>(reps) * 12 + (hist + static_cast<std::size_t>(r.rows)) * 8;
  if (b.size() != want)
    io_fail(path, fmt::format("{} bytes, expected {} for {} reps, {} history entries and {} rows", b.size(), want, reps,
                              hist, r.rows));
  r.seconds = rd.get_array<double>(static_cast<std::size_t>(reps));
  const auto it = rd.get_array<std::int32_t>(static_cast<std::size_t>(reps));
  r.iterations.assign(it.begin(), it.end());
  r.rho = rd.get_array<double>(hist);
  r.x = rd.get_array<double>(static_cast<std::size_t>(r.rows));
  return r;
}

CgGathered gather_cg_results(const std::vector<CgWorkerResult>& results, const Plan& plan, int cap, int reps) {
  const int ranks = static_cast<int>(results.size());
  if (ranks != plan.ranks)
    throw gpsm::Error(fmt::format("gpsm: nvshmem: {} worker results for a split over {} GPUs", ranks, plan.ranks));
  CgGathered g;
  std::vector<double> slowest(static_cast<std::size_t>(reps), 0.0);
  std::vector<RankSolve> solves(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const CgWorkerResult& w = results[r];
    auto bad = [&](const std::string& what) {
      throw gpsm::Error(fmt::format("gpsm: nvshmem: cg worker rank {} reported {}", r, what));
    };
    const RowRange& mine = plan.rank[r].rows;
    if (w.rank != r || w.ranks != ranks) bad(fmt::format("rank {} of {}", w.rank, w.ranks));
    if (w.row_begin != mine.begin || w.rows != mine.size())
      bad(fmt::format("rows {}+{}, not {}+{} (did it build another matrix or split?)", w.row_begin, w.rows, mine.begin,
                      mine.size()));
    if (static_cast<int>(w.seconds.size()) != reps || static_cast<int>(w.iterations.size()) != reps)
      bad(fmt::format("{} timed reps, not {}", w.seconds.size(), reps));
    for (int k = 0; k < reps; ++k) {
      if (w.iterations[k] != results[0].iterations[k])
        bad(fmt::format("{} iterations in rep {}, rank 0 {}", w.iterations[k], k + 1, results[0].iterations[k]));
      if (!(w.seconds[k] > 0)) bad(fmt::format("a solve time of {} s in rep {}", w.seconds[k], k + 1));
      slowest[k] = std::max(slowest[k], w.seconds[k]);
    }
    if (reps > 0 && w.iterations[reps - 1] != w.last_iterations)
      bad(fmt::format("a history of {} iterations for a last rep of {}", w.last_iterations, w.iterations[reps - 1]));
    solves[r].iterations = w.last_iterations;
    solves[r].rho = w.rho;
    solves[r].x = w.x;
  }
  g.solve = combine_rank_solves(plan, cap, solves);
  for (int k = 0; k < reps; ++k) g.sec_per_iter.push_back(slowest[k] / std::max(1, results[0].iterations[k]));
  return g;
}

}  // namespace gpsm::apps::cg
