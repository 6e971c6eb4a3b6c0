#pragma once
// What the Jacobi runs of every paradigm share (jacobi_host_loop_cuda.cpp):
//   JacobiRun   the interface the app drives: init (untimed), solve (timed), gather, bytes;
//   Slabs       per-GPU slabs of (chunk + 2) x nx floats, two buffers each, with their boundary
//               columns, initialization (poison where a paradigm must write first) and gather;
//   HostLoop    the host-driven solve loop of NVIDIA's variants: a sweep per GPU per iteration,
//               each GPU waiting for its neighbours' previous iteration, the norm read back
//               every nccheck iterations; paradigms fill in the sweep and the steps around it.
#include <cuda_runtime.h>

#include <array>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "common/dev_buf.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/stencil/decomp.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::jacobi {

struct LoopTiming {
  double seconds = 0;  // host wall clock of the solve
  int iterations = 0;
  double norm = 0;
};

class JacobiRun {
 public:
  virtual ~JacobiRun() = default;
  virtual void init() = 0;                   // initial grid (setup, untimed)
  virtual LoopTiming solve() = 0;            // the timed solve
  virtual std::vector<float> gather() = 0;   // ny x nx, interior rows filled
  virtual double link_bytes_per_iter() = 0;  // < 0: not known (page migrations)
  // Empty when the run's set-up is as asked (um_hints: every hint read back), else why not.
  virtual std::string check() const { return ""; }
  virtual std::string timing() const {
    return "host wall clock of the solve loop (setup excluded), divided by its iterations";
  }
};

// The boundary column of a slab's local rows (halo rows included: the global row each stands
// for), or of the whole grid (rows 0 .. ny-1), on `device`.
void upload_boundary(const JacobiSlab& s, DevBuf<float>& dst, int device);
void upload_boundary(std::int64_t ny, DevBuf<float>& dst, int device);

struct Slabs {
  Slabs(gps::Context& ctx, const Problem& p);
  // Both buffers of every slab: zero interior, boundary columns, poison as given per buffer.
  void init(Poison first, Poison second);
  // The interior rows of buffer `b` of every slab into an ny x nx grid (other rows zero).
  std::vector<float> gather(int b) const;
  float* row(int rank, int b, std::int64_t local_row) { return buf[rank][b].p + local_row * nx; }

  gps::Context& ctx;
  std::int64_t nx, ny;
  std::vector<JacobiSlab> slab;
  std::vector<std::array<DevBuf<float>, 2>> buf;
  std::vector<DevBuf<float>> bcol;
};

class HostLoop : public JacobiRun {
 public:
  LoopTiming solve() override;

 protected:
  HostLoop(gps::Context& ctx, const Problem& p);
  ~HostLoop() override;
  // Rank r's sweep of the current iteration (reads buffer cur_), the norm added to `norm` if set.
  virtual void sweep(int r, float* norm, cudaStream_t st) = 0;
  virtual void before_sweeps(int /*iter*/) {}
  virtual void after_sweeps(int /*iter*/, bool /*calc*/) {}
  // NCCL orders the ranks itself; the others order them with the parity events.
  virtual bool orders_by_events() const { return true; }
  // Where rank r's norm is read, and whether that value is already the sum over all ranks.
  virtual const float* norm_result(int r) const { return norm_[r].p; }
  virtual bool norm_summed() const { return false; }
  virtual void finish() { ctx_.synchronize(); }
  // The host's wait for rank r's stream before it reads the norm (proact bounds it: its copies
  // wait on flags by stream memory operations).
  virtual void wait_rank(int r);
  // The end of rank r's part of iteration `iter` (recorded again after work added to it).
  void record(int r, int iter);

  gps::Context& ctx_;
  Problem p_;
  int n_;
  std::vector<JacobiSlab> slabs_;
  std::vector<DevBuf<float>> norm_;
  // Two events per rank, by iteration parity: iteration k waits for the neighbours' iteration
  // k - 1 (recorded earlier), not for the record of iteration k another rank may have made
  // moments before in this same host loop (that would run the ranks one after another).
  std::vector<std::array<cudaEvent_t, 2>> ev_;
  float* host_norm_ = nullptr;
  int cur_ = 0;
};

}  // namespace gpsm::apps::jacobi
