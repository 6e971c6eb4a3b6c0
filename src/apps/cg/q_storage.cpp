// Where the persistent Standard kernels keep q between their phases (q_storage.hpp).
#include "apps/cg/q_storage.hpp"

#include <fmt/format.h>

#include "apps/cg/env_choice.hpp"

namespace gpsm::apps::cg {

namespace {
constexpr ChoiceName<QStorage> kQNames[] = {{"shared", QStorage::shared}, {"global", QStorage::global}};
}

QStorage parse_q_storage(const char* text) {
  return parse_choice("GPSM_CG_Q", "where the Standard kernels keep q", text, kQNames);
}

const char* q_storage_name(QStorage q) { return choice_name(q, kQNames); }

int q_slots_for(QStorage q, std::int64_t chunks, std::int64_t blocks, std::int64_t chunk_rows, std::size_t max_bytes) {
  if (q != QStorage::shared || chunks < 1 || blocks < 1 || chunk_rows < 1) return 0;
  const std::int64_t slots = (chunks + blocks - 1) / blocks;
  const auto bytes = static_cast<std::uint64_t>(slots) * static_cast<std::uint64_t>(chunk_rows) * sizeof(double);
  return bytes <= max_bytes ? static_cast<int>(slots) : 0;
}

std::string q_storage_note(QStorage asked, int slots, std::int64_t chunks, std::int64_t blocks) {
  if (slots > 0)
    return fmt::format("q kept in shared memory between the phases (GPSM_CG_Q=shared, the default: {} chunk{} a block)", slots,
                       slots == 1 ? "" : "s");
  if (asked == QStorage::shared)
    return fmt::format("q in global memory: a block's {} chunks ({} over {} blocks) do "
                       "not fit its shared memory (GPSM_CG_Q=shared, the default, applies where they do)",
                       (chunks + blocks - 1) / blocks, chunks, blocks);
  return "q in global memory (GPSM_CG_Q=global)";
}

}  // namespace gpsm::apps::cg
