// The apps `gpsm bench` knows.
#include "apps/harness/app.hpp"

namespace gpsm::apps {

std::unique_ptr<App> make_jacobi_app();  // jacobi/jacobi_app_cuda.cpp
std::unique_ptr<App> make_heat3d_app();  // stencil3d/stencil3d_app_cuda.cpp
std::unique_ptr<App> make_wave3d_app();  // stencil3d/stencil3d_app_cuda.cpp
std::unique_ptr<App> make_ct_app();      // ct/ct_app_cuda.cpp
std::unique_ptr<App> make_filter_app();  // filter/filter_app_cuda.cpp
std::unique_ptr<App> make_fd3d_app();    // fd3d/fd3d_app_cuda.cpp
namespace cg {
std::unique_ptr<App> make_cg_app();  // cg/cg_app_cuda.cpp
}  // namespace cg
namespace graph {
std::unique_ptr<App> make_pagerank_app();  // graph/pagerank_app_cuda.cpp
std::unique_ptr<App> make_sssp_app();      // graph/sssp_app_cuda.cpp
std::unique_ptr<App> make_als_app();       // graph/als_app_cuda.cpp
}  // namespace graph

std::vector<std::unique_ptr<App>> make_apps() {
  std::vector<std::unique_ptr<App>> apps;
  apps.push_back(make_jacobi_app());
  apps.push_back(make_heat3d_app());
  apps.push_back(make_wave3d_app());
  apps.push_back(make_fd3d_app());
  apps.push_back(make_filter_app());
  apps.push_back(graph::make_pagerank_app());
  apps.push_back(graph::make_sssp_app());
  apps.push_back(graph::make_als_app());
  apps.push_back(cg::make_cg_app());
  apps.push_back(make_ct_app());
  return apps;
}

}  // namespace gpsm::apps
