#pragma once
// Copy engines without a host round trip (PROACT's copy_engine agent): a stream waits until a
// 32-bit flag in device memory reaches a value (cuStreamWaitValue32, cyclic >=), then runs the
// copies behind it. The driver call is fetched through the runtime's entry points, so gpsm does
// not link libcuda. Used by the engine (engine_cuda.cpp) and the jacobi2d, heat3d and wave3d proact paradigms.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>

#include "proact/stream_watch.hpp"

namespace gpsm::proact {

// Whether stream waits work on CUDA device `device`: the entry point exists and a wait whose
// condition already holds succeeds on a scratch stream. "" when they do, else why not (the
// driver's answer and CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1). Sets the current device.
std::string stream_wait_unsupported(int device);

// Whether a stream wait can be captured into a CUDA graph on CUDA device `device`: a wait captured
// on a scratch stream becomes a batch memory operation node (CU_GRAPH_NODE_TYPE_BATCH_MEM_OP),
// and the graph instantiates and runs (its condition already holds). "" when it does, else what
// failed. The driver documents the node type and cuGraphAddBatchMemOpNode, not the capture of
// cuStreamWaitValue32 itself, so this asks the driver rather than assuming. Sets the current
// device.
std::string stream_wait_capture_unsupported(int device);

// Enqueues "wait until (int32)(*flag - value) >= 0" on `s` (flag: device or host-mapped memory of
// the stream's device). Throws gpsm::Error naming `what` when the driver refuses. With `watch`,
// notes the wait there for the watchdog: the host waits behind it then go through
// bounded_*_wait below with the same ledger.
void stream_wait_geq(cudaStream_t s, const std::uint32_t* flag, std::uint32_t value, const char* what,
                     StreamWaits* watch = nullptr);

// Host waits bounded by the stream-wait watchdog (proact/stream_watch.hpp). Polls `query`
// (cudaStreamQuery, cudaEventQuery...) until it leaves cudaErrorNotReady and returns that answer
// (cudaSuccess or the error, for the caller to check), clearing `waits`. Every `timeout_ms` without an answer it reads the
// counters `waits` notes (copies on private streams, each bounded): if one is short of its value,
// it prints and throws a gpsm::Error naming each such counter (what, device, address, expected,
// seen: stream_wait_timeout_message) after writing their awaited values so the held streams
// drain and the context survives; if none is, it waits on (a long kernel is not a missing
// counter).
// The watchdog's own stream and pinned words on `device`, made once per process at the first wait
// noted there (stream_wait_geq does): page-locked allocation and its release synchronize with the
// device, so a watchdog that allocated while a counter was withheld would hang on the held stream
// it was meant to report (it did, on 2xH200).
void prepare_watch(int device);

cudaError_t bounded_host_wait(const std::function<cudaError_t()>& query, StreamWaits& waits,
                              std::uint64_t timeout_ms, const std::string& host_what);
cudaError_t bounded_stream_wait(cudaStream_t s, StreamWaits& waits, std::uint64_t timeout_ms,
                                const std::string& host_what);
cudaError_t bounded_event_wait(cudaEvent_t e, StreamWaits& waits, std::uint64_t timeout_ms,
                               const std::string& host_what);

}  // namespace gpsm::proact
