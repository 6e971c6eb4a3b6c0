// gpsm bench --isolate's host side: the RunOutcome a child hands back (exact, non-finite values
// included, bad documents refused by name), the child run (its outcome, its progress lines, and
// every way it can end without one: an exit code, a signal, no file, a file that does not
// parse), and the temporary folder it lives in. The children are /bin/sh scripts standing in
// for gpsm; run_isolated appends `--isolated-outcome FILE`, which they see as $1 $2. A signal
// to the parent (Ctrl-C) stops the child and removes the folders (common/interrupt.hpp).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/harness/isolated_run.hpp"
#include "apps/harness/run_outcome_json.hpp"
#include "common/interrupt.hpp"
#include "common/temp_dir.hpp"
#include "test_support.hpp"

namespace {

using gpsm::apps::RunOutcome;
using gpsm::apps::RunStatus;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

RunOutcome full_outcome() {
  RunOutcome o;
  o.status = RunStatus::ok;
  o.reason = "";
  o.sec_per_iter = {0.1 + 0.2, 1.0 / 3.0, 4.9406564584124654e-324, 55.23e-6};
  o.iterations = 1000;
  o.error = std::numeric_limits<double>::quiet_NaN();
  o.tolerance = std::numeric_limits<double>::infinity();
  o.link_bytes_per_iter = -std::numeric_limits<double>::infinity();
  o.mem_bytes_per_iter = 139.7e6 / 7.0;
  o.timing = "loop of 1000 iterations, one graph launch";
  o.subscriber_pages = {12, 3.5, 0};
  o.proact = {1u << 20, (1u << 20) + 4096, "--proact-cache c.json (machine h200x2)", 123456789012345ull, "copy_engine"};
  o.choices = {{"spmv", "sell", "fewer bytes"}, {"values", "f32", "within 1e-10"}};
  return o;
}

std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

gpsm::apps::IsolatedRun sh_child(const std::string& script) {
  // sh -c SCRIPT sh --isolated-outcome FILE: $0 = sh, $1 = --isolated-outcome, $2 = FILE
  return {"heat3d 64x64x64 gps on 1 GPU", "/bin/sh", {"-c", script, "sh"}};
}

}  // namespace

TEST(RunOutcomeJson, RoundTripKeepsEveryFieldAndEveryBit) {
  const RunOutcome o = full_outcome();
  // Through text, as the child writes it and the parent reads it.
  const RunOutcome r = gpsm::apps::run_outcome_from_json(nlohmann::json::parse(gpsm::apps::run_outcome_to_json(o).dump()));
  EXPECT_EQ(r.status, o.status);
  EXPECT_EQ(r.reason, o.reason);
  ASSERT_EQ(r.sec_per_iter.size(), o.sec_per_iter.size());
  for (std::size_t i = 0; i < o.sec_per_iter.size(); ++i)
    EXPECT_TRUE(same_bits(r.sec_per_iter[i], o.sec_per_iter[i])) << i << ": " << r.sec_per_iter[i];
  EXPECT_EQ(r.iterations, 1000);
  EXPECT_TRUE(std::isnan(r.error));
  EXPECT_TRUE(std::isinf(r.tolerance) && r.tolerance > 0);
  EXPECT_TRUE(std::isinf(r.link_bytes_per_iter) && r.link_bytes_per_iter < 0);
  EXPECT_TRUE(same_bits(r.mem_bytes_per_iter, o.mem_bytes_per_iter));
  EXPECT_EQ(r.timing, o.timing);
  EXPECT_EQ(r.subscriber_pages, o.subscriber_pages);
  EXPECT_EQ(r.proact.requested, o.proact.requested);
  EXPECT_EQ(r.proact.chunk_bytes, o.proact.chunk_bytes);
  EXPECT_EQ(r.proact.source, o.proact.source);
  EXPECT_EQ(r.proact.key_size, o.proact.key_size);
  EXPECT_EQ(r.proact.agent, o.proact.agent);
  ASSERT_EQ(r.choices.size(), 2u);
  EXPECT_EQ(r.choices[1].name, "values");
  EXPECT_EQ(r.choices[1].value, "f32");
  EXPECT_EQ(r.choices[1].why, "within 1e-10");
}

TEST(RunOutcomeJson, FailedAndUnsupportedKeepTheirReason) {
  for (RunStatus s : {RunStatus::failed, RunStatus::unsupported}) {
    RunOutcome o;
    o.status = s;
    o.reason = "verification failed: error 3e-2 > 1e-5";
    const RunOutcome r = gpsm::apps::run_outcome_from_json(gpsm::apps::run_outcome_to_json(o));
    EXPECT_EQ(r.status, s);
    EXPECT_EQ(r.reason, o.reason);
    EXPECT_TRUE(r.sec_per_iter.empty());
  }
}

TEST(RunOutcomeJson, BadDocumentsAreRefusedByName) {
  using gpsm::test::error_of;
  const nlohmann::json good = gpsm::apps::run_outcome_to_json(full_outcome());
  auto refused = [&](const std::function<void(nlohmann::json&)>& spoil) {
    nlohmann::json j = good;
    spoil(j);
    return error_of([&] { gpsm::apps::run_outcome_from_json(j); });
  };
  EXPECT_EQ(refused([](nlohmann::json&) {}), "");
  EXPECT_NE(refused([](nlohmann::json& j) { j["format"] = "gpsm.run_outcome/0"; }).find("format is \"gpsm.run_outcome/0\""),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j.erase("tolerance"); }).find("tolerance is missing"), std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["sec_per_iter"][1] = "fast"; }).find("sec_per_iter[1] is not a number"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["status"] = "great"; }).find("status is not ok, failed or unsupported"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["iterations"] = 2.5; }).find("iterations is not an integer"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["proact"].erase("agent"); }).find("agent is missing"), std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["choices"][0].erase("why"); }).find("why is missing"), std::string::npos);
  EXPECT_NE(error_of([] { gpsm::apps::run_outcome_from_json(nlohmann::json::array()); }).find("not an object"),
            std::string::npos);
}

TEST(IsolatedRun, ReturnsTheChildsOutcomeAndShowsItsProgress) {
  const std::string doc = gpsm::apps::run_outcome_to_json(full_outcome()).dump();
  const std::string script = "test \"$1\" = --isolated-outcome || exit 9\n"
                             "echo setting up >&2; sleep 0.8\n"
                             "echo 'timed rep 3/5'; sleep 0.8\n"
                             "printf '%s' " + sh_quote(doc) + " > \"$2\"\n";
  std::vector<std::string> seen;
  const RunOutcome r = gpsm::apps::run_isolated(sh_child(script), [&](const std::string& l) { seen.push_back(l); });
  EXPECT_EQ(r.status, RunStatus::ok) << r.reason;
  EXPECT_EQ(r.iterations, 1000);
  EXPECT_TRUE(same_bits(r.sec_per_iter[0], 0.1 + 0.2));
  // Each new last line once, in order (stderr and stdout share the child's log).
  EXPECT_EQ(seen, (std::vector<std::string>{"setting up", "timed rep 3/5"}));
}

TEST(IsolatedRun, AChildThatWritesNoOutcomeFailsItsRunWithHowItEnded) {
  struct Case {
    std::string script, expect1, expect2;
  };
  const Case cases[] = {
      {"echo 'CUDA error: an illegal memory access' >&2; exit 3", "exited with code 3",
       "CUDA error: an illegal memory access"},
      {"echo halfway; kill -KILL $$", "was killed by signal 9", "halfway"},
      {"echo done", "exited with code 0 but wrote no outcome", "done"},
      {"echo '{\"format\": \"gpsm.run_outcome/1\", \"status\"' > \"$2\"", "wrote an outcome that cannot be read", "parse"},
      {"printf '{\"format\": \"x\"}' > \"$2\"", "wrote an outcome that cannot be read", "format is \"x\""},
  };
  for (const Case& c : cases) {
    const RunOutcome r = gpsm::apps::run_isolated(sh_child(c.script), {});
    EXPECT_EQ(r.status, RunStatus::failed) << c.script;
    EXPECT_NE(r.reason.find("the child running heat3d 64x64x64 gps on 1 GPU"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find(c.expect1), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find(c.expect2), std::string::npos) << r.reason;
  }
}

TEST(IsolatedRun, AChildThatCannotStartIsAnError) {
  // posix_spawn reports a missing executable itself (or the child exits 127 on older C libraries).
  std::string e;
  try {
    const RunOutcome r = gpsm::apps::run_isolated({"x", "/nonexistent/gpsm", {}}, {});
    e = r.reason;
    EXPECT_EQ(r.status, RunStatus::failed);
  } catch (const gpsm::Error& err) {
    e = err.what();
  }
  EXPECT_TRUE(e.find("cannot start the child running x (/nonexistent/gpsm)") != std::string::npos ||
              e.find("exited with code 127") != std::string::npos)
      << e;
}

TEST(IsolatedRun, LastLineSkipsBlankLinesAndCarriageReturns) {
  gpsm::test::TmpDir t;
  EXPECT_EQ(gpsm::apps::last_line(t.path("missing")), "");
  EXPECT_EQ(gpsm::apps::last_line(t.write("a", "")), "");
  EXPECT_EQ(gpsm::apps::last_line(t.write("b", "one\ntwo\r\n\n  \n")), "two");
  EXPECT_EQ(gpsm::apps::last_line(t.write("c", std::string(10000, 'x') + "\nlast")), "last");
  EXPECT_EQ(gpsm::apps::last_line(t.write("d", std::string(20, 'y')), 5), "yyyyy...");
}

TEST(TempDir, IsPrivateAndGoesWithEverythingInIt) {
  gpsm::test::TmpDir t;
  gpsm::test::ScopedEnv tmp("TMPDIR", t.dir.c_str());
  std::string path;
  {
    gpsm::TempDir d("gpsm-test", "a test");
    path = d.path();
    EXPECT_EQ(path.rfind(t.dir.string() + "/gpsm-test-", 0), 0u) << path;
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all, std::filesystem::perms::owner_all);
    std::filesystem::create_directories(d.file("sub"));
    t.write(std::filesystem::path(d.file("sub/f")).lexically_relative(t.dir).string(), "x");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  gpsm::test::ScopedEnv bad("TMPDIR", "/nonexistent/dir");
  const std::string e = gpsm::test::error_of([] { gpsm::TempDir d("gpsm-test", "a test"); });
  EXPECT_NE(e.find("gpsm: a test: cannot create a temporary folder /nonexistent/dir/gpsm-test-XXXXXX"), std::string::npos) << e;
}

TEST(InterruptGuard, RecordsTheSignalsAndGivesTheOldHandlersBack) {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  {
    gpsm::InterruptGuard g;
    EXPECT_EQ(gpsm::pending_interrupt(), 0);
    EXPECT_NO_THROW(gpsm::throw_if_interrupted("gpsm test"));
    raise(SIGTERM);  // without the guard this would end the test binary
    EXPECT_EQ(gpsm::pending_interrupt(), SIGTERM);
    try {
      gpsm::throw_if_interrupted("gpsm test");
      ADD_FAILURE() << "no Interrupted";
    } catch (const gpsm::Interrupted& e) {
      EXPECT_EQ(e.signal(), SIGTERM);
      EXPECT_NE(std::string(e.what()).find("gpsm test: interrupted by signal 15"), std::string::npos) << e.what();
    }
    EXPECT_THROW(gpsm::InterruptGuard second, gpsm::Error);  // one at a time
  }
  EXPECT_EQ(gpsm::pending_interrupt(), 0);
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(IsolatedRun, ASignalStopsTheChildAndRemovesItsFolder) {
  gpsm::test::TmpDir t;
  gpsm::test::ScopedEnv tmp("TMPDIR", t.dir.c_str());
  gpsm::InterruptGuard g;
  const std::string pid_file = t.path("child.pid");
  // The child writes its pid, then would run for a minute; the parent is signalled once it runs.
  const std::string script = "echo $$ > " + sh_quote(pid_file) + "; echo started; exec sleep 60\n";
  const auto t0 = std::chrono::steady_clock::now();
  std::thread signaller([&] {
    for (int i = 0; i < 200 && !std::filesystem::exists(pid_file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    kill(getpid(), SIGINT);
  });
  std::string error;
  int sig = 0;
  try {
    gpsm::apps::run_isolated(sh_child(script), {});
  } catch (const gpsm::Interrupted& e) {
    error = e.what();
    sig = e.signal();
  }
  signaller.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(sig, SIGINT) << error;
  EXPECT_LT(took, 10.0);  // not the child's minute
  // The child is gone (killed and reaped: no such process), and nothing is left in TMPDIR but
  // the test's own pid file.
  std::ifstream pf(pid_file);
  pid_t child = 0;
  pf >> child;
  ASSERT_GT(child, 0);
  EXPECT_NE(kill(child, 0), 0);
  int left = 0;
  for (const auto& e : std::filesystem::directory_iterator(t.dir)) left += e.path() != pid_file;
  EXPECT_EQ(left, 0);
}
