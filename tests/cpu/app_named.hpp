#pragma once
// The CPU tests' way to an app of the registry by name (nullptr when none), as the GPU tests'
// apptest::app_named.
#include <memory>
#include <string>

#include "apps/harness/app.hpp"

namespace gpsm::test {

inline std::unique_ptr<gpsm::apps::App> app_named(const std::string& name) {
  for (auto& a : gpsm::apps::make_apps())
    if (std::string(a->name()) == name) return std::move(a);
  return nullptr;
}

}  // namespace gpsm::test
