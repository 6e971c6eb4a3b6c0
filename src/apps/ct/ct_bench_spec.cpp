#include "apps/ct/ct_bench_spec.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_partition.hpp"

namespace gpsm::apps::ct {

namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument("bad --size '" + text + "' for ct: " + why + "; use " + kBenchSizeSyntax);
}

}  // namespace

CtBenchSpec parse_bench_spec(const std::string& text) {
  CtBenchSpec s;
  s.text = text;
  const std::size_t at = text.find('@');
  const std::string geo = text.substr(0, at);
  try {
    s.g = parse_geometry(geo);
  } catch (const std::invalid_argument& e) {  // its message names the geometry and the names to use
    throw std::invalid_argument(std::string(e.what()) + " (then optionally @subsets=M)");
  }
  if (at == std::string::npos) return s;
  const std::string mod = text.substr(at + 1);
  const std::string key = "subsets=";
  if (mod.rfind(key, 0) != 0) bad(text, "unknown modifier '@" + mod + "' (only @subsets=M)");
  const std::string num = mod.substr(key.size());
  char* end = nullptr;
  errno = 0;
  const long m = num.empty() ? 0 : std::strtol(num.c_str(), &end, 10);
  if (num.empty() || *end != '\0' || errno == ERANGE || m < 1 || m > s.g.views)
    bad(text, "@subsets= takes a whole number from 1 to the " + std::to_string(s.g.views) + " views");
  s.subsets = static_cast<int>(m);
  return s;
}

double ct_host_bytes(const CtBenchSpec& s) {
  const double sino = static_cast<double>(s.g.sinogram_cells()) * 4;
  const double image = static_cast<double>(s.g.voxels()) * 4;
  return 3 * sino + 6 * image;
}

double ct_gpu_bytes_per_gpu(const CtBenchSpec& s) {
  const CtPartition part(s.g, 1, s.subsets);
  std::int64_t largest = 0;
  for (int m = 0; m < s.subsets; ++m) largest = std::max(largest, part.subset_size(m));
  const double sino = static_cast<double>(s.g.sinogram_cells()) * 4;
  const double image = static_cast<double>(s.g.voxels()) * 4;
  const double lists = static_cast<double>(s.g.views) * (4 + 32);  // view numbers and poses (generous)
  const double residual = static_cast<double>(largest * part.view_bytes());
  // The forward projection's column-split scratch (ct_forward_tiles.hpp): splits x views x cells
  // doubles, splits about kForwardBlocksPerSm x SMs / (tiles x views), so at most that many
  // blocks' tiles (48 kB each; 132 SMs, an H200's) plus one split's doubles of the views.
  const double split_scratch = kForwardBlocksPerSm * 132.0 * static_cast<double>(kForwardSharedBytes) + 2 * residual;
  // 3 residual buffers: two alternating, and the gps paradigm's plain A x beside its arrays.
  return 3 * sino + 3 * image + 3 * residual + split_scratch + lists;
}

}  // namespace gpsm::apps::ct
