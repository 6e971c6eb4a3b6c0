#pragma once
// Where each fd3d paradigm's step reads and writes (fd3d_step.hpp's Sources and Sinks), from the
// slabs (apps/stencil/decomp.hpp) and, for rdl, from the distributed array's map. Plain C++: the
// runs (fd3d_runs_cuda.cpp) and the CPU tests build their steps with these same functions.
#include <cstdint>

#include "apps/fd3d/fd3d_step.hpp"
#include "apps/stencil/decomp.hpp"
#include "gpsm/ownership_map.hpp"

namespace gpsm::apps::fd3d {

Box box_of(const Slab3D& s);

// A rank's own box with its halo planes, in one buffer of Slab3D::local cells (single, memcpy,
// p2p_inline, infinite).
Piece box_piece(const Slab3D& s, const float* buf);
Sink box_sink(const Slab3D& s, float* buf);
// p2p_inline: slab `from`'s cells stored into its neighbour `to`'s box buffer `dst`, same
// coordinates but the split one, which moves into the neighbour's halo planes (stencil3d's
// push_between mapping).
Sink push_sink(const Slab3D& from, const Slab3D& to, float* dst);

// rdl: the distributed array holding the whole volume, one block per rank: the ranks' spans along
// the split axis (span_of: its owned planes, and the boundary layer below the first rank and
// above the last), each block the whole extent of the two other axes. So each GPU's memory holds
// exactly what its rank updates, and the halo planes it reads are in its neighbours' blocks.
BlockSpec slab_blocks(const Slab3D& any_rank);

// Slab s's step sources over a distributed array with map `host` (its host lookup: the block
// boxes and byte offsets are the same on every GPU) whose range starts at `base` (the view's data()
// on the GPU that runs the step): its own block, and its neighbours' blocks for the halo planes.
// Throws gpsm::Error when the map's blocks are not slab_blocks(s) (a block that is not a whole
// slab, or halo planes outside the neighbour's block).
Sources distributed_sources(const Slab3D& s, const OwnershipLookup& host, const void* base);
// Where slab s's updated cells go in the other array (same map): its own block.
Sink distributed_sink(const Slab3D& s, const OwnershipLookup& host, void* base);

}  // namespace gpsm::apps::fd3d
