// gpsm sim traces: allocation lookup and the binary file (format: docs/sim.md, "Trace format").
#include "sim/trace.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <limits>
#include <memory>

#include "common/atomic_file.hpp"
#include "gpsm/error.hpp"

namespace gpsm::sim {

std::uint64_t Trace::total_runs() const {
  std::uint64_t n = 0;
  for (const auto& it : iterations)
    for (const auto& k : it.kernels)
      for (const auto& b : k.blocks) n += b.runs.size();
  return n;
}

int allocation_of(const Trace& t, std::uint64_t addr) {
  for (std::size_t i = 0; i < t.allocations.size(); ++i) {
    const Allocation& a = t.allocations[i];
    if (addr >= a.base && addr - a.base < a.bytes) return static_cast<int>(i);
  }
  return -1;
}

namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'M', 'T', 'R', 'C', '\0'};
constexpr std::uint32_t kVersion = 9;  // 2: a host_sync byte per iteration; 3: blocks_per_sm per kernel, serial_steps per block;
                                       // 4: chain_steps per block; 5: gather_bytes per kernel, gather_steps per block;
                                       // 6: warp_insts and push_insts per block;
                                       // 7: host_named, peer_waits, memsets per iteration;
                                       // 8: chain_adds per kernel; 9: compute_s per kernel
constexpr std::size_t kRunBytes = 22;  // u8 op, u8 bytes, u32 count, u64 addr, i64 stride

// Little-endian writer into a buffer flushed to the stream in 4-MiB pieces (the stream is
// write_file_atomic's temporary file: a failed write leaves the previous trace whole).
class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) { buf_.reserve(kFlush + 64); }
  void u8(std::uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    maybe_flush();
  }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    u64(b);
  }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
    maybe_flush();
  }
  void raw(const char* p, std::size_t n) { buf_.insert(buf_.end(), p, p + n); }
  void close() { flush(); }

 private:
  static constexpr std::size_t kFlush = std::size_t{4} << 20;
  void maybe_flush() {
    if (buf_.size() >= kFlush) flush();
  }
  void flush() {
    // A failed write leaves the stream failed; write_file_atomic reports it with the system's
    // reason (e.g. "No space left on device") and keeps the previous file.
    if (!buf_.empty() && out_) out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& out_;
  std::vector<char> buf_;
};

// Bounds-checked little-endian reader over the whole file; errors name the file, the byte offset
// and the record being read.
class Reader {
 public:
  Reader(const std::string& path, std::vector<unsigned char> data) : path_(path), d_(std::move(data)) {}
  std::string where;  // the record being read, for error messages
  std::int64_t block = -1;  // and the block record within the kernel `where` names (-1: none)
  [[noreturn]] void fail(const std::string& what) const {
    const std::string w = where + (block >= 0 ? " block record " + std::to_string(block) : "");
    throw Error("gpsm sim: trace file '" + path_ + "': " + what + (w.empty() ? "" : " (" + w + ")") +
                " at byte " + std::to_string(pos_) + " of " + std::to_string(d_.size()));
  }
  void need(std::size_t n) const {
    if (d_.size() - pos_ < n) fail("truncated");
  }
  std::uint8_t u8() {
    need(1);
    return d_[pos_++];
  }
  std::uint32_t u32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(d_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(d_[pos_ + i]) << (8 * i);
    pos_ += 8;
    return v;
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() {
    const std::uint64_t b = u64();
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }
  std::string str() {
    const std::uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(d_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  // A record count whose records take at least `min_bytes` each: checked against what is left,
  // so a corrupt count cannot make the reader allocate without bound.
  std::uint32_t count(std::size_t min_bytes, const char* what) {
    const std::uint32_t n = u32();
    if (static_cast<std::uint64_t>(n) * min_bytes > d_.size() - pos_)
      fail(std::string("truncated: ") + std::to_string(n) + " " + what + " announced, not that many bytes left");
    return n;
  }
  bool done() const { return pos_ == d_.size(); }
  std::size_t pos() const { return pos_; }

 private:
  std::string path_;
  std::vector<unsigned char> d_;
  std::size_t pos_ = 0;
};

}  // namespace

namespace {
void write_trace_to(const Trace& t, std::ostream& out) {
  Writer w(out);
  w.raw(kMagic, 8);
  w.u32(kVersion);
  w.str(t.app);
  w.str(t.problem);
  w.i32(t.gpus);
  w.str(t.layout);
  w.u32(static_cast<std::uint32_t>(t.allocations.size()));
  for (const Allocation& a : t.allocations) {
    w.str(a.name);
    w.u8(static_cast<std::uint8_t>(a.kind));
    w.i32(a.gpu);
    w.i32(a.group);
    w.u64(a.base);
    w.u64(a.bytes);
  }
  w.u32(static_cast<std::uint32_t>(t.iterations.size()));
  for (const IterationTrace& it : t.iterations) {
    w.u8(it.host_sync ? 1 : 0);
    w.u8(it.host_named ? 1 : 0);
    w.u8(it.peer_waits);
    w.u8(it.memsets);
    w.u32(static_cast<std::uint32_t>(it.kernels.size()));
    for (const KernelTrace& k : it.kernels) {
      w.str(k.name);
      w.i32(k.gpu);
      w.u32(k.grid_blocks);
      w.u32(k.threads_per_block);
      w.u32(k.blocks_per_sm);
      w.u64(k.gather_bytes);
      w.u8(k.chain_adds);
      w.f64(k.compute_s);
      w.u32(static_cast<std::uint32_t>(k.blocks.size()));
      for (const BlockTrace& b : k.blocks) {
        w.u32(b.block);
        w.f64(b.weight);
        w.f64(b.flops);
        w.u32(b.serial_steps);
        w.u32(b.chain_steps);
        w.u32(b.gather_steps);
        w.u32(b.warp_insts);
        w.u32(b.push_insts);
        w.u32(static_cast<std::uint32_t>(b.runs.size()));
        for (const AccessRun& r : b.runs) {
          w.u8(static_cast<std::uint8_t>(r.op));
          w.u8(r.bytes);
          w.u32(r.count);
          w.u64(r.addr);
          w.i64(r.stride);
        }
      }
    }
  }
  w.close();
}
}  // namespace

void write_trace(const Trace& t, const std::string& path) {
  write_file_atomic(path, [&](std::ostream& out) { write_trace_to(t, out); });
}

Trace read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error("gpsm sim: cannot open trace file '" + path + "'");
  const std::streamoff size = in.tellg();
  in.seekg(0);
  std::vector<unsigned char> data(static_cast<std::size_t>(size > 0 ? size : 0));
  if (!data.empty() && !in.read(reinterpret_cast<char*>(data.data()), size))
    throw Error("gpsm sim: error reading trace file '" + path + "'");
  Reader r(path, std::move(data));
  r.where = "header";
  r.need(8);
  char magic[8];
  for (char& c : magic) c = static_cast<char>(r.u8());
  if (std::memcmp(magic, kMagic, 8) != 0) r.fail("bad magic (not a gpsm sim trace: expected \"GPSMTRC\\0\")");
  const std::uint32_t version = r.u32();
  // version 2 files read with blocks_per_sm and serial_steps 0, versions 2 and 3 with chain_steps 0,
  // versions 2 to 4 with gather_bytes and gather_steps 0, versions 2 to 5 with warp_insts and push_insts 0,
  // versions 2 to 6 with the host loop not named, versions 2 to 7 with chain_adds 0, versions 2 to 8
  // with compute_s 0
  if (version < 2 || version > kVersion)
    r.fail("unsupported version " + std::to_string(version) + " (this gpsm reads versions 2 to " +
           std::to_string(kVersion) + ")");
  const bool v3 = version >= 3, v4 = version >= 4, v5 = version >= 5, v6 = version >= 6, v7 = version >= 7, v8 = version >= 8,
             v9 = version >= 9;
  Trace t;
  t.app = r.str();
  t.problem = r.str();
  t.gpus = r.i32();
  t.layout = r.str();
  const std::uint32_t na = r.count(29, "allocations");
  t.allocations.resize(na);
  for (std::uint32_t i = 0; i < na; ++i) {
    r.where = "allocation " + std::to_string(i);
    Allocation& a = t.allocations[i];
    a.name = r.str();
    const std::uint8_t kind = r.u8();
    if (kind > 2) r.fail("bad memory kind " + std::to_string(kind));
    a.kind = static_cast<MemKind>(kind);
    a.gpu = r.i32();
    a.group = r.i32();
    a.base = r.u64();
    a.bytes = r.u64();
  }
  r.where = "iteration count";
  const std::uint32_t ni = r.count(4, "iterations");
  t.iterations.resize(ni);
  for (std::uint32_t i = 0; i < ni; ++i) {
    r.where = "iteration " + std::to_string(i);
    r.block = -1;
    const std::uint8_t hs = r.u8();
    if (hs > 1) r.fail("host_sync byte " + std::to_string(hs) + " is neither 0 nor 1");
    t.iterations[i].host_sync = hs == 1;
    if (v7) {
      const std::uint8_t named = r.u8();
      if (named > 1) r.fail("host_named byte " + std::to_string(named) + " is neither 0 nor 1");
      t.iterations[i].host_named = named == 1;
      t.iterations[i].peer_waits = r.u8();
      t.iterations[i].memsets = r.u8();
      if (!t.iterations[i].host_named && (t.iterations[i].peer_waits != 0 || t.iterations[i].memsets != 0))
        r.fail("host calls given for an iteration whose host loop is not named");
    }
    const std::uint32_t nk = r.count(20, "kernels");
    t.iterations[i].kernels.resize(nk);
    for (std::uint32_t k = 0; k < nk; ++k) {
      r.where = "iteration " + std::to_string(i) + " kernel " + std::to_string(k);
      r.block = -1;
      KernelTrace& kt = t.iterations[i].kernels[k];
      kt.name = r.str();
      kt.gpu = r.i32();
      kt.grid_blocks = r.u32();
      kt.threads_per_block = r.u32();
      if (v3) kt.blocks_per_sm = r.u32();
      if (v5) kt.gather_bytes = r.u64();
      if (v8) kt.chain_adds = r.u8();
      if (kt.chain_adds > 1) r.fail("chain_adds " + std::to_string(kt.chain_adds) + " (0 or 1)");
      if (v9) kt.compute_s = r.f64();
      if (!(kt.compute_s >= 0)) r.fail("compute_s " + std::to_string(kt.compute_s) + " (must be >= 0)");
      const std::uint32_t nb = r.count(24, "blocks");
      kt.blocks.resize(nb);
      for (std::uint32_t b = 0; b < nb; ++b) {
        BlockTrace& bt = kt.blocks[b];
        r.block = b;
        bt.block = r.u32();
        bt.weight = r.f64();
        bt.flops = r.f64();
        if (v3) bt.serial_steps = r.u32();
        if (v4) bt.chain_steps = r.u32();
        if (v5) bt.gather_steps = r.u32();
        if (v6) {
          bt.warp_insts = r.u32();
          bt.push_insts = r.u32();
        }
        if (bt.gather_steps > bt.chain_steps)
          r.fail("gather_steps " + std::to_string(bt.gather_steps) + " > chain_steps " + std::to_string(bt.chain_steps));
        const std::uint32_t nr = r.count(kRunBytes, "runs");
        bt.runs.resize(nr);
        for (std::uint32_t j = 0; j < nr; ++j) {
          AccessRun& a = bt.runs[j];
          const std::uint8_t op = r.u8();
          if (op > 2) r.fail("run " + std::to_string(j) + ": bad op " + std::to_string(op));
          a.op = static_cast<Op>(op);
          a.bytes = r.u8();
          if (a.bytes != 4 && a.bytes != 8 && a.bytes != 16)
            r.fail("run " + std::to_string(j) + ": bad access size " + std::to_string(a.bytes) + " (expected 4, 8 or 16)");
          a.count = r.u32();
          a.addr = r.u64();
          a.stride = r.i64();
        }
      }
    }
  }
  r.block = -1;
  r.where = "end";
  if (!r.done()) r.fail("unexpected bytes after the last iteration");
  return t;
}

}  // namespace gpsm::sim
