#include "scope/registry.hpp"

#include <regex>

#include "gpsm/error.hpp"

namespace gpsm::scope {

std::vector<Test*> select_tests(const std::vector<std::unique_ptr<Test>>& all,
                                const std::vector<std::string>& filters) {
  std::vector<Test*> out;
  if (filters.empty()) {
    for (auto& t : all) out.push_back(t.get());
    return out;
  }
  std::vector<bool> chosen(all.size(), false);
  for (const auto& f : filters) {
    bool any = false;
    std::regex re;
    bool is_re = true;
    try {
      re = std::regex(f);
    } catch (const std::regex_error&) {
      is_re = false;
    }
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string n = all[i]->name();
      if (n == f || (is_re && std::regex_match(n, re))) {
        chosen[i] = true;
        any = true;
      }
    }
    if (!any)
      throw gpsm::Error("gpsm: no test matches '" + f + "'; `gpsm scope --list` shows the tests");
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (chosen[i]) out.push_back(all[i].get());
  return out;
}

TestResult run_test(Test& t, const Options& o, const gpsm::topo::Topology& topo) {
  TestResult r;
  r.name = t.name();
  r.group = t.group();
  r.description = t.description();
  r.unit = t.unit();
  r.x_name = t.x_name();
  std::string why = t.waived(o, topo);
  if (!why.empty()) {
    r.status = Status::waived;
    r.reason = why;
    return r;
  }
  try {
    t.run(o, topo, r);
    if (r.status == Status::ok) {
      for (const auto& s : r.series)
        for (const auto& p : s.points)
          if (!p.verified) {
            r.status = Status::failed;
            r.reason = "data verification failed for " + s.label + " at x=" + std::to_string(p.x);
          }
      if (r.status == Status::failed) r.series.clear();  // never report a time for wrong data
    }
  } catch (const std::exception& e) {
    r.status = Status::failed;
    r.reason = e.what();
    r.series.clear();  // a failed test reports no figures
  }
  return r;
}

std::vector<std::pair<int, int>> device_pairs(const Options& o) {
  std::vector<std::pair<int, int>> p;
  const auto& d = o.devices;
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = 0; j < d.size(); ++j) {
      if (i == j) continue;
      if (o.quick && i != 0 && j != 0) continue;
      p.emplace_back(d[i], d[j]);
    }
  return p;
}

}  // namespace gpsm::scope
