#pragma once
// The one contract every app implements (docs/bench.md, Method): set up on the given GPUs, run
// the iterations in one paradigm, return the times, the bytes it moved between GPUs and the
// verification error against the CPU reference. The harness never reports a time of a run that
// failed verification.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/paradigm.hpp"
#include "apps/stencil/decomp.hpp"
#include "proact/agent.hpp"

namespace gpsm::apps {

class ReferenceCache;  // reference_cache.hpp

struct Problem {
  std::int64_t n[3] = {0, 0, 0};  // jacobi2d: n[0] = nx, n[1] = ny; 3D apps: x, y, z
  int iters = 0;                  // iteration cap (jacobi2d: niter)
  int nccheck = 1;                // jacobi2d: norm every nccheck iterations
  float tol = 1.0e-8f;            // jacobi2d: stop at norm <= tol
  std::uint32_t seed = 1;         // initial values of the 3D apps
  Axis axis = Axis::z;            // 3D apps: the decomposed axis
  std::string graph;              // graph apps: the --size text ("rmat:20", "road:1024@nnz", a file path)
  bool balance_nnz = false;       // graph apps: rows split by nnz instead of equal row counts (@nnz)
  std::string spec;               // filter: the canonical --size text ("4096x4096:k5", ":remote"...)
  std::string label() const;      // "4096x4096", "256x256x256", the graph spec or the filter spec
};

// The proact paradigm's chunk and agent as gpsm bench asks for them (--proact-chunk, --proact-cache,
// one point of a --proact-tune sweep): bytes 0 leaves the app's default; source says what chose
// them. agent: the PROACT agent the run uses (proact_runs_as, proact_bench.hpp): copy_engine is the
// app's chunked copy-engine exchange; memcpy runs the app's memcpy exchange (bulk copies after the
// kernel) and inline_store its p2p_inline exchange (peer stores during the kernel), the outcome
// still labelled proact and ProactChunkUse::agent saying which ran.
struct ProactChunk {
  std::uint64_t bytes = 0;
  std::string source;
  proact::Agent agent = proact::Agent::copy_engine;
};

// What a proact run used (recorded in the results file; docs/proact.md, "In gpsm bench").
struct ProactChunkUse {
  std::uint64_t requested = 0;    // the size asked for (0: the app's default)
  std::uint64_t chunk_bytes = 0;  // a full chunk as run: graph apps round the request up to whole kernel blocks
                                  // (the largest over ranks and vectors); jacobi2d one halo row
  std::string source;             // what chose it, one line
  std::uint64_t key_size = 0;     // the size of the app's choice-cache key (docs/proact.md)
  std::string agent;              // the agent the run used: "copy_engine", "memcpy" or "inline"
                                  // (proact::agent_name); chunk_bytes is 0 unless copy_engine
};

// A choice an app made for a run beyond its paradigm (cg: the SpMV layout), with its reason:
// recorded in the results file (the point's `name` and `name`_why) and under the run in the table.
struct RunChoice {
  std::string name, value, why;
};

enum class RunStatus : std::uint8_t { ok, failed, unsupported };
const char* to_string(RunStatus s);

struct RunOutcome {
  RunStatus status = RunStatus::ok;
  std::string reason;                 // failed / unsupported: why (one line)
  std::vector<double> sec_per_iter;   // one per timed rep: loop time / iterations run
  int iterations = 0;                 // iterations each rep ran
  double error = 0;                   // max relative error of the last timed rep vs the CPU reference
  double tolerance = 0;               // the bound the error was checked against
  double link_bytes_per_iter = 0;     // bytes between GPUs per iteration (halos, norms); < 0: not known
  double mem_bytes_per_iter = -1;     // bytes the kernels move in the GPUs' own memory per iteration, summed
                                      // over GPUs (the app's model of its compulsory traffic); < 0: not known
  std::string timing;                 // what the time covers
  // GPS paradigms (graph apps): pages of the published arrays by subscriber count after tracking,
  // entry k - 1 = pages with k subscribers (GPS paper Fig 9); empty when not known.
  std::vector<double> subscriber_pages;
  ProactChunkUse proact;  // proact paradigm only (chunk_bytes 0 elsewhere)
  std::vector<RunChoice> choices;
};

struct RunRequest {
  Paradigm paradigm = Paradigm::single;
  std::vector<int> devices;  // CUDA ordinals, rank order
  Problem problem;
  int reps = 5, warmup = 1;
  std::function<void(const std::string&)> progress;  // short status lines (may be empty)
  // proact, every app: asked once the app knows the size of its cache key (ProactChunkUse::key_size),
  // so a cache lookup can happen inside the run; empty: the default (copy engines, the app's chunk).
  // Apps whose chunk the decomposition fixes ignore the bytes but honour the agent.
  std::function<ProactChunk(std::uint64_t key_size)> proact_chunk;
  // ct: a folder for the run's pictures (ct_slices.hpp), written once per size; empty: none.
  std::string pictures_dir;
  // gpsm bench --isolate: the command's references, shared by its child processes
  // (reference_cache.hpp); null in one process, where each app keeps its own in memory.
  const ReferenceCache* references = nullptr;
};

class App {
 public:
  virtual ~App() = default;
  virtual const char* name() const = 0;          // "jacobi2d"
  virtual const char* description() const = 0;   // one line
  // Sizes run when --size is not given, comma-separated: a strong-scaling size (one GPU takes
  // tens to hundreds of microseconds per iteration) and a large one.
  virtual std::string default_sizes() const { return ""; }
  // The --size entries one entry stands for: a named set (cg's `table3.1`) expands to its members,
  // anything else is itself. gpsm bench expands before problem(), so each member is a size of its own.
  virtual std::vector<std::string> expand_size(const std::string& size) const { return {size}; }
  // The problem for a --size string ("4096", "8192x4096", "256x256x512") and --iters (0: default).
  virtual Problem problem(const std::string& size, int iters) const = 0;
  // Paradigms this app has (the rest report `unsupported` with a reason).
  virtual bool has(Paradigm p) const = 0;
  // Whether the proact paradigm's chunk size is a free choice (graph apps) or fixed by the
  // decomposition (jacobi2d: one halo row; heat3d, wave3d: one edge of halo planes). Every app asks
  // RunRequest::proact_chunk for the agent; only the former use its bytes.
  virtual bool proact_chunk_is_choice() const { return false; }
  // Peak host bytes of a run of p (the CPU reference, the gathered result, a generated graph while
  // it is built: memory_estimate.hpp), known from p alone, so gpsm bench refuses an impossible size
  // before any work; 0: not estimated (a file's readers check its header themselves).
  virtual double host_bytes(const Problem& p) const {
    (void)p;
    return 0;
  }
  // Bytes one of `gpus` GPUs holds for p's arrays in paradigm `par`'s decomposition (a paradigm
  // that replicates the whole problem on every GPU, as gps does, holds more than the slabs of the
  // others), compared with the GPU's free memory before the run (gpu_memory_refusal); 0: not estimated.
  virtual double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm par) const {
    (void)p, (void)gpus, (void)par;
    return 0;
  }
  // Runs warm-ups and timed reps, verifies the last timed rep against the CPU reference (the app
  // caches the reference between runs of the same problem, and shares it through
  // RunRequest::references when given).
  virtual RunOutcome run(const RunRequest& r) = 0;
};

// Every app gpsm bench knows (registry_cuda.cpp).
std::vector<std::unique_ptr<App>> make_apps();

}  // namespace gpsm::apps
