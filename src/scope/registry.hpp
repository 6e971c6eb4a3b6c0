#pragma once
// The benchmark registry of `gpsm scope`: small test classes over one timing core (nvbandwidth's
// shape). Test objects are constructed without touching CUDA, so `--list` works on any machine.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpsm/topology.hpp"
#include "scope/results.hpp"

namespace gpsm::scope {

struct Options {
  std::vector<int> devices;          // CUDA device ordinals under test
  bool quick = false;                // the < 60 s pass: fewer sizes, pairs and repetitions
  int reps = 5;                      // timed repetitions per point (>= 5 for reported figures)
  int warmup = 2;                    // untimed runs before the timed ones
  std::uint64_t min_size = 4;        // sweep bounds (bytes)
  std::uint64_t max_size = 1ull << 30;
  std::uint64_t peak_size = 512ull << 20;  // the size behind "peak" figures and matrices
  double target_rep_s = 0.005;       // a timed repetition loops the operation for about this long
  std::function<void(const std::string&)> progress;  // called with a short status line
};

class Test {
 public:
  virtual ~Test() = default;
  virtual std::string name() const = 0;
  virtual std::string group() const = 0;        // host-gpu | gpu-gpu | sm | um | latency | all-to-all
  virtual std::string description() const = 0;
  virtual std::string unit() const = 0;         // GB/s | us
  virtual std::string x_name() const = 0;       // bytes | bytes_per_line | blocks | vector_bytes | none
  // Non-empty: why this machine cannot run the test (listed as waived, never dropped).
  virtual std::string waived(const Options&, const gpsm::topo::Topology&) const { return {}; }
  virtual void run(const Options&, const gpsm::topo::Topology&, TestResult& out) = 0;
};

// Every test gpsm knows (defined with the CUDA code).
std::vector<std::unique_ptr<Test>> make_all_tests();

// Selects tests by exact name or regular expression (`-t`); an argument matching nothing is an
// error naming it. An empty filter list selects all.
std::vector<Test*> select_tests(const std::vector<std::unique_ptr<Test>>& all,
                                const std::vector<std::string>& filters);

// Runs one test: waiver check, exceptions turned into a failed result with the message, the
// result's name/group/description/unit filled in.
TestResult run_test(Test& t, const Options& o, const gpsm::topo::Topology& topo);

// Ordered device pairs (src != dst) to measure; in quick mode only pairs from the first device
// and to it.
std::vector<std::pair<int, int>> device_pairs(const Options& o);

}  // namespace gpsm::scope
