#pragma once
// memcpy's halo exchange between the ranks of Slabs (heat3d / wave3d and fd3d): after the step
// that wrote buffer b, rank r's first and last `radius` owned planes go to its neighbours by copy
// engine, in stream order after the step (and before the iteration's event the neighbours wait
// for). cudaMemcpyAsync between the two GPUs' pointers (peer access on: a direct peer copy) rather
// than cudaMemcpyPeerAsync, which stream capture refuses (cudaErrorStreamCaptureUnsupported on
// 4xH200, CUDA 13.0). Along z the planes are contiguous and land in the neighbours' halos
// directly; along x or y they are packed, copied into the neighbour's receive buffer for b, and
// unpacked by the neighbour before its next step. The receive buffers alternate with the buffer
// index, so a neighbour's next send (into the other one) can't overwrite them first; its send
// into this one again waits for this rank's event, which follows the unpack.
#include <cuda_runtime.h>

#include <array>
#include <vector>

#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::stencil3d {

class HaloCopies {
 public:
  // on: the run exchanges by copies (memcpy); the pack buffers are allocated where it packs.
  HaloCopies(gps::Context& ctx, const Slabs& slabs, bool on);
  // Whether the halos go through pack buffers (memcpy on more than one rank, split along x or y).
  bool packed() const { return packed_; }
  void send(int r, int b, cudaStream_t st) const;    // after the step that wrote buffer b
  void unpack(int r, int c, cudaStream_t st) const;  // before the step reading buffer c (packed only)
  // The host loop's hooks of iteration `it` (it reads buffer it % 2, writes the other): unpack
  // what the neighbours sent before the step, send after it; nothing unless the copies are on.
  void before_step(int r, int it, cudaStream_t st) const {
    if (packed_ && it > 0) unpack(r, it & 1, st);
  }
  void after_step(int r, int it, cudaStream_t st) const {
    if (on_) send(r, 1 - (it & 1), st);
  }

 private:
  const Slabs& slabs_;
  bool on_;  // copies on and more than one rank
  bool packed_;
  std::vector<std::array<DevBuf<float>, 2>> send_;                 // [rank][side: lower, upper]
  std::vector<std::array<std::array<DevBuf<float>, 2>, 2>> recv_;  // [rank][buffer][halo: lower, upper]
};

}  // namespace gpsm::apps::stencil3d
