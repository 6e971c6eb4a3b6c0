// gpsm-nvshmem-cg: one NVSHMEM PE of `gpsm bench --app cg --paradigm nvshmem_std|nvshmem_pipe`.
// gpsm starts one per GPU (src/apps/cg/cg_nvshmem_run.cpp) with the arguments of
// apps/cg/cg_worker_proto.hpp; it is not meant to be run by hand. Exit status: 0 with the result
// file written, 2 for bad arguments, 1 for any other failure (the message on stderr, which gpsm
// shows in the run's reason).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "apps/cg/cg_worker_proto.hpp"
#include "cg_pe.hpp"

int main(int argc, char** argv) {
  // Die with gpsm: a worker left behind would wait on its peers for ever.
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;

  gpsm::apps::cg::CgWorkerArgs args;
  try {
    args = gpsm::apps::cg::parse_cg_worker_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  try {
    gpsm::apps::cg::write_cg_result(args.out_file, gpsm::nvshmem_worker::solve_cg(args));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpsm-nvshmem-cg %s rank %d (device %d): %s\n", gpsm::apps::cg::worker_variant_name(args.variant),
                 args.rank, args.device, e.what());
    std::fflush(stderr);
    // _exit, not return: exit handlers of an initialized NVSHMEM could wait on the other PEs.
    _exit(1);
  }
  return 0;
}
