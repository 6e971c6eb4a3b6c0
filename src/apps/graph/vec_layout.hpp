#pragma once
// How a published vector lies in GPU memory, and what moving it costs (plain C++, CPU-tested).
//
// Rows are split into contiguous parts, one per rank (graph_io::partition_rows_equal or _by_nnz).
// Every copy of the vector (a replica per GPU, a managed buffer, a GPS array) has ranks x chunk
// slot rows of `width` floats: rank r's rows sit at slots [r chunk, r chunk + part size), the rest
// of its chunk is padding. Equal chunks make NCCL's allgather and the memcpy copies one
// contiguous run per rank, and the owner of a slot is slot / chunk. Kernels index the vector by
// slot; the CSR slices a rank works on carry slot columns (slice_rows).
#include <cstdint>
#include <vector>

#include "apps/graph_io/graph.hpp"
#include "apps/harness/paradigm.hpp"

namespace gpsm::apps::graph {

struct VecLayout {
  std::vector<graph_io::RowRange> parts;  // per rank, original row ids
  std::int64_t chunk = 1;              // slot rows per rank (largest part, at least 1)
  int width = 1;                       // floats per row

  int ranks() const { return static_cast<int>(parts.size()); }
  std::int64_t rows() const { return parts.empty() ? 0 : parts.back().end; }
  std::int64_t part_rows(int r) const { return parts[r].end - parts[r].begin; }
  int owner(std::int64_t row) const;             // rank whose part holds the original row
  std::int64_t slot(std::int64_t row) const;     // its slot row
  std::int64_t elems() const { return chunk * ranks() * width; }
  std::int64_t first_elem(int r) const { return r * chunk * width; }
  std::int64_t owned_elems(int r) const { return part_rows(r) * width; }
};

// parts must cover [0, rows) contiguously in order (throws gpsm::Error otherwise).
VecLayout make_layout(std::vector<graph_io::RowRange> parts, int width);
// Rows split equally or by nnz of m (whose rows are the vector's rows).
VecLayout layout_for(const graph_io::Csr& m, int ranks, bool balance_nnz, int width);

// Original order <-> slot order (padding filled with `pad`).
std::vector<float> to_slots(const VecLayout& l, const std::vector<float>& v, float pad);
std::vector<float> from_slots(const VecLayout& l, const std::vector<float>& s);

// Rows [rows.begin, rows.end) of m, with each column replaced by its slot row in `cols`.
struct Slice {
  std::vector<std::int64_t> row_ptr;  // part rows + 1, from 0
  std::vector<std::int32_t> col;      // slot rows of the column vector
  std::vector<float> val;             // empty when m has none
  std::int64_t rows() const { return static_cast<std::int64_t>(row_ptr.size()) - 1; }
};
Slice slice_rows(const graph_io::Csr& m, graph_io::RowRange rows, const VecLayout& cols);

// Bytes one publication of the vector (every rank writes its rows once) puts on links between
// GPUs in paradigm `par`: memcpy, proact and p2p_inline send each rank's rows to every other rank; nccl's
// allgather moves whole chunks, padding included; single and infinite move none. -1 where the
// paradigm does not know (um, um_hints: driver page migration; gps, gps_all: the runtime counts;
// rdl: see remote_read_bytes).
double publish_bytes(Paradigm par, const VecLayout& l);
// rdl: bytes of the vector rank r's slice reads from other GPUs' memory (one element row per
// entry whose column another rank owns; demand loads, repeated reads counted each time).
double remote_read_bytes(const VecLayout& cols, const Slice& s, int r);

// GPS: the pages each rank touches in one iteration (its own rows, which it writes, and the rows
// its slices read), as subscriber masks (bit r = rank r); 0 for a page nobody touches.
std::vector<std::uint32_t> predicted_masks(const VecLayout& l, const std::vector<std::vector<const Slice*>>& reads,
                                           std::uint64_t page_bytes);
// Value bytes one publication delivers to other subscribers under `masks`: each rank's rows go to
// the other subscribers of the page they lie in.
double gps_publish_bytes(const VecLayout& l, const std::vector<std::uint32_t>& masks, std::uint64_t page_bytes);
// Entry k - 1: pages with k subscribers (GPS paper Fig 9); masks of 0 are not counted.
std::vector<double> subscriber_histogram(const std::vector<std::uint32_t>& masks, int ranks);

// Threads per row of the sparse dot products (graph_kernels.cu): the smallest power of two from 1
// to 32 that is >= the mean row length.
int lanes_for(double mean_row_nnz);
// log2(lanes) for the kernels' row/lane split; Error unless lanes is 1, 2, 4, 8, 16 or 32.
int lane_shift(int lanes);

}  // namespace gpsm::apps::graph
