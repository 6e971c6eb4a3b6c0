#include "runtime/bulk_plan.hpp"

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

}  // namespace gpsm::gps
