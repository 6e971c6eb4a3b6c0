// The apps `gpsm bench` knows.
#include "apps/harness/app.hpp"

namespace gpsm::apps {

std::unique_ptr<App> make_jacobi_app();  // jacobi/jacobi_app_cuda.cpp
std::unique_ptr<App> make_heat3d_app();  // stencil3d/stencil3d_app_cuda.cpp
std::unique_ptr<App> make_wave3d_app();  // stencil3d/stencil3d_app_cuda.cpp

std::vector<std::unique_ptr<App>> make_apps() {
  std::vector<std::unique_ptr<App>> apps;
  apps.push_back(make_jacobi_app());
  apps.push_back(make_heat3d_app());
  apps.push_back(make_wave3d_app());
  return apps;
}

}  // namespace gpsm::apps
