// Bounded, seeded random-input test of every reader of a file a user hands gpsm: Matrix Market,
// SNAP edge lists, the binary graph cache, machine models, results documents, PROACT choice
// caches and simulator traces. Small valid fixtures are mutated (byte flips, truncation,
// duplicated and removed lines, huge and negative numbers, JSON values of the wrong type) with
// a fixed seed, and each reader runs on each mutant from a temporary file. The rules: a reader
// returns, or throws an exception derived from std::runtime_error or std::invalid_argument
// with a non-empty message (gpsm::Error is a runtime_error); it never crashes, never hangs and
// never allocates what the input merely declares (the process runs under an address-space
// budget, so a declared size taken at its word surfaces as std::bad_alloc, a failure here).
#include <gtest/gtest.h>
#include "test_support.hpp"
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/graph_io/graph.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "proact/autotune.hpp"
#include "scope/results_file.hpp"
#include "sim/system.hpp"
#include "sim/trace.hpp"
#include "sim/trace_gen.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kSeed = 30;
// Address space a reader may add on top of what the process holds before the test: a fixture
// is a few KiB, so anything near this is a size read from the input and believed.
constexpr std::uint64_t kBudgetBytes = 1ull << 30;
// A reader on a few-KiB mutant that takes longer than this is looping on something it read.
constexpr double kSlowSeconds = 2.0;

const std::string kMatrixMarket =
    "%%MatrixMarket matrix coordinate real general\n"
    "% a 5x5 fixture\n"
    "5 5 8\n"
    "1 1 4.0\n"
    "1 2 -1.0\n"
    "2 1 -1.0\n"
    "2 3 -1.5\n"
    "3 3 4.0\n"
    "4 5 2.0\n"
    "5 4 2.0\n"
    "5 5 1e3\n";

const std::string kMatrixMarketSym =
    "%%MatrixMarket matrix coordinate pattern symmetric\n"
    "4 4 4\n"
    "2 1\n"
    "3 2\n"
    "4 3\n"
    "4 4\n";

const std::string kSnap =
    "# Directed graph: fixture\n"
    "# Nodes: 6 Edges: 8\n"
    "# FromNodeId\tToNodeId\n"
    "0\t1\n"
    "0\t2\n"
    "1\t2\n"
    "2\t0\n"
    "3\t4\n"
    "4\t5\n"
    "5\t3\n"
    "5\t0\n";

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

// ---- mutations -------------------------------------------------------------------------------

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b < s.size()) {
    std::size_t e = s.find('\n', b);
    if (e == std::string::npos) e = s.size() - 1;
    out.push_back(s.substr(b, e - b + 1));
    b = e + 1;
  }
  return out;
}

const char* const kHugeTokens[] = {"9223372036854775807", "18446744073709551616", "99999999999999999999999",
                                   "2147483648",          "4294967296",           "-1",
                                   "-2147483649",         "0",                    "1e308",
                                   "-1e308",              "nan",                  "inf",
                                   "300000000",           "-0",                   "0x10",
                                   "1e-400"};

// One random textual mutation of s (any file: text or binary).
std::string mutate_bytes(std::mt19937_64& rng, std::string s) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t(0) : std::size_t(rng() % n); };
  const int op = int(rng() % 9);
  switch (op) {
    case 0: {  // flip a few bytes
      const int n = 1 + int(rng() % 4);
      for (int i = 0; i < n && !s.empty(); ++i) s[pick(s.size())] ^= char(1u << (rng() % 8));
      break;
    }
    case 1:  // truncate
      s.resize(pick(s.size() + 1));
      break;
    case 2: {  // duplicate a line
      auto lines = split_lines(s);
      if (lines.empty()) break;
      const std::size_t i = pick(lines.size());
      lines.insert(lines.begin() + std::ptrdiff_t(i), lines[i]);
      s.clear();
      for (auto& l : lines) s += l;
      break;
    }
    case 3: {  // remove a line
      auto lines = split_lines(s);
      if (lines.empty()) break;
      lines.erase(lines.begin() + std::ptrdiff_t(pick(lines.size())));
      s.clear();
      for (auto& l : lines) s += l;
      break;
    }
    case 4:
    case 5: {  // replace a number with a huge, negative or odd one
      std::vector<std::pair<std::size_t, std::size_t>> nums;
      for (std::size_t i = 0; i < s.size();) {
        if (std::isdigit(static_cast<unsigned char>(s[i]))) {
          std::size_t j = i;
          while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
          nums.emplace_back(i, j - i);
          i = j;
        } else {
          ++i;
        }
      }
      if (nums.empty()) break;
      const auto [at, len] = nums[pick(nums.size())];
      s.replace(at, len, kHugeTokens[pick(std::size(kHugeTokens))]);
      break;
    }
    case 6: {  // insert random bytes
      const std::size_t at = pick(s.size() + 1);
      std::string junk(1 + pick(8), '\0');
      for (auto& c : junk) c = char(rng());
      s.insert(at, junk);
      break;
    }
    case 7: {  // swap two lines
      auto lines = split_lines(s);
      if (lines.size() < 2) break;
      std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
      s.clear();
      for (auto& l : lines) s += l;
      break;
    }
    default:  // empty, or one byte
      s = (rng() % 2) ? std::string() : std::string(1, char(rng()));
      break;
  }
  return s;
}

// One random structural mutation of a JSON document: a value somewhere replaced by one of
// another type, a huge or negative number, or removed.
nlohmann::json mutate_json(std::mt19937_64& rng, nlohmann::json j) {
  std::vector<nlohmann::json*> nodes;
  std::function<void(nlohmann::json&)> walk = [&](nlohmann::json& v) {
    nodes.push_back(&v);
    if (v.is_object() || v.is_array())
      for (auto& c : v) walk(c);
  };
  walk(j);
  const int n = 1 + int(rng() % 3);
  for (int k = 0; k < n && nodes.size() > 1; ++k) {
    nlohmann::json& v = *nodes[1 + rng() % (nodes.size() - 1)];
    switch (rng() % 12) {
      case 0: v = nullptr; break;
      case 1: v = "x"; break;
      case 2: v = -1; break;
      case 3: v = -1e308; break;
      case 4: v = 1e308; break;
      case 5: v = std::uint64_t(18446744073709551615ull); break;
      case 6: v = std::int64_t(-9223372036854775807ll - 1); break;
      case 7: v = nlohmann::json::array(); break;
      case 8: v = nlohmann::json::object(); break;
      case 9: v = true; break;
      case 10: v = 2147483648ll; break;
      default:
        if (v.is_number()) v = -v.get<double>();
        else v = 0;
        break;
    }
    // the node list may now point into replaced containers: walk again
    nodes.clear();
    walk(j);
  }
  return j;
}

// ---- the harness -----------------------------------------------------------------------------

std::uint64_t address_space_now() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024ull;
  return 0;
}

// Sets RLIMIT_AS to what the process holds now plus kBudgetBytes; restores the old limit when
// it goes out of scope.
class AddressBudget {
 public:
  AddressBudget() {
    getrlimit(RLIMIT_AS, &old_);
    const std::uint64_t now = address_space_now();
    if (now == 0) return;
    rlimit r = old_;
    r.rlim_cur = rlim_t(now + kBudgetBytes);
    if (old_.rlim_max != RLIM_INFINITY && r.rlim_cur > old_.rlim_max) r.rlim_cur = old_.rlim_max;
    active_ = setrlimit(RLIMIT_AS, &r) == 0;
  }
  ~AddressBudget() {
    if (active_) setrlimit(RLIMIT_AS, &old_);
  }
  bool active() const { return active_; }

 private:
  rlimit old_{};
  bool active_ = false;
};

// GPSM_MEMORY_LIMIT (what the readers check a declared size against before allocating) set to
// kMemoryLimit, below the address-space budget: a reader that checks refuses with the figure,
// one that does not runs into the budget. Restored when it goes out of scope.
constexpr const char* kMemoryLimit = "256M";
struct MemoryLimit : gpsm::test::ScopedEnv {
  MemoryLimit() : ScopedEnv("GPSM_MEMORY_LIMIT", kMemoryLimit) {}
};

struct Tally {
  int returned = 0, refused = 0;
  std::vector<std::string> failures;
};

// Runs the reader on the mutant in `path`; records anything but a return or an allowed
// exception with a message. The mutant is kept (as <path>.<case>) when it fails, for replay.
void run_case(const std::string& reader, const std::string& path, const std::string& bytes, int k,
              const std::function<void(const std::string&)>& read, Tally& t) {
  spit(path, bytes);
  std::string why;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    read(path);
    ++t.returned;
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).empty()) why = "a runtime_error with an empty message";
    ++t.refused;
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).empty()) why = "an invalid_argument with an empty message";
    ++t.refused;
  } catch (const std::bad_alloc&) {
    why = "std::bad_alloc: allocated past the budget (a declared size believed before it was checked)";
  } catch (const std::exception& e) {
    why = std::string("an exception of another kind: ") + e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (why.empty() && s > kSlowSeconds) why = "took " + std::to_string(s) + " s";
  if (!why.empty()) {
    const std::string kept = path + "." + std::to_string(k);
    spit(kept, bytes);
    t.failures.push_back(reader + " case " + std::to_string(k) + " (" + kept + "): " + why);
  }
}

class ReaderFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpsm_reader_fuzz_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // `cases` text mutants of each fixture through `read`.
  void fuzz_text(const std::string& reader, const std::vector<std::string>& fixtures, int cases,
                 const std::function<void(const std::string&)>& read, const std::string& ext) {
    std::mt19937_64 rng(kSeed);
    Tally t;
    const std::string path = (dir_ / (reader + ext)).string();
    AddressBudget budget;
    EXPECT_TRUE(budget.active()) << "could not set an address-space budget";
    MemoryLimit limit;
    for (int k = 0; k < cases; ++k) {
      std::string m = fixtures[std::size_t(k) % fixtures.size()];
      const int rounds = 1 + int(rng() % 3);
      for (int r = 0; r < rounds; ++r) m = mutate_bytes(rng, m);
      run_case(reader, path, m, k, read, t);
    }
    report(reader, cases, t);
  }

  // `cases` mutants of a JSON fixture: half structural (value types), half textual.
  void fuzz_json(const std::string& reader, const std::string& fixture, int cases,
                 const std::function<void(const std::string&)>& read) {
    std::mt19937_64 rng(kSeed + 1);
    const std::string text = slurp(fixture);
    ASSERT_FALSE(text.empty()) << fixture;
    const nlohmann::json doc = nlohmann::json::parse(text);
    ASSERT_NO_THROW(read(fixture)) << "the unmutated fixture must read";
    Tally t;
    const std::string path = (dir_ / (reader + ".json")).string();
    AddressBudget budget;
    EXPECT_TRUE(budget.active()) << "could not set an address-space budget";
    MemoryLimit limit;
    for (int k = 0; k < cases; ++k) {
      const std::string m = k % 2 ? mutate_json(rng, doc).dump() : mutate_bytes(rng, text);
      run_case(reader, path, m, k, read, t);
    }
    report(reader, cases, t);
  }

  void report(const std::string& reader, int cases, const Tally& t) {
    std::string all;
    for (std::size_t i = 0; i < t.failures.size() && i < 20; ++i) all += "\n  " + t.failures[i];
    EXPECT_TRUE(t.failures.empty()) << reader << ": " << t.failures.size() << " of " << cases
                                    << " mutants broke the rules:" << all;
    // the mutations must reach past the first check: some mutants read, some are refused
    EXPECT_GT(t.refused, 0) << reader;
    std::printf("%s: %d mutants: %d read, %d refused with a message, %zu broke the rules\n", reader.c_str(), cases,
                t.returned, t.refused, t.failures.size());
  }

  fs::path dir_;
};

std::string fixture(const std::string& rel) { return std::string(GPSM_FIXTURES_DIR) + "/" + rel; }

}  // namespace

TEST(ReaderFuzzHarness, MutationsAreSeededAndVaried) {
  std::mt19937_64 a(kSeed), b(kSeed);
  std::set<std::string> seen;
  for (int k = 0; k < 64; ++k) {
    const std::string x = mutate_bytes(a, kMatrixMarket), y = mutate_bytes(b, kMatrixMarket);
    EXPECT_EQ(x, y);  // same seed, same mutants: a failure found in CI replays here
    seen.insert(x);
  }
  EXPECT_GT(seen.size(), 40u);
}

TEST(ReaderFuzzHarness, BudgetTurnsAHugeAllocationIntoBadAlloc) {
  // the rule "no allocation from a declared size" is only checked if the budget bites
  AddressBudget budget;
  ASSERT_TRUE(budget.active());
  EXPECT_THROW(
      {
        std::vector<char> v(std::size_t(4) << 30);
        v[0] = 1;
      },
      std::bad_alloc);
}

TEST_F(ReaderFuzz, MatrixMarket) {
  fuzz_text("matrix_market", {kMatrixMarket, kMatrixMarketSym}, 3000,
            [](const std::string& p) { gpsm::graph_io::read_matrix_market(p).validate(p); }, ".mtx");
}

// CG's double reader on the same mutants as the float one: it reads exactly what the float reader
// reads (same structure, values whose float rounding is the float reader's) and refuses exactly
// what it refuses, with the same message (a memory refusal's figure aside: a double entry is
// larger). A disagreement is a logic_error, which the harness counts as a broken rule.
TEST_F(ReaderFuzz, MatrixMarketF64AgreesWithFloat) {
  fuzz_text("matrix_market_f64", {kMatrixMarket, kMatrixMarketSym}, 3000,
            [](const std::string& p) {
              std::string f_err;
              gpsm::graph_io::Csr f;
              try {
                f = gpsm::graph_io::read_matrix_market(p);
              } catch (const gpsm::Error& e) {
                f_err = e.what();
              }
              gpsm::graph_io::CsrF64 d;
              try {
                d = gpsm::graph_io::read_matrix_market_f64(p);
              } catch (const gpsm::Error& e) {
                const std::string m = e.what();
                if (f_err.empty()) throw std::logic_error("the double reader refused what the float one read: " + m);
                const auto upto = [](const std::string& s) { return s.substr(0, s.find(" needs about ")); };
                if (upto(m) != upto(f_err))
                  throw std::logic_error("the readers refuse differently: '" + m + "' against '" + f_err + "'");
                throw;
              }
              if (!f_err.empty()) throw std::logic_error("the double reader read what the float one refused: " + f_err);
              d.validate(p);
              if (d.rows != f.rows || d.cols != f.cols || d.row_ptr != f.row_ptr || d.col != f.col ||
                  d.val.size() != f.val.size())
                throw std::logic_error("the readers built different structures");
              for (std::size_t k = 0; k < d.val.size(); ++k)
                if (static_cast<float>(d.val[k]) != f.val[k])
                  throw std::logic_error("value " + std::to_string(k) + " is not the float reader's once rounded");
            },
            ".mtx");
}

TEST_F(ReaderFuzz, Snap) {
  fuzz_text("snap", {kSnap}, 2000,
            [](const std::string& p) {
              gpsm::graph_io::SnapOptions o;
              gpsm::graph_io::read_snap(p, o).validate(p);
              o.symmetrize = true;
              o.base = gpsm::graph_io::IdBase::one;
              gpsm::graph_io::read_snap(p, o).validate(p);
            },
            ".txt");
}

TEST_F(ReaderFuzz, GraphCache) {
  const std::string src = (dir_ / "cache_src.mtx").string();
  spit(src, kMatrixMarket);
  const std::string bin = (dir_ / "cache_src.gpsmcsr").string();
  gpsm::graph_io::write_csr_binary(bin, gpsm::graph_io::read_matrix_market(src), "fixture-key");
  const std::string good = slurp(bin);
  ASSERT_FALSE(good.empty());
  fuzz_text("graph_cache", {good}, 2000,
            [](const std::string& p) {
              std::string key;
              gpsm::graph_io::read_csr_binary(p, &key).validate(p);
            },
            ".gpsmcsr");
}

TEST_F(ReaderFuzz, GraphCacheF64) {
  // CG's double-valued cache: mutants through its reader, and through the float one (which must
  // refuse f64 values with a message, never read them as floats).
  const std::string src = (dir_ / "cache_src.mtx").string();
  spit(src, kMatrixMarket);
  const std::string bin = (dir_ / "cache_src.f64.gpsmcsr").string();
  gpsm::graph_io::write_csr_binary(bin, gpsm::graph_io::read_matrix_market_f64(src), "fixture-key");
  const std::string good = slurp(bin);
  ASSERT_FALSE(good.empty());
  EXPECT_THROW(gpsm::graph_io::read_csr_binary(bin), gpsm::Error);
  fuzz_text("graph_cache_f64", {good}, 2000,
            [](const std::string& p) {
              std::string key;
              gpsm::graph_io::read_csr_f64_binary(p, &key).validate(p);
            },
            ".gpsmcsr");
}

TEST_F(ReaderFuzz, MachineModel) {
  fuzz_json("machine_model", fixture("machine_models/h200x4_host_calls_machine_model.json"), 800,
            [](const std::string& p) { gpsm::model::load_model(p); });
}

TEST_F(ReaderFuzz, MachineModelFull) {
  fuzz_json("machine_model_full", fixture("machine_models/h200x4_full_machine_model.json"), 400,
            [](const std::string& p) { gpsm::model::load_model(p); });
}

TEST_F(ReaderFuzz, SimSystemFromModel) {
  // gpsm sim --system model.json: the model read and turned into a simulated system
  fuzz_json("sim_system", fixture("machine_models/h200x4_full_machine_model.json"), 600,
            [](const std::string& p) { gpsm::sim::from_machine_model(p); });
}

TEST_F(ReaderFuzz, Results) {
  // a results file is read as its JSON, then its tests: the JSON library's parse errors are the
  // parse step's message; tests_from_document must refuse every parsed document by itself
  fuzz_json("results", fixture("results/scope_sample.json"), 800, [](const std::string& p) {
    std::ifstream f(p);
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(f);
    } catch (const nlohmann::json::parse_error& e) {
      throw gpsm::Error(p + ": not JSON (" + e.what() + ")");
    }
    gpsm::scope::tests_from_document(doc);
  });
}

TEST_F(ReaderFuzz, ProactChoiceCache) {
  fuzz_json("proact_cache", fixture("results/proact_cache_sample.json"), 600,
            [](const std::string& p) { gpsm::proact::render_cache_file(p); });
}

TEST_F(ReaderFuzz, SimTrace) {
  gpsm::sim::TraceRequest r;
  r.app = "jacobi2d";
  r.problem.n[0] = 64;
  r.problem.n[1] = 64;
  r.problem.iters = 2;
  r.problem.tol = 0;
  r.gpus = 2;
  r.layout = "slabs";
  const std::string tr = (dir_ / "fixture.trace").string();
  gpsm::sim::write_trace(gpsm::sim::make_trace(r), tr);
  const std::string good = slurp(tr);
  ASSERT_FALSE(good.empty());
  ASSERT_NO_THROW(gpsm::sim::read_trace(tr));
  fuzz_text("sim_trace", {good}, 1500, [](const std::string& p) { gpsm::sim::read_trace(p); }, ".trace");
}
