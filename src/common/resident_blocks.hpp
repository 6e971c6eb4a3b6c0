#pragma once
// Blocks of `kernel` at `threads` per block (no dynamic shared memory) the current device holds at
// once, over all its SMs; cached per (kernel, device, threads): launchers ask it on every launch
// of a host-driven loop, where the occupancy query would cost more than the launch.
namespace gpsm {

long long resident_blocks(const void* kernel, int threads);

}  // namespace gpsm
