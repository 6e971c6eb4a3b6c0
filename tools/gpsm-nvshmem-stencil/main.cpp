// gpsm-nvshmem-stencil: one NVSHMEM PE of `gpsm bench --app jacobi2d|heat3d|wave3d --paradigm nvshmem`
// (--app picks the solve). gpsm starts one per GPU (src/apps/stencil/nvshmem_launch.cpp) with the arguments of
// apps/stencil/nvshmem_proto.hpp; it is not meant to be run by hand. Exit status: 0 with the
// result file written, 2 for bad arguments, 1 for any other failure (the message on stderr,
// which gpsm shows in the run's reason).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "apps/stencil/nvshmem_proto.hpp"
#include "solve.hpp"

int main(int argc, char** argv) {
  // Die with gpsm: a worker left behind would sit in an NVSHMEM collective for ever.
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;

  gpsm::apps::jacobi::WorkerArgs args;
  try {
    args = gpsm::apps::jacobi::parse_worker_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  try {
    const gpsm::apps::jacobi::WorkerResult r = args.app == gpsm::apps::jacobi::WorkerApp::jacobi2d
                                                   ? gpsm::nvshmem_worker::solve(args)
                                                   : gpsm::nvshmem_worker::solve_stencil3d(args);
    gpsm::apps::jacobi::write_result(args.out_file, r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpsm-nvshmem-stencil %s rank %d (device %d): %s\n", gpsm::apps::jacobi::worker_app_name(args.app), args.rank, args.device, e.what());
    std::fflush(stderr);
    // _exit, not return: exit handlers of an initialized NVSHMEM could wait on the other PEs.
    _exit(1);
  }
  return 0;
}
