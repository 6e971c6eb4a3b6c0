#pragma once
// The combine sweep's plain logic (docs/gps.md, "Combine sweep"), shared by the sweeper kernel
// (fence_kernels.cu) and the CPU tests: the sweeper grid, which sweeper block owns which block of
// lines, the pause between passes, and the receiver's rule for a block's chain of records.
//
// While a kernel stores into a combine array, sweeper blocks walk the array's blocks of lines
// (finepack.hpp's 16 KiB blocks) in passes, take each dirty line word with an exchange and send
// the words as a packed record. A block may so get several records from one source in a fence
// interval (one per pass that found it dirty, then the fence drain's); they are chained newest
// first, and the receiver applies a word from the newest record that holds it: per source and
// word, the last value stored wins.
#include <cstdint>
#include <vector>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

// Sweeper blocks for a device with `sms` SMs: blocks_per_sm each, at most one per block of lines
// (a sweeper block with no block of its own would only poll), at least one.
GPSM_HD std::uint32_t sweep_grid(std::uint32_t sms, std::uint32_t blocks_per_sm, std::uint64_t data_blocks) {
  std::uint64_t g = static_cast<std::uint64_t>(sms) * blocks_per_sm;
  if (g > data_blocks) g = data_blocks;
  return g < 1 ? 1u : static_cast<std::uint32_t>(g);
}

// Sweeper block `b` of `grid` takes blocks of lines b, b + grid, b + 2 grid, ... in every pass: one
// owner per block of lines for the whole interval, so two passes' records of a block are written
// by the same threads in program order (its chain head, its directory entry), never by two
// blocks at once.
GPSM_HD std::uint32_t sweep_owner(std::uint64_t data_block, std::uint32_t grid) {
  return static_cast<std::uint32_t>(data_block % grid);
}

// Pause before a sweeper block's next pass, from what its last pass found: none after a pass
// that sent at least `busy` words (the stores run: keep up with them), else doubling from
// `min_ns` up to `max_ns` while passes stay idle (before the kernel starts, or after it ended and
// before the fence stops the sweeper), so an idle sweeper costs the device a few reads per
// `max_ns`. `prev_ns` is the pause before the last pass (0 after a busy one).
GPSM_HD std::uint64_t sweep_pause_ns(std::uint64_t sent_words, std::uint64_t busy, std::uint64_t prev_ns,
                                     std::uint64_t min_ns, std::uint64_t max_ns) {
  if (sent_words >= busy) return 0;
  const std::uint64_t next = prev_ns == 0 ? min_ns : prev_ns * 2;
  return next > max_ns ? max_ns : next;
}
constexpr std::uint64_t kSweepBusyWords = 64;        // a pass that sent this many words: go on at once
constexpr std::uint64_t kSweepMinPauseNs = 1000;     // 1 us
constexpr std::uint64_t kSweepMaxPauseNs = 64000;    // 64 us
// A sweeper that found nothing to send for this long after it started ends by itself (the fence
// drains whatever comes later): the kernel it was launched for never started (under lazy module
// loading a first launch waits for the kernels already running), or the view was taken with no
// launch. Its GPSM_WAIT_TIMEOUT_MS bound still applies once it has found work.
constexpr std::uint64_t kSweepIdleExitNs = 20ull * 1000 * 1000;  // 20 ms

// One record of a chain as the host model sees it: (word offset in the block, value) pairs.
struct SweepRecord {
  std::vector<std::uint32_t> offset, value;
};
// The receiver's rule on one source's chain of a block, `newest_first`: each word takes its value
// from the newest record that holds it (the unpack kernel walks the chain from its head and keeps
// the first value it sees per word). Writes the words into `block` (words of one block) and returns
// how many it wrote. Host reference for the CPU tests.
std::uint64_t apply_chain_host(const std::vector<SweepRecord>& newest_first, std::vector<std::uint32_t>& block);

}  // namespace gpsm::gps
