#pragma once
// Traces of the graph apps pagerank and sssp (src/apps/graph): an instrumented CPU execution
// of their kernels' thread mapping over the real graph (the generators of gpsm bench's graph
// specs, graph_spec.hpp), with the values of the CPU references (graph_refs.hpp). docs/sim.md,
// "Graph apps". Plain C++ (no CUDA).
#include <cstdint>
#include <string>
#include <vector>

#include "apps/graph_io/graph.hpp"
#include "sim/trace.hpp"
#include "sim/trace_gen.hpp"

namespace gpsm::sim {

// pagerank or sssp.
bool is_graph_app(const std::string& app);

// Recorded edges of a trace when TraceRequest::sample <= 0 (auto): every block up to this many
// edges, then the fraction kGraphAutoEdges / nnz of the blocks.
constexpr double kGraphAutoEdges = double(1 << 22);

// The trace of r.app on the graph r.problem.graph (a gpsm bench graph spec; @nnz splits rows by
// nnz), seed r.problem.seed, r.problem.iters iterations. Layouts: "slabs" (a full copy of the
// vector per GPU, each row's value stored into every GPU's copy: p2p_inline's kernel; memcpy and
// infinite replay it), "remote" (rdl: x[col] loaded from the owner's copy, stores local),
// "grid" (um, um_hints: one managed vector, per-GPU spans), "replicas" (gps_hw, finepack: a GPS
// replica per GPU). result: the vector after the last iteration, in vertex order (the CPU
// reference's). Throws std::invalid_argument on a bad app, layout or graph.
Trace graph_trace(const TraceRequest& r, std::vector<float>* result);

// The same on a given in-edge CSR (rows pull from columns; square): pagerank takes inv_deg
// (1 / out-degree per vertex), sssp the CSR's weights and `source`. For tests and hand-made graphs.
Trace graph_trace_csr(const TraceRequest& r, const graph_io::Csr& in, const std::vector<float>& inv_deg,
                      std::int64_t source, std::vector<float>* result);

}  // namespace gpsm::sim
