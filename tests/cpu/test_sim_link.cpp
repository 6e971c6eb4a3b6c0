// Link packet accounting of the simulator (src/sim/link.cpp) against hand-computed cases. The
// arithmetic is written out next to each check; the constants are sourced in link.cpp.
//
// PCIe 3/4/5, per TLP (memory write, 64-bit address):
//   STP token incl. sequence number 4 B + 4-DW header 16 B + LCRC 4 B
//   + amortized DLLPs (8-B Ack per 8 TLPs + 8-B UpdateFC per 8 TLPs = 2 B) = 26 B,
//   plus the payload padded to whole DWs (4 B); at most max_payload (256 B) per TLP.
// NVLink 2/3/4, per packet: header flit 16 B + byte-enable flit 16 B when the payload is not
//   whole 8-B words + data in 16-B flits; at most 256 B per packet.
// PCIe 6 flit mode: TLP = 16-B header + DW-padded payload, carried at 256 wire bytes per 236
//   TLP bytes.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/link.hpp"

using namespace gpsm::sim;

namespace {
constexpr double MiB = 1 << 20;
double eff(const LinkParams& l, double p) { return p / wire_bytes_write(l, p); }
}  // namespace

TEST(SimLink, NamesRoundTrip) {
  for (LinkKind k : {LinkKind::pcie3, LinkKind::pcie4, LinkKind::pcie5, LinkKind::pcie6,
                     LinkKind::nvlink2, LinkKind::nvlink3, LinkKind::nvlink4})
    EXPECT_EQ(parse_link(link_name(k)), k);
  try {
    parse_link("pcie7");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nvlink4"), std::string::npos);
  }
}

TEST(SimLink, DefaultLinks) {
  EXPECT_DOUBLE_EQ(default_link(LinkKind::pcie3).raw_GBps, 15.75);  // 8 GT/s x16 x 128/130 / 8
  EXPECT_DOUBLE_EQ(default_link(LinkKind::pcie4).raw_GBps, 31.5);
  EXPECT_DOUBLE_EQ(default_link(LinkKind::pcie5).raw_GBps, 63.0);
  EXPECT_DOUBLE_EQ(default_link(LinkKind::pcie6).raw_GBps, 128.0);  // flits; 121 = 128*242/256
  EXPECT_DOUBLE_EQ(default_link(LinkKind::nvlink2).raw_GBps, 150.0);  // 6 x 25
  EXPECT_DOUBLE_EQ(default_link(LinkKind::nvlink3).raw_GBps, 300.0);  // 12 x 25
  EXPECT_DOUBLE_EQ(default_link(LinkKind::nvlink4).raw_GBps, 450.0);  // 18 x 25
  EXPECT_EQ(default_link(LinkKind::pcie4).max_payload, 256u);
  EXPECT_EQ(default_link(LinkKind::nvlink2).max_payload, 256u);
  for (LinkKind k : {LinkKind::pcie3, LinkKind::nvlink2}) {
    EXPECT_GE(default_link(k).latency_ns, 400);
    EXPECT_LE(default_link(k).latency_ns, 1000);
  }
}

TEST(SimLink, Pcie4Writes) {
  const LinkParams l = default_link(LinkKind::pcie4);
  // 4-B store: 4 STP + 16 header + 4 data + 4 LCRC + 2 DLLP = 30 B -> 13.3 %.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 4), 30);
  // 1-B store: data padded to one DW: the same 30 B.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 1), 30);
  // 6 B: padded to 8 -> 26 + 8 = 34.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 6), 34);
  // 256-B store: one full TLP: 26 + 256 = 282 -> 90.8 %.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 256), 282);
  // 300 B: two TLPs (256 + 44): 2 x 26 + 300 = 352.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 300), 352);
  // 1 MiB DMA: 4096 TLPs x 282 = 1,155,072 B; efficiency 256 / (256 + 24 + 2) = 0.9078.
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, MiB), 4096.0 * 282);
  EXPECT_NEAR(eff(l, MiB), 256.0 / 282, 1e-12);
  // Same framing on PCIe 3 and 5 (only the bit rate differs).
  EXPECT_DOUBLE_EQ(wire_bytes_write(default_link(LinkKind::pcie3), 4), 30);
  EXPECT_DOUBLE_EQ(wire_bytes_write(default_link(LinkKind::pcie5), MiB), 4096.0 * 282);
  // Max payload 4096 (PROACT dissertation Table 5.3): 1 MiB = 256 TLPs x (26 + 4096).
  LinkParams big = l;
  big.max_payload = 4096;
  EXPECT_DOUBLE_EQ(wire_bytes_write(big, MiB), 256.0 * 4122);
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, 0), 0);
}

TEST(SimLink, Pcie4Reads) {
  const LinkParams l = default_link(LinkKind::pcie4);
  // 4-B read: MRd (4 + 16 + 4 + 2 = 26) + CplD (4 + 12 + 4 + 2 + 4 data = 26) = 52.
  EXPECT_DOUBLE_EQ(wire_bytes_read(l, 4), 52);
  // 1 KiB read: 2 requests of 512 B (Max_Read_Request_Size) = 52; 4 CplDs of 256 B:
  // 4 x 22 + 1024 = 1112; total 1164.
  EXPECT_DOUBLE_EQ(wire_bytes_read(l, 1024), 1164);
}

TEST(SimLink, Pcie6Flits) {
  const LinkParams l = default_link(LinkKind::pcie6);
  // 4-B store: TLP 16 + 4 = 20 B, x 256/236 = 21.69 B -> 18.4 % (no per-TLP framing/LCRC/DLLP).
  EXPECT_NEAR(wire_bytes_write(l, 4), 20.0 * 256 / 236, 1e-9);
  // 1 MiB: 4096 TLPs x 272 B x 256/236.
  EXPECT_NEAR(wire_bytes_write(l, MiB), 4096.0 * 272 * 256 / 236, 1e-6);
  // Small stores pack better than PCIe 5's per-TLP framing; bulk is a little worse (FEC+CRC).
  EXPECT_GT(eff(l, 4), eff(default_link(LinkKind::pcie5), 4));
  EXPECT_LT(eff(l, MiB), eff(default_link(LinkKind::pcie5), MiB));
}

TEST(SimLink, NvlinkWrites) {
  for (LinkKind k : {LinkKind::nvlink2, LinkKind::nvlink3, LinkKind::nvlink4}) {
    const LinkParams l = default_link(k);
    // 4-B write: header flit + byte-enable flit + one (padded) data flit = 48 B -> 8.3 %.
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 4), 48);
    // 8-B write: whole 8-B word, no BE flit: header + data flit = 32 B.
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 8), 32);
    // 32 B: header + 2 data flits = 48; 128 B: header + 8 = 144; 256 B: header + 16 = 272.
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 32), 48);
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 128), 144);
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 256), 272);
    // 300 B: 272 + (header + BE + 3 data flits for 44 B = 80) = 352.
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, 300), 352);
    // 1 MiB: 4096 packets x 272 -> 94.1 %.
    EXPECT_DOUBLE_EQ(wire_bytes_write(l, MiB), 4096.0 * 272);
    // A read of 4 B: request header flit + response header flit + data flit = 48.
    EXPECT_DOUBLE_EQ(wire_bytes_read(l, 4), 48);
  }
  // max_payload above 256 is capped at NVLink's 16 data flits.
  LinkParams l = default_link(LinkKind::nvlink4);
  l.max_payload = 4096;
  EXPECT_DOUBLE_EQ(wire_bytes_write(l, MiB), 4096.0 * 272);
}

// Our H200 NVLink4 measurement (machine_model.json goodput "sm_store_granularity", gpu0->gpu1):
// 4/8/16/32/64/128-B lines at 35.09/103.84/207.60/279.70/335.09/369.83 GB/s. The model's
// efficiency ratios between neighbouring sizes match within 3 %.
TEST(SimLink, NvlinkMatchesMeasuredH200StoreCurve) {
  const LinkParams l = default_link(LinkKind::nvlink4);
  const double size[] = {4, 8, 16, 32, 64, 128};
  const double gbps[] = {35.09, 103.84, 207.60, 279.70, 335.09, 369.83};
  for (int i = 1; i < 6; ++i) {
    const double model = eff(l, size[i]) / eff(l, size[i - 1]);
    const double meas = gbps[i] / gbps[i - 1];
    EXPECT_NEAR(model / meas, 1.0, 0.03) << size[i] << " B";
  }
}

// PROACT dissertation Fig 2.2: small stores have poor goodput, "as low as 8 % on NVLink and 14 % on
// PCIe for 4-byte stores"; both > 80 % at >= 128 B; 32-B transfers much less efficient than 128-B.
TEST(SimLink, SmallStoreGoodputShape) {
  const LinkParams pcie = default_link(LinkKind::pcie4), nv = default_link(LinkKind::nvlink2);
  EXPECT_NEAR(eff(pcie, 4), 0.14, 0.01);  // 4/30 = 0.133
  EXPECT_NEAR(eff(nv, 4), 0.08, 0.005);   // 4/48 = 0.083
  EXPECT_LT(eff(pcie, 4), 0.20);
  EXPECT_LT(eff(nv, 4), 0.20);
  EXPECT_GT(eff(pcie, 128), 0.80);  // 128/154 = 0.83
  EXPECT_GT(eff(nv, 128), 0.80);    // 128/144 = 0.89
  EXPECT_LT(eff(pcie, 32) / eff(pcie, 128), 0.75);  // (32/58) / (128/154) = 0.66
  EXPECT_LT(eff(nv, 32) / eff(nv, 128), 0.80);      // (32/48) / (128/144) = 0.75
  for (double p : {4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
    EXPECT_LE(eff(pcie, p), eff(pcie, 2 * p) + 1e-12);
    EXPECT_LE(eff(nv, p), eff(nv, 2 * p) + 1e-12);
  }
}

TEST(SimLink, WireTime) {
  const LinkParams l = default_link(LinkKind::pcie3);
  EXPECT_DOUBLE_EQ(wire_time_s(l, 15.75e9), 1.0);
  LinkParams bad = l;
  bad.raw_GBps = 0;
  EXPECT_THROW(wire_time_s(bad, 1), std::invalid_argument);
}

// FinePack (PROACT dissertation ch. V): 100 scattered 4-B stores to one destination, no two
// contiguous (100 runs), PCIe 4 with the dissertation's 4096-B max payload (Table 5.3) and 5-B
// sub-headers:
//   outer content = 100 x (5 + 4) = 900 B -> one outer TLP: 26 + 900 = 926 B
//   raw P2P stores: 100 x 30 = 3000 B  -> 3.24x fewer wire bytes from packing alone.
// The dissertation's 5.1x (§5.1) also counts stores the write queue merged (redundant writes to
// the same address): if the 100 runs came from 160 stores, 160 x 30 / 926 = 5.18x.
TEST(SimLink, FinePackScatteredStores) {
  LinkParams l = default_link(LinkKind::pcie4);
  l.max_payload = 4096;
  EXPECT_DOUBLE_EQ(finepack_wire_bytes(l, 100, 400, 5), 926);
  const double raw = 100 * wire_bytes_write(l, 4);
  EXPECT_DOUBLE_EQ(raw, 3000);
  EXPECT_NEAR(raw / finepack_wire_bytes(l, 100, 400, 5), 3.24, 0.01);
  EXPECT_NEAR(160 * wire_bytes_write(l, 4) / finepack_wire_bytes(l, 100, 400, 5), 5.1, 0.2);
  // Max payload 256: content 900 B -> 4 outer TLPs (3 x 256 + 132): 4 x 26 + 900 = 1004.
  EXPECT_DOUBLE_EQ(finepack_wire_bytes(default_link(LinkKind::pcie4), 100, 400, 5), 1004);
  // Sub-header sweep 2..6: 26 + 400 + 100 h = 626, 726, 826, 926, 1026: wire bytes rise
  // monotonically, the gain over raw stores falls (4.79x .. 2.92x).
  double prev = 0;
  for (int h = 2; h <= 6; ++h) {
    const double w = finepack_wire_bytes(l, 100, 400, h);
    EXPECT_DOUBLE_EQ(w, 426 + 100.0 * h);
    EXPECT_GT(w, prev);
    prev = w;
  }
  EXPECT_THROW(finepack_wire_bytes(l, 100, 400, 1), std::invalid_argument);
  EXPECT_THROW(finepack_wire_bytes(l, 100, 400, 7), std::invalid_argument);
  EXPECT_DOUBLE_EQ(finepack_wire_bytes(l, 0, 0, 5), 0);
  // One run of 1 MiB: like a DMA plus one sub-header: 257 outer TLPs (1 MiB + 5 B over 4096).
  EXPECT_DOUBLE_EQ(finepack_wire_bytes(l, 1, MiB, 5), 257.0 * 26 + MiB + 8);
  // NVLink: one header flit per 256-B outer packet, content in 16-B flits:
  // 900 B -> 4 packets (3 x 256 + 132 -> 144 padded): 4 x 16 + 912 = 976 vs 100 x 48 = 4800.
  EXPECT_DOUBLE_EQ(finepack_wire_bytes(default_link(LinkKind::nvlink4), 100, 400, 5), 976);
}
