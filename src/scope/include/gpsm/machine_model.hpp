#pragma once
// The machine model: what `gpsm scope` measured, reduced to a few numbers per path, in the form
// the PROACT autotuner and the simulator read. JSON schema "gpsm.machine_model", documented in
// docs/machine-model.md.
//
// Transfer-time model (the 2018 thesis, section 6.2): t(bytes) = c + bytes / BW, piecewise in the
// transfer size because small transfers take other paths than large ones (caches, copy-engine
// setup, kernel vs DMA copies). Each segment is valid for min_bytes <= bytes < max_bytes.
//
// Units in memory are SI base units: bytes, seconds, bytes per second. The JSON writes c in
// microseconds ("c_us") and bandwidth in GB/s = 1e9 B/s ("bw_GBps") to be readable.
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "gpsm/remote_study.hpp"

namespace gpsm::model {

// One measured transfer: `bytes` moved in `seconds`.
struct Sample {
  double bytes;
  double seconds;
};

// t = c_s + bytes / bw_Bps for min_bytes <= bytes < max_bytes.
// bw_Bps == +inf means the data showed no size dependence (latency only): t = c_s.
// c_s >= 0 in the first segment (it is the fixed cost of a transfer). A later segment's c_s is
// the intercept of its line and may be negative (e.g. bandwidth dropping past a cache size makes
// the line steeper); the time it predicts inside its own range is never negative.
// max_rel_err: the largest |predicted - measured| / measured over the segment's sizes (measured =
// median of the samples at that size).
struct Segment {
  double min_bytes = 0;
  double max_bytes = std::numeric_limits<double>::infinity();
  double c_s = 0;
  double bw_Bps = std::numeric_limits<double>::infinity();
  double max_rel_err = 0;
};

struct LinearFit {
  double c_s = 0;
  double bw_Bps = std::numeric_limits<double>::infinity();
  double max_rel_err = 0;
};

// Least-squares fit of t = c + bytes/bw minimising the RELATIVE error (weight 1/t^2), so that a
// 4 B and a 1 GiB transfer count alike. Repeated samples at one size are reduced to their median
// first (robust to warm-up outliers; a size measured 100 times does not outweigh one measured 5).
// Constraints: c >= 0 and 1/bw >= 0; when the best slope is <= 0 (latency-only data) bw = +inf.
// Throws std::invalid_argument for fewer than 2 distinct sizes, or for a sample with negative or
// non-finite bytes, or non-positive or non-finite seconds.
LinearFit fit_linear(const std::vector<Sample>& samples);

struct PiecewiseFit {
  std::vector<Segment> segments;  // contiguous; first min_bytes = 0, last max_bytes = +inf
  double max_rel_err = 0;         // max over segments
};

// Piecewise fit: one segment if its max relative error is <= tolerance; otherwise an exhaustive
// search over breakpoints between measured sizes (each segment >= 2 distinct sizes) for the
// fewest segments (up to max_segments) whose max relative error is <= tolerance; if none meets
// it, the fit with the smallest max relative error. Throws std::invalid_argument for fewer than 2
// distinct sizes, bad samples (as fit_linear), max_segments < 1 or tolerance < 0.
// Each segment is fitted as fit_linear does (first segment: c >= 0; later ones: see Segment).
// The boundary between two segments lies between the last measured size of one and the first of
// the next: where the two lines cross there (prediction continuous), otherwise at that first size.
PiecewiseFit fit_piecewise(std::vector<Sample> samples, int max_segments = 3,
                           double tolerance = 0.05);

// Seconds for one transfer of `bytes` (the segment with min_bytes <= bytes < max_bytes; bytes
// below 0 use the first segment). Throws std::invalid_argument on a fit without segments.
double predict_seconds(const PiecewiseFit& fit, double bytes);

// ---- the model containers ----

// Transfer time of one (src, dst, mechanism, direction) path as a function of size.
struct PathModel {
  std::string src, dst;    // node names: "gpu0", "gpu1", "host_numa0", ...
  std::string mechanism;   // the scope test that measured it, e.g. "ce_peer", "sm_copy:read"
  std::string direction;   // "uni" or "bidir"
  PiecewiseFit fit;
  double peak_GBps = 0;    // the best median bandwidth measured on the path, 1e9 B/s
};

// Achieved bandwidth vs bytes written per line/message (fine-grained stores, packing).
struct GoodputPoint {
  double bytes_per_line;
  double GBps;
};
struct GoodputCurve {
  std::string src, dst, mechanism;
  std::vector<GoodputPoint> points;  // ascending bytes_per_line
};

// How many thread blocks a copy kernel needs to saturate a path.
struct Saturation {
  std::string src, dst, mechanism;
  int blocks_to_saturate = 0;  // fewest blocks reaching >= 95% of peak_GBps
  double peak_GBps = 0;        // peak of the blocks curve
};

struct Latency {
  std::string name, src, dst;
  double median_us = 0, min_us = 0, max_us = 0;
};

// One GPU as CUDA and NVML describe it (the scope run's topology), for readers that model the
// GPU itself, not only its paths (the simulator: SMs, clock, L2).
struct GpuInfo {
  std::string node;            // "gpu0", ... (the node name the paths use)
  std::string name;            // "NVIDIA H200"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_max_mhz = 0;  // 0: unknown (NVML not available)
  double l2_bytes = 0, mem_bytes = 0;
};

// Bandwidth in the GPU's own memory against the footprint a test touches (tests whose x is
// footprint_bytes: sm_stream_local's copy loop, sm_gather_local's random loads): where the L2
// holds the data and where the HBM serves it.
struct FootprintPoint {
  double footprint_bytes;
  double GBps;
};
struct LocalCurve {
  std::string gpu, mechanism;           // "gpu0", "sm_stream_local"
  std::vector<FootprintPoint> points;   // ascending footprint_bytes
};

struct MachineModel {
  int schema_version = 1;
  std::string created;      // ISO 8601 time the measurements were taken
  std::string machine;      // host name / device description
  std::string gpsm_commit;  // git commit of the gpsm that measured it
  std::vector<PathModel> paths;
  std::vector<GoodputCurve> goodput;
  std::vector<Saturation> saturation;
  std::vector<Latency> latencies;
  std::vector<GpuInfo> gpus;         // optional: absent from models written before 2026-11-22
  std::vector<LocalCurve> local;     // optional, as gpus
  RemoteStudy remote_study;          // optional: the remote-access study (empty() when not run)

  // The path with these names, or nullptr.
  const PathModel* find(const std::string& src, const std::string& dst,
                        const std::string& mechanism, const std::string& direction = "uni") const;
  // The GPU with this node name, or nullptr.
  const GpuInfo* gpu(const std::string& node) const;
  // The local curve of this GPU and mechanism, or nullptr.
  const LocalCurve* local_curve(const std::string& gpu, const std::string& mechanism) const;
};

inline constexpr const char* kMachineModelSchema = "gpsm.machine_model";
inline constexpr int kMachineModelSchemaVersion = 1;

nlohmann::json to_json(const MachineModel& m);
// Validates schema and schema_version and every field; throws std::runtime_error naming the
// field path, e.g. "machine model: paths[3].segments[0].bw_GBps: expected number or null".
MachineModel model_from_json(const nlohmann::json& j);
// Throws std::runtime_error when the file cannot be written.
void save_model(const MachineModel& m, const std::string& path);
// Throws std::runtime_error when the file is missing, unreadable, not JSON or not a valid model.
MachineModel load_model(const std::string& path);

}  // namespace gpsm::model
