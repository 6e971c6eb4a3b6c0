#pragma once
// Reduces `gpsm scope` test results to the machine model (include/gpsm/machine_model.hpp).
#include <string>
#include <vector>

#include "gpsm/machine_model.hpp"
#include "gpsm/topology.hpp"
#include "scope/results.hpp"

namespace gpsm::scope {

// Rules (tests whose status is not ok are skipped; within a test only verified points count):
//  - unit "GB/s", x_name "bytes": one PathModel per series. src/dst/direction from the series'
//    params ("src", "dst", "direction", default "uni"); mechanism = test name, or
//    "<test>:<params[mechanism]>" when the series has a "mechanism" param. The fit uses every raw
//    time sample of every verified point (Sample{point.bytes, t}); peak_GBps = max point median.
//    Series without both "src" and "dst" params (aggregates such as all-to-all "total") and
//    series with fewer than 2 distinct verified sizes (nothing to fit) are skipped.
//  - unit "GB/s", x_name "bytes_per_line": one GoodputCurve per series (point medians).
//  - unit "GB/s", x_name "blocks": one Saturation per series: fewest blocks whose median reaches
//    >= 95% of the series' peak median.
//  - unit "us": one Latency per series from its first verified point (median/min/max of value);
//    name = test name (with ":<mechanism>" as above), src/dst from params ("" when absent). When
//    several series of one test would give the same (name, src, dst), each of them is named
//    "<name>:<series label>" instead, so that no two latencies are indistinguishable.
//  - unit "GB/s", x_name "footprint_bytes", src == dst (the GPU's own memory: sm_stream_local,
//    sm_gather_local): one LocalCurve per series (point medians, ascending footprint).
//  - anything else (e.g. x "vector_bytes", "gpus") does not enter the model.
//  - tests of group "remote" (the remote-access study) take none of the rules above: they become
//    the model's remote_study (scope/remote_study.hpp, derive_study).
// With `topo`, every GPU CUDA described (an SM count and an L2 size) becomes a GpuInfo, "gpu<index>".
gpsm::model::MachineModel build_model(const std::vector<TestResult>& tests,
                                      const std::string& machine, const std::string& created,
                                      const std::string& commit, const gpsm::topo::Topology* topo = nullptr);

}  // namespace gpsm::scope
