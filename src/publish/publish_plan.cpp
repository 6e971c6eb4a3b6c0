#include "publish/publish_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpsm/gps/settings.hpp"
#include "gpsm/machine_model.hpp"
#include "gpsm/topology.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "common/splitmix.hpp"
#include "common/split.hpp"

namespace gpsm::bench {

namespace {

// Seeded generator with a specified output sequence on every platform (std:: distributions are not).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() { return splitmix64(s++); }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // bias < n / 2^64: negligible
};

std::string fmt_count(std::uint64_t v) { return std::to_string(v); }

}  // namespace

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::coalesced: return "coalesced";
    case Pattern::strided: return "strided";
    case Pattern::random: return "random";
  }
  return "?";
}

const char* test_name(Pattern p) {
  switch (p) {
    case Pattern::coalesced: return "publish_coalesced";
    case Pattern::strided: return "publish_strided";
    case Pattern::random: return "publish_random";
  }
  return "?";
}

const char* mode_name(BenchMode m) {
  return m == BenchMode::local ? "local" : gps::mode_name(to_publish_mode(m));
}

gps::PublishMode to_publish_mode(BenchMode m) {
  switch (m) {
    case BenchMode::inline_store: return gps::PublishMode::inline_store;
    case BenchMode::combine: return gps::PublishMode::combine;
    case BenchMode::bulk: return gps::PublishMode::bulk;
    case BenchMode::decoupled: return gps::PublishMode::decoupled;
    case BenchMode::local: break;
  }
  throw std::invalid_argument("the local baseline is not a GPS publish mode");
}

std::vector<Pattern> parse_patterns(const std::string& s) {
  std::vector<bool> on(3, false);
  for (const auto& tok : split_fields(s)) {
    if (tok == "all") {
      on.assign(3, true);
    } else if (tok == "coalesced") {
      on[0] = true;
    } else if (tok == "strided" || tok == "strided-4B") {
      on[1] = true;
    } else if (tok == "random" || tok == "random-4B") {
      on[2] = true;
    } else {
      throw std::invalid_argument("unknown --pattern '" + tok + "' (expected coalesced, strided, random or all)");
    }
  }
  std::vector<Pattern> out;
  for (int i = 0; i < 3; ++i)
    if (on[i]) out.push_back(static_cast<Pattern>(i));
  return out;
}

std::vector<BenchMode> parse_modes(const std::string& s) {
  constexpr int kModes = 5;
  std::vector<bool> on(kModes, false);
  for (const auto& tok : split_fields(s)) {
    const bool all = tok == "all";
    bool known = all;
    for (int i = 0; i < kModes; ++i)
      if (all || tok == mode_name(static_cast<BenchMode>(i))) on[i] = known = true;
    if (!known)
      throw std::invalid_argument("unknown --mode '" + tok + "' (expected inline, combine, bulk, decoupled, local or all)");
  }
  std::vector<BenchMode> out;
  for (int i = 0; i < kModes; ++i)
    if (on[i]) out.push_back(static_cast<BenchMode>(i));
  return out;
}

std::uint64_t default_random_stores(std::uint64_t words, int gpus) {
  return std::max<std::uint64_t>(1, words / static_cast<std::uint64_t>(std::max(1, gpus)) / 4);
}

void validate_options(const PublishConfig& c) {
  if (c.bytes % gps::kLineBytes != 0 || c.bytes < 4096)
    throw std::invalid_argument("--size must be a multiple of 128 bytes (one line) and at least 4K; got " +
                                std::to_string(c.bytes) + " bytes");
  if (c.bytes / gps::kWordBytes >= (1ull << 32))
    throw std::invalid_argument("--size must be below 16 GiB (the GPS array limit); got " + gpsm::format_size(c.bytes));
  if (c.reps < kMinReps)
    throw std::invalid_argument("--reps must be at least " + std::to_string(kMinReps) + " (got " + std::to_string(c.reps) +
                                ")");
  if (c.warmup < 0) throw std::invalid_argument("--warmup must not be negative");
  if (c.patterns.empty()) throw std::invalid_argument("no --pattern selected");
  if (c.modes.empty()) throw std::invalid_argument("no --mode selected");
}

void validate_config(const PublishConfig& c) {
  validate_options(c);
  const int n = static_cast<int>(c.devices.size());
  if (n < 2) throw std::invalid_argument("`gpsm publish` needs at least 2 GPUs (" + std::to_string(n) + " selected)");
  if (n > gps::kMaxDevices)
    throw std::invalid_argument("`gpsm publish` runs on at most " + std::to_string(gps::kMaxDevices) + " GPUs (" +
                                std::to_string(n) + " selected); pick some with --devices");
  const bool random = std::find(c.patterns.begin(), c.patterns.end(), Pattern::random) != c.patterns.end();
  if (random && c.random_stores != 0) {
    const std::uint64_t words = c.bytes / gps::kWordBytes;
    const std::uint64_t cap = words / static_cast<std::uint64_t>(n) / 2;  // a GPU owns about words / N
    if (c.random_stores > cap)
      throw std::invalid_argument("--stores " + std::to_string(c.random_stores) + " is too many for a " +
                                  gpsm::format_size(c.bytes) + " array on " + std::to_string(n) +
                                  " GPUs (at most " + std::to_string(cap) + " per GPU: half the words each owns)");
  }
}

// ---- patterns ------------------------------------------------------------------------------

int random_owner(std::uint64_t word, int gpus, std::uint32_t seed) {
  return static_cast<int>(splitmix64(word ^ (static_cast<std::uint64_t>(seed) << 32) ^ 0x5EEDull) %
                          static_cast<std::uint64_t>(gpus));
}

std::uint64_t PatternPlan::index(int rank, std::uint64_t k) const {
  if (pattern == Pattern::random) return list.at(rank).at(k);
  return affine.at(rank)(k);
}

std::uint64_t PatternPlan::total_stores() const {
  std::uint64_t t = 0;
  for (auto c : count) t += c;
  return t;
}

PatternPlan make_plan(Pattern p, int gpus, std::uint64_t words, std::uint64_t random_stores, std::uint32_t seed) {
  if (gpus < 1 || words == 0) throw std::invalid_argument("make_plan: empty plan");
  PatternPlan plan;
  plan.pattern = p;
  plan.gpus = gpus;
  plan.words = words;
  const auto n = static_cast<std::uint64_t>(gpus);
  if (p == Pattern::coalesced) {
    const std::uint64_t share = words / n;
    for (std::uint64_t r = 0; r < n; ++r) {
      plan.affine.push_back(AffineIndex{r * share, 1});
      plan.count.push_back(share);
    }
  } else if (p == Pattern::strided) {
    if (n > gps::kLineWords) throw std::invalid_argument("strided pattern: more GPUs than words in a line");
    const std::uint64_t lines = words / gps::kLineWords;
    for (std::uint64_t r = 0; r < n; ++r) {
      plan.affine.push_back(AffineIndex{r, gps::kLineWords});
      plan.count.push_back(lines);
    }
  } else {
    if (words > (1ull << 32)) throw std::invalid_argument("random pattern: more than 2^32 words");
    const std::uint64_t stores = random_stores != 0 ? random_stores : default_random_stores(words, gpus);
    std::vector<std::vector<std::uint32_t>> owned(gpus);
    for (auto& o : owned) o.reserve(words / n + words / n / 8 + 64);
    for (std::uint64_t w = 0; w < words; ++w) owned[random_owner(w, gpus, seed)].push_back(static_cast<std::uint32_t>(w));
    plan.list.resize(gpus);
    for (int r = 0; r < gpus; ++r) {
      auto& o = owned[r];
      if (o.size() < stores)
        throw std::invalid_argument("--stores " + std::to_string(stores) + " is more than GPU rank " +
                                    std::to_string(r) + " owns (" + std::to_string(o.size()) + " words)");
      // Partial Fisher-Yates: a random subset of the owned words, in random order.
      Rng rng{splitmix64((static_cast<std::uint64_t>(seed) << 8) ^ static_cast<std::uint64_t>(r + 1))};
      auto& l = plan.list[r];
      l.reserve(stores);
      for (std::uint64_t k = 0; k < stores; ++k) {
        const std::uint64_t j = k + rng.below(o.size() - k);
        std::swap(o[k], o[j]);
        l.push_back(o[k]);
      }
      plan.count.push_back(stores);
      std::vector<std::uint32_t>().swap(o);
    }
  }
  return plan;
}

std::vector<std::uint32_t> stored_bitmap(const PatternPlan& plan, int rank) {
  std::vector<std::uint32_t> bits((plan.words + 31) / 32, 0u);
  for (int r = 0; r < plan.gpus; ++r) {
    if (rank >= 0 && r != rank) continue;
    const std::uint64_t n = plan.count.at(r);
    if (plan.pattern == Pattern::random) {
      for (std::uint64_t w : plan.list.at(r)) bits[w >> 5] |= 1u << (w & 31u);
    } else {
      const AffineIndex ix = plan.affine.at(r);
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t w = ix(k);
        bits[w >> 5] |= 1u << (w & 31u);
      }
    }
  }
  return bits;
}

std::uint64_t count_runs(const std::vector<std::uint32_t>& bits) {
  std::uint64_t runs = 0;
  std::uint32_t carry = 0;  // the previous word's top bit, as bit 0
  for (std::uint32_t b : bits) {
    runs += static_cast<std::uint64_t>(__builtin_popcount(b & ~((b << 1) | carry)));
    carry = b >> 31;
  }
  return runs;
}

std::uint64_t bulk_copies_per_fence(const PatternPlan& plan) {
  std::uint64_t copies = 0;
  for (int r = 0; r < plan.gpus; ++r) copies += count_runs(stored_bitmap(plan, r));
  return copies * static_cast<std::uint64_t>(plan.gpus - 1);
}

// ---- value model ---------------------------------------------------------------------------

std::uint32_t initial_seed(std::uint32_t run_seed, Pattern p) {
  return static_cast<std::uint32_t>(splitmix64((static_cast<std::uint64_t>(run_seed) << 16) ^ 0xA500u ^
                                               static_cast<std::uint64_t>(p)));
}

std::vector<std::uint32_t> rep_seeds(std::uint32_t run_seed, Pattern p, BenchMode m, int count) {
  const std::uint32_t init = initial_seed(run_seed, p);
  std::vector<std::uint32_t> out;
  std::uint32_t prev = init;
  for (int k = 0; k < count; ++k) {
    std::uint32_t s = static_cast<std::uint32_t>(
        splitmix64((static_cast<std::uint64_t>(run_seed) << 32) ^ (static_cast<std::uint64_t>(p) << 24) ^
                   (static_cast<std::uint64_t>(m) << 20) ^ static_cast<std::uint64_t>(k)));
    while (s == init || s == prev) s = s * 0x9E3779B1u + 0x7F4A7C15u;
    out.push_back(s);
    prev = s;
  }
  return out;
}

std::vector<std::uint32_t> initial_array(std::uint64_t words, std::uint32_t init_seed) {
  std::vector<std::uint32_t> v(words);
  for (std::uint64_t w = 0; w < words; ++w) v[w] = gpsm::pattern_word(w, init_seed);
  return v;
}

Mismatch check_words(const std::uint32_t* data, std::uint64_t words, const std::uint32_t* bits, std::uint32_t seed,
                     std::uint32_t init_seed) {
  Mismatch m;
  for (std::uint64_t w = 0; w < words; ++w) {
    const std::uint32_t want = expected_word(w, bits, seed, init_seed);
    if (data[w] != want) {
      if (m.count == 0) {
        m.first = w;
        m.got = data[w];
        m.want = want;
      }
      ++m.count;
    }
  }
  return m;
}

// ---- results -------------------------------------------------------------------------------

std::uint64_t ModeResult::total_stores() const {
  std::uint64_t t = 0;
  for (auto c : stores_per_gpu) t += c;
  return t;
}

double median_s(const ModeResult& r) {
  if (!r.ok()) return std::numeric_limits<double>::quiet_NaN();
  return scope::summarize(r.time_s).median;
}

double goodput_gbps(const ModeResult& r) {
  const double t = median_s(r);
  return std::isfinite(t) && t > 0 ? static_cast<double>(r.useful_bytes) / t / 1e9
                                   : std::numeric_limits<double>::quiet_NaN();
}

double vs_inline(const std::vector<ModeResult>& all, const ModeResult& r) {
  for (const auto& o : all)
    if (o.pattern == r.pattern && o.mode == BenchMode::inline_store) return goodput_gbps(r) / goodput_gbps(o);
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

std::string gpu_list(const std::vector<int>& devices) {
  std::string s;
  for (int d : devices) s += (s.empty() ? "gpu" : ",gpu") + std::to_string(d);
  return s;
}

// One value per GPU, in rank order: "12,0".
std::string per_gpu_list(const std::vector<std::uint64_t>& per_gpu) {
  std::string out;
  for (std::size_t r = 0; r < per_gpu.size(); ++r) out += (r == 0 ? "" : ",") + fmt_count(per_gpu[r]);
  return out.empty() ? "0" : out;
}

std::string stores_text(const std::vector<std::uint64_t>& per_gpu) {
  if (per_gpu.empty()) return "0";
  const auto [lo, hi] = std::minmax_element(per_gpu.begin(), per_gpu.end());
  return *lo == *hi ? fmt_count(*lo) : fmt_count(*lo) + "-" + fmt_count(*hi);
}

std::string description(Pattern p) {
  const char* what = p == Pattern::coalesced ? "a contiguous block per GPU, one 128 B line per warp"
                     : p == Pattern::strided ? "one 4 B word per 128 B line, GPUs interleaved in every line"
                                             : "random distinct 4 B words, disjoint across GPUs, from a seeded list";
  return fmt::format(
      "GPS publish: every GPU stores its share of one replicated u32 array all GPUs subscribe to ({}); "
      "time = host wall clock from the store launches on all GPUs to Context::fence() returning (publish "
      "complete; local: to all devices idle); GB/s = stores x 4 B x (N-1) / time",
      what);
}

std::vector<Pattern> patterns_in(const std::vector<ModeResult>& all) {
  std::vector<Pattern> ps;
  for (const auto& r : all)
    if (std::find(ps.begin(), ps.end(), r.pattern) == ps.end()) ps.push_back(r.pattern);
  return ps;
}

std::string ratio_text(double v, int prec) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, prec) : "-"; }

}  // namespace

std::vector<scope::TestResult> to_test_results(const std::vector<ModeResult>& all) {
  std::vector<scope::TestResult> out;
  for (Pattern p : patterns_in(all)) {
    scope::TestResult t;
    t.name = test_name(p);
    t.group = "publish";
    t.description = description(p);
    t.unit = "GB/s";
    t.x_name = "none";
    std::string reasons, skips;
    bool any_run = false;
    for (const auto& r : all) {
      if (r.pattern != p) continue;
      if (!r.skipped.empty()) {
        skips += (skips.empty() ? "" : "; ") + std::string(mode_name(r.mode)) + " skipped: " + r.skipped;
        continue;
      }
      any_run = true;
      if (r.ok()) continue;
      reasons += (reasons.empty() ? "" : "; ") + std::string(mode_name(r.mode)) + ": " +
                 (r.failure.empty() ? std::string("not verified") : r.failure);
    }
    if (!reasons.empty() || !any_run) {
      t.status = reasons.empty() ? scope::Status::waived : scope::Status::failed;
      t.reason = reasons.empty() ? skips : reasons;
      out.push_back(std::move(t));
      continue;
    }
    for (const auto& r : all) {
      if (r.pattern != p || !r.ok()) continue;
      scope::Series s;
      s.label = mode_name(r.mode);
      s.params["mode"] = mode_name(r.mode);
      s.params["pattern"] = pattern_name(p);
      s.params["gpus"] = gpu_list(r.devices);
      s.params["array_bytes"] = fmt_count(r.array_bytes);
      s.params["stores"] = fmt_count(r.total_stores());
      s.params["stores_per_gpu"] = stores_text(r.stores_per_gpu);
      s.params["useful_bytes"] = fmt_count(r.useful_bytes);
      s.params["reps_verified"] = std::to_string(r.reps_checked);
      if (r.mode == BenchMode::decoupled) s.params["learned_chunks_per_gpu"] = per_gpu_list(r.learned_chunks);
      s.params["timing"] = publishes(r.mode) ? "host_wall_launch_to_fence" : "host_wall_launch_to_idle";
      if (r.link.counted) {
        s.params["link_bytes"] = fmt_count(r.link.link_bytes);
        s.params["messages"] = fmt_count(r.link.messages);
        s.params["runtime_useful_bytes"] = fmt_count(r.link.useful_bytes);
        s.params["fence_rounds"] = fmt_count(r.link.fence_rounds);
        if (r.link.link_bytes > 0)
          s.params["link_efficiency"] =
              fmt::format("{:.4f}", static_cast<double>(r.useful_bytes) / static_cast<double>(r.link.link_bytes));
      }
      const double v = vs_inline(all, r);
      if (std::isfinite(v)) s.params["goodput_vs_inline"] = fmt::format("{:.4f}", v);
      s.points.push_back(scope::make_point(0, static_cast<double>(r.useful_bytes), r.time_s, "GB/s", r.verified));
      t.series.push_back(std::move(s));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string render_table(const std::vector<ModeResult>& all) {
  std::string out;
  for (Pattern p : patterns_in(all)) {
    const ModeResult* first = nullptr;
    for (const auto& r : all)
      if (r.pattern == p) {
        first = &r;
        break;
      }
    out += fmt::format("{}: {} GPUs ({}), {} array, {} stores/GPU, {:.2f} MB to deliver per rep\n", test_name(p),
                       first->devices.size(), gpu_list(first->devices), gpsm::format_size(first->array_bytes),
                       stores_text(first->stores_per_gpu), static_cast<double>(first->useful_bytes) / 1e6);
    out += "  time = host wall clock from the store launches on all GPUs to Context::fence() returning "
           "(publish complete; local: all devices idle)\n";
    out += fmt::format("  {:<8} {:>4} {:>10} {:>10} {:>10} {:>12} {:>11} {:>9} {:>11} {:>10}\n", "mode", "reps",
                       "median ms", "min ms", "max ms", "useful GB/s", "link MB", "link eff", "messages", "vs inline");
    for (const auto& r : all) {
      if (r.pattern != p) continue;
      if (!r.skipped.empty()) {
        out += fmt::format("  {:<8} SKIPPED: {}\n", mode_name(r.mode), r.skipped);
        continue;
      }
      if (!r.ok()) {
        out += fmt::format("  {:<8} FAILED: {}\n", mode_name(r.mode),
                           r.failure.empty() ? std::string("not verified") : r.failure);
        continue;
      }
      const auto s = scope::summarize(r.time_s);
      std::string link = "-", eff = "-", msgs = "-";
      if (r.link.counted) {
        link = fmt::format("{:.2f}", static_cast<double>(r.link.link_bytes) / 1e6);
        msgs = fmt_count(r.link.messages);
        if (r.link.link_bytes > 0)
          eff = fmt::format("{:.3f}", static_cast<double>(r.useful_bytes) / static_cast<double>(r.link.link_bytes));
      }
      out += fmt::format("  {:<8} {:>4} {:>10.3f} {:>10.3f} {:>10.3f} {:>12.2f} {:>11} {:>9} {:>11} {:>10}\n",
                         mode_name(r.mode), r.time_s.size(), s.median * 1e3, s.min * 1e3, s.max * 1e3,
                         goodput_gbps(r), link, eff, msgs, ratio_text(vs_inline(all, r), 2));
    }
    out += "\n";
  }
  return out;
}

nlohmann::json publish_document(const PublishMeta& meta, const PublishConfig& cfg, const topo::Topology& topo,
                                const std::vector<ModeResult>& all) {
  const std::vector<scope::TestResult> tests = to_test_results(all);
  scope::RunMeta m;
  m.command = meta.command;
  m.created = meta.created;
  m.device_kind = meta.device_kind;
  m.hostname = meta.hostname;
  m.cpu_model = meta.cpu_model;
  m.logical_cpus = meta.logical_cpus;
  m.duration_s = meta.duration_s;
  nlohmann::json j = scope::results_document(m, topo, tests, gpsm::model::MachineModel{});
  j["tool"] = "publish";
  for (auto& jt : j["tests"]) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& r : all)
      if (test_name(r.pattern) == jt.at("name").get<std::string>() && !r.skipped.empty())
        skipped.push_back({{"mode", mode_name(r.mode)}, {"reason", r.skipped}});
    if (!skipped.empty()) jt["skipped"] = skipped;
  }
  j.erase("model");  // no machine model is fitted to publish runs
  nlohmann::json patterns = nlohmann::json::array(), modes = nlohmann::json::array();
  for (Pattern p : cfg.patterns) patterns.push_back(pattern_name(p));
  for (BenchMode md : cfg.modes) modes.push_back(mode_name(md));
  const std::uint64_t words = cfg.bytes / gps::kWordBytes;
  const int n = static_cast<int>(cfg.devices.size());
  j["options"] = {{"reps", cfg.reps},
                  {"warmup", cfg.warmup},
                  {"devices", cfg.devices},
                  {"size", cfg.bytes},
                  {"random_stores", cfg.random_stores != 0 ? cfg.random_stores : default_random_stores(words, n)},
                  {"seed", cfg.seed},
                  {"bulk_max_copies", cfg.bulk_max_copies},
                  {"patterns", patterns},
                  {"modes", modes},
                  {"timing", "host_wall_launch_to_fence"}};
  return j;
}

}  // namespace gpsm::bench
