#include "runtime/bulk_plan.hpp"

#include <algorithm>
#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

std::vector<CopyRun> plan_bulk(const Geometry& g, const std::uint32_t* dirty, const std::uint32_t* masks, int self) {
  if (self < 0 || self >= kMaxDevices)
    throw Error("gpsm: bulk plan for device " + std::to_string(self) + ": devices are 0.." +
                std::to_string(kMaxDevices - 1));
  std::vector<CopyRun> runs;
  const std::uint64_t pages = g.pages();
  const std::uint64_t lines = g.lines();
  if (lines == 0) return runs;
  if (dirty == nullptr || masks == nullptr) throw Error("gpsm: bulk plan got a null dirty bitmap or mask table");
  // Words at or beyond ceil(bytes / 4) are not part of the allocation: their bits are ignored.
  const std::uint64_t valid_words = (g.bytes + kWordBytes - 1) / kWordBytes;

  std::uint32_t others = 0;  // every device that subscribes to some page, less self
  for (std::uint64_t p = 0; p < pages; ++p) others |= masks[p];
  others &= ~bit(self);

  for (int dst = 0; dst < 32; ++dst) {
    if (!((others >> dst) & 1u)) continue;
    bool open = false;
    std::uint64_t start = 0, end = 0;  // open run: words [start, end)
    auto close = [&] {
      if (open) runs.push_back({dst, start * kWordBytes, (end - start) * kWordBytes});
      open = false;
    };
    for (std::uint64_t l = 0; l < lines; ++l) {
      std::uint32_t d = dirty[l];
      const std::uint64_t first_word = l * kLineWords;
      if (first_word + kLineWords > valid_words)
        d &= first_word >= valid_words ? 0u : ((1u << (valid_words - first_word)) - 1u);
      // A line lies within one page (pages are whole lines), so one mask test covers it.
      if (d == 0 || !((masks[g.page_of_line(l)] >> dst) & 1u)) {
        close();
        continue;
      }
      if (d == ~0u && open && end == first_word) {  // common dense case: extend by the whole line
        end = first_word + kLineWords;
        continue;
      }
      for (std::uint32_t w = 0; w < kLineWords; ++w) {
        const std::uint64_t word = first_word + w;
        if ((d >> w) & 1u) {
          if (open && end == word) {
            end = word + 1;
          } else {
            close();
            open = true;
            start = word;
            end = word + 1;
          }
        } else {
          close();
        }
      }
    }
    close();
  }
  return runs;
}

std::vector<BoxCopy> plan_box_publish(const Geometry& g, const std::uint32_t* masks, const std::uint64_t n[3],
                                      std::uint64_t elem, const std::uint64_t lo[3], const std::uint64_t hi[3],
                                      int self) {
  if (self < 0 || self >= kMaxDevices)
    throw Error("gpsm: publish plan for device " + std::to_string(self) + ": devices are 0.." +
                std::to_string(kMaxDevices - 1));
  for (int d = 0; d < 3; ++d)
    if (lo[d] > hi[d] || hi[d] > n[d])
      throw Error("gpsm: publish box: axis " + std::to_string(d) + " cells [" + std::to_string(lo[d]) + ", " +
                  std::to_string(hi[d]) + ") outside the volume's " + std::to_string(n[d]));
  if (n[0] * n[1] * n[2] * elem > g.bytes)
    throw Error("gpsm: publish box: a volume of " + std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " +
                std::to_string(n[2]) + " elements of " + std::to_string(elem) + " bytes is larger than the array (" +
                std::to_string(g.bytes) + " bytes)");
  std::vector<BoxCopy> out;
  if (lo[0] == hi[0] || lo[1] == hi[1] || lo[2] == hi[2]) return out;
  const std::uint64_t row_bytes = (hi[0] - lo[0]) * elem;
  // Per row: the OR and AND of its pages' masks, so a destination on every page of every row takes
  // one copy and one on none is skipped without walking runs.
  std::uint32_t any = 0, all = ~0u;
  for (std::uint64_t z = lo[2]; z < hi[2]; ++z)
    for (std::uint64_t y = lo[1]; y < hi[1]; ++y) {
      const std::uint64_t b = ((z * n[1] + y) * n[0] + lo[0]) * elem;
      for (std::uint64_t p = g.page_of_byte(b); p <= g.page_of_byte(b + row_bytes - 1); ++p) {
        any |= masks[p];
        all &= masks[p];
      }
    }
  for (int dst = 0; dst < kMaxDevices; ++dst) {
    if (dst == self || !((any >> dst) & 1u)) continue;
    BoxCopy c;
    c.dst = dst;
    c.whole = (all >> dst) & 1u;
    if (!c.whole)
      for (std::uint64_t z = lo[2]; z < hi[2]; ++z)
        for (std::uint64_t y = lo[1]; y < hi[1]; ++y) {
          const std::uint64_t b = ((z * n[1] + y) * n[0] + lo[0]) * elem, e = b + row_bytes;
          std::uint64_t at = b;
          while (at < e) {  // runs over the pages dst subscribes to, clipped to the row
            const std::uint64_t page = g.page_of_byte(at), end = std::min(e, (page + 1) << g.page_shift);
            if ((masks[page] >> dst) & 1u) {
              if (!c.runs.empty() && c.runs.back().byte_offset + c.runs.back().bytes == at)
                c.runs.back().bytes += end - at;
              else
                c.runs.push_back({dst, at, end - at});
            }
            at = end;
          }
        }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpsm::gps
