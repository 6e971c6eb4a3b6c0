#pragma once
// Interconnect packet accounting for the simulator: how many bytes cross a link (headers,
// framing, link-layer packets, flit padding) to deliver a payload, per protocol generation.
// Plain C++; the numbers and their sources are documented next to each protocol in link.cpp and
// docs/sim.md, and checked against hand-computed cases in tests/cpu/test_sim_link.cpp.
#include <cstdint>
#include <string>

namespace gpsm::sim {

enum class LinkKind : std::uint8_t { pcie3, pcie4, pcie5, pcie6, nvlink2, nvlink3, nvlink4 };
const char* link_name(LinkKind k);
LinkKind parse_link(const std::string& s);  // "pcie4", "nvlink4", ...; throws std::invalid_argument

struct LinkParams {
  LinkKind kind = LinkKind::pcie4;
  double raw_GBps = 32;            // per direction, after line encoding (e.g. PCIe4 x16: 31.5)
  double latency_ns = 500;         // one-way, request to delivery
  std::uint32_t max_payload = 256; // bytes per packet (PCIe max payload size; NVLink 256)
};
LinkParams default_link(LinkKind k);  // x16 PCIe / one GPU's aggregate NVLink of that generation

// One write of `payload` bytes (a DMA chunk, a coalesced store, a packed FinePack message) as
// the link carries it: split into packets of at most max_payload; every packet's header,
// framing and CRC; flit padding where the protocol has flits; link-layer (ACK / flow-control)
// packets amortized per data packet. Returns wire bytes (>= payload).
double wire_bytes_write(const LinkParams& l, double payload);
// A read of `payload` bytes: the request packet one way plus the completion(s) the other way;
// both directions' wire bytes.
double wire_bytes_read(const LinkParams& l, double payload);
// Time for `wire` bytes on one direction of the link at its raw bandwidth (no latency).
double wire_time_s(const LinkParams& l, double wire);

// FinePack (PROACT dissertation ch. V): stores to one destination packed into one outer packet of at most
// max_payload bytes: outer header once, then per sub-transaction `subheader` bytes (2..6) plus
// its data. Returns wire bytes for `stores` stores of `bytes_each`, after the remote write
// queue has coalesced them into `runs` contiguous runs (each run one sub-transaction).
double finepack_wire_bytes(const LinkParams& l, double runs, double payload, int subheader);

}  // namespace gpsm::sim
