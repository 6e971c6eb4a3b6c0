#pragma once
// The timing core every `gpsm scope` test uses (the method of nvbandwidth / Comm|Scope):
//  - each stream is first held by a gate kernel spinning on a host-mapped flag, so all operations
//    are enqueued before any starts (enqueue cost excluded, concurrent copies start together);
//  - start/stop events bracket a back-to-back loop of the operation; the loop length is chosen so
//    one repetition lasts about Options::target_rep_s;
//  - warm-up runs first; repetitions give raw samples (seconds per operation).
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/device.hpp"
#include "scope/registry.hpp"

namespace gpsm::scope {

// Host-mapped flag that gate kernels spin on. The spin is bounded: after timeout it gives up and
// records that it did, and the measurement is rejected rather than silently skewed.
class Gate {
 public:
  Gate();
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  void hold(cudaStream_t s);  // enqueue a spin kernel on s (current device must own s)
  void release();             // let every held stream go
  void reset();               // arm for the next batch; throws if a previous gate timed out
 private:
  volatile int* flag_ = nullptr;     // host pinned, mapped
  volatile int* timed_out_ = nullptr;
};

// One operation on one stream: `enqueue(stream)` issues it once.
struct StreamOp {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::function<void(cudaStream_t)> enqueue;
};

// Spans of a concurrent batch, per repetition, in seconds for the whole loop of `iters`:
//  device_span_s[d]: earliest start to latest stop among device d's streams (events of one device
//                    are comparable); host_span_s: gate release to the last stop, host clock.
// Aggregates must divide total bytes by a span: summing per-stream bandwidths over-counts when
// streams end at different times (a stream running alone at the end looks like full speed).
struct ConcurrentSpans {
  std::map<int, std::vector<double>> device_span_s;
  std::vector<double> host_span_s;
};

// Times `iters` back-to-back runs of each op, all ops concurrently, `reps` times (after `warmup`
// untimed runs of each). Returns per-op samples in seconds per single operation.
std::vector<std::vector<double>> time_concurrent(std::vector<StreamOp>& ops, int iters, int reps,
                                                 int warmup, bool gated = true, ConcurrentSpans* spans = nullptr);

// Single op convenience; iterations picked from a probe run so one repetition ~ o.target_rep_s.
std::vector<double> time_op(StreamOp op, const Options& o, bool gated = true);
int pick_iters(StreamOp& op, const Options& o, int max_iters = 1000);

// Seconds between events recorded around `enqueue(s)` on s (synchronizes on the stop event).
double time_on_stream(cudaStream_t s, const std::function<void()>& enqueue);

// Host-clock samples of a synchronous operation: per repetition (after o.warmup untimed ones),
// `n` back-to-back calls of `once`, giving seconds per call. `after_rep`, if given, runs after each
// repetition, outside the timed span (e.g. draining the queues asynchronous calls filled).
std::vector<double> host_loop_samples(const Options& o, int n, const std::function<void()>& once,
                                      const std::function<void()>& after_rep = {});

// "gpu3": the node name every test, the model and the topology use for CUDA device 3.
std::string gpu_name(int device);

// RAII stream + events on a device.
struct DeviceStream {
  int device;
  cudaStream_t s = nullptr;
  explicit DeviceStream(int dev);
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
};




}  // namespace gpsm::scope
