#pragma once
// Whether a context's GPUs can hold a distributed array: VMM on every GPU, peer access on every
// ordered pair (not needed for replicated copies, each used by its own GPU). Plain C++ over the
// attribute lookups, so the CPU tests check the messages of machines gpsm never ran on.
#include <functional>
#include <string>
#include <vector>

namespace gpsm::detail {

// "" when the devices qualify; else the whole error message ("gpsm: distributed array: <why>;
// <what to do>") naming the first GPU or ordered pair that does not, and the --devices to keep.
// vmm(d): CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED of CUDA device d;
// peer(a, b): cudaDeviceCanAccessPeer of a onto b.
std::string distributed_support_problem(const std::vector<int>& devices, bool replicate,
                                        const std::function<int(int)>& vmm, const std::function<int(int, int)>& peer);

}  // namespace gpsm::detail
