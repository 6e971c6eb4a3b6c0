#pragma once
// The CG kernels' arguments and launchers (cg_discrete.cu: the host-launched kernels of single /
// cpu_ctrl_*; cg_persistent.cu: the CPU-free persistent kernels). All arithmetic is cg_math.hpp's.
// Every kernel runs blocks of kThreads threads; a "chunk" is kThreads * E consecutive local rows.
#include <cuda_runtime.h>

#include <cstdint>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/cg_sync.hpp"
#include "apps/cg/q_storage.hpp"
#include "apps/cg/sell_deltas.hpp"
#include "apps/cg/value_storage.hpp"

namespace gpsm::apps::cg {

// How a GPU's matrix entries are stored: the kernels' template arguments beside the lanes
// (with_shape in cg_device.cuh).
struct EntryKind {
  ValueStorage values = ValueStorage::f64;
  IndexStorage index = IndexStorage::i32;
};

// One GPU's block of rows: local CSR (columns < rows: own rows; rows + h: halo slot h), or, when
// slice_ptr is set, the same rows in the sliced-ELL layout (sell.hpp: col and val column-major per
// slice of 32 rows, padded; row_ptr unset). The columns in col, or, sliced, when col16 is set, as
// 16-bit deltas from the slot bases col_base (sell_deltas.hpp; col unset). The values in val, or,
// when val32 is set, in val32 as the floats they exactly are, or, sliced, when val8 is set, as
// indices into val_table (value_storage.hpp; val unset).
struct DevMatrix {
  const std::int32_t* row_ptr = nullptr;
  const std::int32_t* slice_ptr = nullptr;
  const std::int32_t* col = nullptr;
  const std::uint16_t* col16 = nullptr;
  const std::int32_t* col_base = nullptr;
  const double* val = nullptr;
  const float* val32 = nullptr;
  const std::uint8_t* val8 = nullptr;
  const double* val_table = nullptr;
  std::int32_t rows = 0, halo = 0;
  std::int32_t chunks = 0;
  int rows_per_thread = 1;  // E
  int lanes = 2;            // threads per row
  // The kernels' value and index types (with_shape in cg_device.cuh), from the buffers set.
  EntryKind kind() const {
    return {val8 != nullptr ? ValueStorage::table : val32 != nullptr ? ValueStorage::f32 : ValueStorage::f64,
            col16 != nullptr ? IndexStorage::i16 : IndexStorage::i32};
  }
};

// Where the rank's sent entries go: entry e (of chunk c: [chunk_off[c], chunk_off[c + 1])) is local
// row row[e], stored to base[parity * kMaxRanks + peer[e]][dst[e]]. In-kernel pushes: dst indexes
// the peer's local vector; the host-driven paradigms pack: dst is the packed index, every base the
// pack. base is a table in device memory: indexed at run time, kernel parameters would be copied
// to the stack.
struct Pushes {
  const std::int32_t* row = nullptr;
  const std::int32_t* peer = nullptr;
  const std::int32_t* dst = nullptr;
  const std::int32_t* chunk_off = nullptr;
  double* const* base = nullptr;  // [2][kMaxRanks]
};

// Standard CG: r and both p buffers hold rows + halo entries; x and q rows.
struct StdVectors {
  double* x = nullptr;
  double* r = nullptr;
  double* p[2] = {};  // iteration k reads p[k & 1] (p_{k-1}) and writes p[1 - (k & 1)] (p_k)
  double* q = nullptr;
};

// Pipelined CG: both w buffers hold rows + halo entries; the rest rows. n (A w) only for the
// host-launched kernels (the persistent kernel keeps it in shared memory).
struct PipeVectors {
  double* x = nullptr;
  double* r = nullptr;
  double* w[2] = {};  // iteration i reads w[i & 1] and writes w[1 - (i & 1)]
  double* z = nullptr;
  double* s = nullptr;
  double* p = nullptr;
  double* n = nullptr;
};

// Per-GPU state of the host-launched kernels, in device memory: the stop decision, iterations
// run and the previous iteration's scalars (by iteration parity, so a kernel reads one slot while
// its block 0 writes the other).
struct Control {
  std::int32_t stop = 0;
  std::int32_t iterations = 0;
  double rho[2] = {0, 0};    // Standard: rho_k
  double gamma[2] = {0, 0};  // Pipelined: gamma_i
  double alpha[2] = {0, 0};  // Pipelined: alpha_i
};

// ---- host-launched kernels (one iteration's steps; cpu_ctrl_* and single) ----------------------
struct StdStep {
  DevMatrix a;
  StdVectors v;
  Pushes push;
  Control* ctl = nullptr;
  double* hist = nullptr;        // squared residual norm per iteration
  double* part = nullptr;        // chunk partials this step writes
  const double* gathered = nullptr;  // the GPUs' partials of the last reduction (rank order)
  int ranks = 1;
  int k = 0;                     // iteration
  double rho0 = 0, threshold = 0;
};
// q = A p_k with p_k = r + beta p_{k-1} formed on the fly (written for own rows and halo), the
// (p_k, q) chunk partials. k > 0: rho_k from `gathered` (the (r, r) reduction), the stop test.
void launch_std_spmv(const StdStep& s, cudaStream_t st);
// alpha = rho_k / (p, q) from `gathered`; x += alpha p; r -= alpha q; (r, r) chunk partials;
// r's sent entries packed (push).
void launch_std_update(const StdStep& s, cudaStream_t st);
// After the last iteration: rho_iters into the history (unless stopped earlier).
void launch_std_finish(const StdStep& s, int iters, cudaStream_t st);

struct PipeStep {
  DevMatrix a;
  PipeVectors v;
  Pushes push;
  Control* ctl = nullptr;
  double* hist = nullptr;
  double* part = nullptr;            // (r, r), (w, r) chunk partials, interleaved
  const double* gathered = nullptr;  // [2 g], [2 g + 1]: GPU g's gamma and delta partials
  int ranks = 1;
  int i = 0;
  int iters = 0;
  double threshold = 0;
};
// n = A w_i (into v.n).
void launch_pipe_spmv(const PipeStep& s, cudaStream_t st);
// gamma_i, delta_i from `gathered`, the stop tests, alpha and beta; the six vector updates, the
// next chunk partials, w's sent entries packed. At i == iters only the stop bookkeeping runs.
void launch_pipe_update(const PipeStep& s, cudaStream_t st);

// A GPU's partial sums of `count` values from its chunk partials, into out[0..count).
void launch_rank_partial(const double* part, std::int32_t chunks, int count, double* out, cudaStream_t st);

// ---- persistent kernels (cpu_free_*, infinite) -------------------------------------------------
struct FreeStd {
  DevMatrix a;
  StdVectors v;
  Pushes push;          // peers' r (or the elided scratch)
  double* part[2] = {};  // (p, q) and (r, r) chunk partials
  CgSync sync;
  double* hist = nullptr;
  std::int32_t* iterations = nullptr;
  int iters = 0;
  double rho0 = 0, threshold = 0;
  int q_slots = 0;  // chunks of q a block keeps in shared memory between the phases; 0: q in v.q (q_storage.hpp)
};
struct FreePipe {
  DevMatrix a;
  PipeVectors v;
  Pushes push;          // peers' w buffers by parity (or the elided scratch)
  const std::int32_t* order = nullptr;  // chunks, interior first
  std::int32_t boundary_chunks = 0;     // the last this many of `order` read halo slots
  double* part = nullptr;               // (r, r), (w, r) chunk partials, interleaved
  CgSync sync;
  double* hist = nullptr;
  std::int32_t* iterations = nullptr;
  int iters = 0;
  double threshold = 0;
};
// Blocks per GPU the persistent kernels can keep resident (all of them must be), at most one per
// work item (Pipelined: plus its communication block).
// kind: how the matrix entries are stored (DevMatrix::kind).
int free_blocks(int device, bool pipelined, int lanes, EntryKind kind, int rows_per_thread, std::int64_t items);
// keep_q: the Standard kernel that keeps q in shared memory (FreeStd::q_slots > 0).
const void* free_kernel(bool pipelined, int lanes, EntryKind kind, bool keep_q = false);
// Dynamic shared memory of a launch: Standard one chunk of q, or q_slots of them (q_storage.hpp).
std::size_t free_smem(bool pipelined, int rows_per_thread, int q_slots = 0);
// q_slots_for with the launch's limits: what fits the kernel's shared memory without opting in to
// more than 48 KB a block, and only where `blocks` blocks (of the whole GPU) stay resident with it.
// `kernel`: the Standard kernel that would run with q kept (cpu_free_std's or gps's), whose
// launch's dynamic shared memory is q_slots chunks.
int std_q_slots(int device, const void* kernel, QStorage q, std::int64_t chunks, int blocks, int rows_per_thread);
void launch_free_std(const FreeStd& f, int blocks, cudaStream_t st);
void launch_free_pipe(const FreePipe& f, int blocks, cudaStream_t st);
// Work items of a Standard SpMV phase: the chunks plus the halo slots in pieces of kThreads.
GPSM_HD std::int64_t std_spmv_items(const DevMatrix& a) { return a.chunks + (a.halo + kThreads - 1) / kThreads; }

}  // namespace gpsm::apps::cg
