#pragma once
// CG's `gps` paradigm, device side (cg_gps.cu): Standard CG in one persistent kernel per GPU over
// the public GPS API. r is a GPS array (inline publishing, subscriptions learned by tracking); the
// kernel stores its rows through the view and gathers by global column; the runtime's device fence
// (arrive_and_reduce) publishes r and reduces the dot products at once, twice per iteration.
// Same arithmetic as every other paradigm (cg_math.hpp), so the reference checks it bit for bit.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "apps/cg/cg_kernels.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::cg {

struct GpsStd {
  DevMatrix a;                              // this GPU's rows; col holds global column ids
  std::int64_t first_row = 0;               // global index of local row 0
  const std::int32_t* col_range = nullptr;  // per chunk: lowest and highest column read
  gps::View<double> r;                      // the residual, by global row (GPS array)
  double* p[2] = {};                        // search direction, full length on every GPU: own rows
                                            // and the subscribed pages of r (iteration k reads p[k & 1])
  double* x = nullptr;                      // own rows
  double* q = nullptr;                      // own rows
  const std::int64_t* piece_begin = nullptr;  // remote entries of p to form: the subscribed pages
  const std::int64_t* piece_end = nullptr;    // of r beyond the own rows, in pieces
  std::int32_t pieces = 0;
  double* part[2] = {};                     // (p, q) and (r, r) chunk partials
  gps::DeviceFence fence;
  double* hist = nullptr;
  std::int32_t* iterations = nullptr;
  int iters = 0;
  double rho0 = 0, threshold = 0;
  bool tracking = false;  // every gather through View::load, so the runtime sees each page read
  // This GPU alone holds r (Array::sole: one GPU): the launch is the kernel's plain variant, which
  // reads and writes r's replica directly, with no span, load fallback or publish in its code.
  bool sole = false;
  // Per chunk, 1 where the chunk runs the plain variant's code within the GPS one: this GPU alone
  // holds every page of r the chunk reads and stores (Array::reach over its column range, which
  // covers its own rows, is sole), so its gathers and stores go straight to the replica; the
  // other chunks (those at another GPU's rows) keep the spans and the publishing. nullptr: none
  // (tracking, or the plain variant launched).
  const std::uint8_t* plain = nullptr;
  int q_slots = 0;  // chunks of q a block keeps in shared memory between the phases; 0: q in `q` (q_storage.hpp)
};

// Resident blocks per GPU of the kernel for this matrix's lanes and rows per thread (the smaller
// of the two variants', so either may be launched on the same fences).
int gps_std_blocks(int device, int lanes, EntryKind kind, int rows_per_thread);  // kind: DevMatrix::kind
const void* gps_std_kernel(int lanes, EntryKind kind, bool sole, bool keep_q = false);  // keep_q: GpsStd::q_slots > 0
std::size_t gps_std_smem(int rows_per_thread, int q_slots = 0);  // as free_smem (cg_kernels.hpp)
void launch_gps_std(const GpsStd& g, int blocks, cudaStream_t st);

}  // namespace gpsm::apps::cg
