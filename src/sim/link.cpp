// Interconnect packet accounting (see link.hpp and docs/sim.md "Links"). Every constant below
// says where it comes from. Sources: the PROACT dissertation (ch. II Fig 2.2, ch. V FinePack
// Tables 5.1-5.3; docs/references.md).
//
// Calibration points the model reproduces (tests/cpu/test_sim_link.cpp):
//  - PROACT dissertation Fig 2.2: 4-B stores reach 14 % goodput on PCIe and 8 % on NVLink;
//  - our H200 NVLink4 fine-grained store curve (results/nvidia-h200-x4/2026-11-21_bb9b15c_scope-full/
//    machine_model.json, goodput "sm_store_granularity"): 4/8/16/32/64/128-B stores reach
//    35/104/208/280/335/370 GB/s, i.e. ratios 2.96, 2.00, 1.35, 1.20, 1.10 between neighbours;
//    the NVLink flit model below gives 3.00, 2.00, 1.33, 1.20, 1.11.
#include "sim/link.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpsm::sim {

namespace {

// ---------------------------------------------------------------- PCIe 3/4/5 (128b/130b) ------
// Per TLP on the wire (PCIe Base Spec 3.0+ framing; Intel AN 855 "Protocol Overhead" lists the
// fields: framing, sequence number, 3-4 DW header, LCRC; ECRC optional and not used here):
//  - STP framing token, 4 B. In 128b/130b framing the 12-bit sequence number travels inside
//    the STP token (with TLP length and frame CRC), so "framing + sequence number" is 4 B.
//    (Gen1/2 8b/10b: STP 1 + seq 2 + END 1 = 4 B as well.)
constexpr double kPcieStp = 4;
//  - LCRC, 4 B (one DW) per TLP.
constexpr double kPcieLcrc = 4;
//  - Memory request header, 4 DW = 16 B: 64-bit addresses (GPU BARs sit above 4 GiB; a 3 DW
//    header is only for 32-bit addresses). PROACT dissertation Table 5.1 lists its fields (62-bit address).
constexpr double kPcieMemHdr = 16;
//  - Completion header (CplD), 3 DW = 12 B.
constexpr double kPcieCplHdr = 12;
//  - Payload is carried in whole DWs (Length field counts DWs; byte enables mark partial ones).
constexpr double kDw = 4;
// Data-link layer packets: a DLLP is 6 B plus a 2-B SDP token in 128b/130b (Gen1/2: SDP + END
// symbols), 8 B = 2 DW on the wire (Intel AN 855: "The DLLPs are two dwords"). Ack and UpdateFC
// DLLPs flow in the opposite direction from the TLPs they answer; with traffic both ways they
// share the link with the other direction's TLPs, so we charge them to the data packets.
constexpr double kDllp = 8;
// Amortization (assumption, stated): one Ack DLLP per 8 TLPs (Acks are coalesced up to the
// AckNak latency timer) and one UpdateFC per 8 TLPs (credits returned in batches). 2 B per TLP.
// With it a 4-B store is 4 / 30 = 13.3 % efficient; PROACT dissertation Fig 2.2 reports 14 % (4 / 28, no
// DLLPs), so the amortized DLLP cost is small against the dissertation's figure either way.
constexpr double kTlpsPerAck = 8;
constexpr double kTlpsPerUpdateFc = 8;
constexpr double kPcieDllpPerTlp = kDllp / kTlpsPerAck + kDllp / kTlpsPerUpdateFc;  // 2 B
// Per-TLP overhead of a memory write: 4 + 16 + 4 + 2 = 26 B.
constexpr double kPcieWriteOverhead = kPcieStp + kPcieMemHdr + kPcieLcrc + kPcieDllpPerTlp;
// SKP ordered sets (one 16-B SKP block per 370..375 16-B data blocks per lane, ~0.3 %) are
// ignored.
// Max_Read_Request_Size: 512 B, the usual default (PCIe Device Control register: 128..4096 B).
constexpr double kPcieMaxReadRequest = 512;

// ---------------------------------------------------------------- PCIe 6 (FLIT mode) ----------
// A flit is 256 B: 236 B of TLP bytes, 6 B DLP (Ack/Nak and flow-control credits: no separate
// DLLPs), 8 B CRC, 6 B FEC (PCIe 6.0 flit layout, e.g. the "PCIe Gen6 vs legacy" notes at
// muditbhargava66.github.io). TLPs pack back to back into the 236-B area and span flits; there
// is no per-TLP STP/LCRC. We charge every TLP byte 256/236 wire bytes: the traffic the simulator
// models is streams of packets, where neighbouring TLPs fill each flit. (A lone packet would
// pad the rest of its flit with NOPs; that latency case is not charged.)
constexpr double kFlitBytes = 256;
constexpr double kFlitTlpBytes = 236;
// Flit-mode TLP header: a 64-bit memory request is still 4 DW (16 B); the optional header
// content (OHC) words for partial byte enables / PASID are ignored; header compression: none
// (we found no exact numbers for it).
constexpr double kFlitMemHdr = 16;
constexpr double kFlitCplHdr = 12;

// ---------------------------------------------------------------- NVLink 2/3/4 ----------------
// NVLink packets are made of 16-B (128-bit) flits: a header flit (command, address, CRC, and the
// link-level ack/credit fields: no separate link-layer packets), an optional address-extension
// flit, an optional byte-enable flit, then up to 16 data flits = 256 B of payload (Foley &
// Danskin, "Ultra-Performance Pascal GPU and NVLink Interconnect", IEEE Micro 37(2), 2017,
// for NVLink 1; NVLink 2 keeps the packet format). Assumption: NVLink 3 (A100) and 4 (H100/H200)
// keep this 16-B flit structure; NVIDIA does not publish their packet formats. Evidence: our
// H200 NVLink4 store-granularity curve matches it to 2 % at every size (header comment above).
constexpr double kNvFlit = 16;
constexpr double kNvMaxPayload = 256;
// Byte-enable flit: needed when the write does not cover whole 8-B words. Calibrated: PROACT dissertation
// Fig 2.2 gives 8 % for 4-B stores = 4 / 48 (header + BE + one data flit), and on our H200 an
// 8-B store line delivers 2.96x the 4-B one (4/48 -> 8/32 is 3.0x; with a BE flit at 8 B it
// would be 2.0x).
constexpr double kNvBeGranule = 8;
// The address-extension flit is sent only when the upper address bits change between packets;
// in a stream it is amortized to ~0 and not charged.

double ceil_div(double a, double b) { return std::ceil(a / b - 1e-12); }
double pad_to(double x, double g) { return ceil_div(x, g) * g; }
bool is_pcie_legacy(LinkKind k) {
  return k == LinkKind::pcie3 || k == LinkKind::pcie4 || k == LinkKind::pcie5;
}
bool is_nvlink(LinkKind k) {
  return k == LinkKind::nvlink2 || k == LinkKind::nvlink3 || k == LinkKind::nvlink4;
}

// Payload bytes split into packets of at most mps; returns {packets, sum of padded payloads}.
struct Split {
  double packets = 0;
  double padded = 0;
};
Split split(double payload, double mps, double granule) {
  Split s;
  if (payload <= 0) return s;
  s.packets = ceil_div(payload, mps);
  const double last = payload - (s.packets - 1) * mps;
  s.padded = (s.packets - 1) * pad_to(mps, granule) + pad_to(last, granule);
  return s;
}

// NVLink packet of `data` payload bytes, a write (header + optional BE + data flits).
double nv_write_packet(double data) {
  const bool partial = std::fmod(data, kNvBeGranule) > 1e-9;
  return kNvFlit + (partial ? kNvFlit : 0) + pad_to(data, kNvFlit);
}

double max_payload(const LinkParams& l) {
  if (l.max_payload == 0) throw std::invalid_argument("link: max_payload must be > 0");
  double m = l.max_payload;
  // An NVLink packet carries at most 16 data flits whatever max_payload says.
  if (is_nvlink(l.kind)) m = std::min(m, kNvMaxPayload);
  return m;
}

}  // namespace

const char* link_name(LinkKind k) {
  switch (k) {
    case LinkKind::pcie3: return "pcie3";
    case LinkKind::pcie4: return "pcie4";
    case LinkKind::pcie5: return "pcie5";
    case LinkKind::pcie6: return "pcie6";
    case LinkKind::nvlink2: return "nvlink2";
    case LinkKind::nvlink3: return "nvlink3";
    case LinkKind::nvlink4: return "nvlink4";
  }
  return "?";
}

LinkKind parse_link(const std::string& s) {
  for (LinkKind k : {LinkKind::pcie3, LinkKind::pcie4, LinkKind::pcie5, LinkKind::pcie6,
                     LinkKind::nvlink2, LinkKind::nvlink3, LinkKind::nvlink4})
    if (s == link_name(k)) return k;
  throw std::invalid_argument("unknown link '" + s +
                              "' (valid: pcie3, pcie4, pcie5, pcie6, nvlink2, nvlink3, nvlink4)");
}

LinkParams default_link(LinkKind k) {
  LinkParams l;
  l.kind = k;
  switch (k) {
    // PCIe x16 per direction after 128b/130b: 8 / 16 / 32 GT/s x 16 lanes x 128/130 / 8 bits.
    case LinkKind::pcie3: l.raw_GBps = 15.75; break;
    case LinkKind::pcie4: l.raw_GBps = 31.5; break;
    case LinkKind::pcie5: l.raw_GBps = 63.0; break;
    // PCIe 6: 64 GT/s PAM4 x 16 lanes, 1b/1b: 128 GB/s of flits. (The 121 GB/s often quoted is
    // 128 x 242/256, FEC and CRC taken out; here the flit overhead is in wire_bytes instead, so
    // the raw rate is the flit rate: TLP bytes flow at 128 x 236/256 = 118 GB/s either way.)
    case LinkKind::pcie6: l.raw_GBps = 128.0; break;
    // NVLink per GPU, per direction: V100 6 NVLink2 links x 25 GB/s = 150; A100 12 NVLink3 links
    // x 25 = 300; H100/H200 18 NVLink4 links x 25 = 450 (NVIDIA V100/A100/H100 datasheets and
    // architecture whitepapers).
    case LinkKind::nvlink2: l.raw_GBps = 150.0; break;
    case LinkKind::nvlink3: l.raw_GBps = 300.0; break;
    case LinkKind::nvlink4: l.raw_GBps = 450.0; break;
  }
  if (is_nvlink(k)) {
    l.max_payload = static_cast<std::uint32_t>(kNvMaxPayload);
    // One-way GPU-to-GPU store delivery. NVLink4: half our measured H200 peer-load round trip
    // (lat_peer_load 0.85 us, machine_model.json above) = 425 ns. NVLink2/3: ~700 ns, an
    // estimate (order of V100/A100 peer-access latency; not measured here).
    l.latency_ns = k == LinkKind::nvlink4 ? 425 : 700;
  } else {
    // Max payload size 256 B: what GPU platforms typically negotiate (128..4096 allowed; PROACT dissertation
    // Table 5.3 used 4096 for FinePack, set max_payload to reproduce it).
    l.max_payload = 256;
    // One-way endpoint-to-endpoint through one link: ~500 ns, an estimate in the 500-1000 ns
    // range usually quoted for PCIe P2P; a switch adds its own hop (system.cpp).
    l.latency_ns = 500;
  }
  return l;
}

double wire_bytes_write(const LinkParams& l, double payload) {
  if (payload <= 0) return 0;
  const double mps = max_payload(l);
  if (is_pcie_legacy(l.kind)) {
    const Split s = split(payload, mps, kDw);
    return s.packets * kPcieWriteOverhead + s.padded;
  }
  if (l.kind == LinkKind::pcie6) {
    const Split s = split(payload, mps, kDw);
    return (s.packets * kFlitMemHdr + s.padded) * kFlitBytes / kFlitTlpBytes;
  }
  // NVLink: full packets of 256 B, then the remainder.
  const double full = std::floor(payload / mps + 1e-12);
  const double rest = payload - full * mps;
  double wire = full * nv_write_packet(mps);
  if (rest > 1e-9) wire += nv_write_packet(rest);
  return wire;
}

double wire_bytes_read(const LinkParams& l, double payload) {
  if (payload <= 0) return 0;
  const double mps = max_payload(l);
  if (is_pcie_legacy(l.kind) || l.kind == LinkKind::pcie6) {
    // Requests: one header-only MRd TLP per Max_Read_Request_Size bytes. Completions: the
    // completer returns each request's data in CplD TLPs of at most max_payload bytes (aligned
    // requests: read-completion-boundary splits coincide with these).
    const double mrrs = kPcieMaxReadRequest;
    const double full_req = std::floor(payload / mrrs + 1e-12);
    const double rest = payload - full_req * mrrs;
    const double requests = full_req + (rest > 1e-9 ? 1 : 0);
    const Split per_full = split(mrrs, mps, kDw);
    const Split per_rest = split(rest, mps, kDw);
    const double cpls = full_req * per_full.packets + per_rest.packets;
    const double data = full_req * per_full.padded + per_rest.padded;
    if (l.kind == LinkKind::pcie6)
      return (requests * kFlitMemHdr + cpls * kFlitCplHdr + data) * kFlitBytes / kFlitTlpBytes;
    const double framing = kPcieStp + kPcieLcrc + kPcieDllpPerTlp;
    return requests * (kPcieMemHdr + framing) + cpls * (kPcieCplHdr + framing) + data;
  }
  // NVLink: a header-flit request per packet of up to 256 B, a response of header + data flits.
  const Split s = split(payload, mps, kNvFlit);
  return s.packets * kNvFlit /* requests */ + s.packets * kNvFlit /* response headers */ + s.padded;
}

double wire_time_s(const LinkParams& l, double wire) {
  if (!(l.raw_GBps > 0)) throw std::invalid_argument("link: raw_GBps must be > 0");
  return wire / (l.raw_GBps * 1e9);
}

double finepack_wire_bytes(const LinkParams& l, double runs, double payload, int subheader) {
  if (subheader < 2 || subheader > 6)
    throw std::invalid_argument("finepack: subheader must be 2..6 bytes (PROACT dissertation Table 5.2)");
  if (payload <= 0 || runs <= 0) return 0;
  const double mps = max_payload(l);
  // Outer payload: every run's sub-transaction header (PROACT dissertation Table 5.2: 10-bit length plus
  // 6..38 address-offset bits = 2..6 B) followed by its data, 1-B aligned inside the outer packet.
  const double content = payload + runs * subheader;
  // Outer packets of at most max_payload bytes (the remote write queue flushes when the
  // available-payload register runs out, PROACT dissertation §5.3.2); the outer length field is in DWs, so
  // each outer packet is padded to 4 B (the last-BE field carries the 2 LSBs of the size).
  const double outer = ceil_div(content, mps);
  if (is_pcie_legacy(l.kind)) {
    const Split s = split(content, mps, kDw);
    return outer * kPcieWriteOverhead + s.padded;
  }
  if (l.kind == LinkKind::pcie6) {
    const Split s = split(content, mps, kDw);
    return (outer * kFlitMemHdr + s.padded) * kFlitBytes / kFlitTlpBytes;
  }
  // NVLink analogue (PROACT dissertation §5.3.2 "Applicability Beyond PCIe"): one header flit per outer
  // packet, content in 16-B data flits; no byte-enable flit (sub-headers carry exact lengths).
  const Split s = split(content, mps, kNvFlit);
  return outer * kNvFlit + s.padded;
}

}  // namespace gpsm::sim
