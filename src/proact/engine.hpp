#pragma once
// The PROACT engine on the GPUs (engine_cuda.cpp): buffers, streams and readiness counters over a
// list of GPUs, one verified run of an agent, and the whole `gpsm proact` sweep.
#include <cstdint>
#include <memory>
#include <string>

#include "gpsm/error.hpp"
#include "proact/agent.hpp"
#include "proact/proact_plan.hpp"

namespace gpsm::proact {

// A destination (or the producer's own replica) does not hold the produced bytes: the run failed
// and is never timed.
class VerifyError : public Error {
 public:
  using Error::Error;
};

struct VerifyResult {
  std::uint64_t bad_words = 0;
  std::uint64_t first_bad_word = UINT64_MAX;  // index in the producer's slice
};

// One run's times (cuda events on the timing stream of rank 0, from the host's release of the run).
struct RunTimes {
  double total_s = 0;  // release -> last chunk in every destination (or producer end, with no transfers)
  double tail_s = 0;   // producer end -> last chunk delivered
};

class Engine {
 public:
  // Peer access between every pair (throws gpsm::Error naming a pair without it), an array of
  // cfg.bytes on every GPU, streams, events, the host-mapped gate flag and the copy-engine check.
  explicit Engine(const ProactConfig& cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void set_work(std::uint32_t work) { work_ = work; }
  std::uint32_t work() const { return work_; }
  // Chooses the compute per word so the producer takes ~ratio x the copies alone; returns it.
  std::uint32_t calibrate(double ratio, const std::function<void(const std::string&)>& progress = nullptr);

  // Producer alone (tracked: with readiness counters for chunk_bytes, no agent); the producer's
  // own slice is verified.
  RunTimes run_compute(bool tracked, std::uint64_t chunk_bytes = 0);
  // The copies alone (every slice to every destination; slices produced untimed first), verified.
  RunTimes run_transfer();
  // One run of an agent, every destination verified (throws VerifyError naming rank and word).
  RunTimes run_agent(Agent a, std::uint64_t chunk_bytes, int threads);

  // Why the agent cannot run here with these settings ("" if it can).
  std::string unsupported(Agent a, std::uint64_t chunk_bytes, int threads) const;
  // "stream_wait_value" or "host_proxy" (the copy_engine mechanism this machine gets).
  std::string ce_mechanism() const;
  std::string ce_support() const;  // what the check found, in words

  // Whether every GPU still runs work after an error (a trapped kernel loses its context).
  bool healthy();

  // Test hooks: check rank's replica of producer p's slice against the last run's values; flip
  // one byte of rank's replica (offset in the array).
  VerifyResult verify(int rank, int producer);
  void corrupt_byte(int rank, std::uint64_t array_offset);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::uint32_t work_ = 0;
};

// The whole benchmark: calibration, baselines, every (agent, chunk, threads) configuration with
// cfg.warmup + cfg.reps verified runs. A configuration that fails verification or raises an error
// is recorded as failed (never timed); after an error that leaves a GPU unusable the sweep stops
// and the remaining configurations are recorded as skipped.
ProactRun run_proact(const ProactConfig& cfg);

}  // namespace gpsm::proact
