// Reads a machine model through the installed public API and predicts a transfer time.
#include <iostream>

#include <nlohmann/json.hpp>  // the public headers declare their JSON functions with json_fwd.hpp

#include "gpsm/build_info.hpp"
#include "gpsm/machine_model.hpp"
#include "gpsm/topology.hpp"

int main() {
  gpsm::model::MachineModel m;
  m.machine = "consumer-test";
  gpsm::model::PathModel p;
  p.src = "gpu0";
  p.dst = "gpu1";
  p.mechanism = "ce_peer";
  p.direction = "uni";
  gpsm::model::Segment seg;  // one open-ended segment: t = 2 us + bytes / 400 GB/s
  seg.c_s = 2e-6;
  seg.bw_Bps = 400e9;
  p.fit.segments.push_back(seg);
  m.paths.push_back(p);
  auto back = gpsm::model::model_from_json(gpsm::model::to_json(m));
  const auto* q = back.find("gpu0", "gpu1", "ce_peer");
  if (!q) return 1;
  const double t = gpsm::model::predict_seconds(q->fit, 400e6);
  std::cout << "gpsm " << GPSM_VERSION_STRING << ": predicted 400 MB over gpu0->gpu1 in " << t * 1e3 << " ms\n";
  return (t > 0.000990 && t < 0.001010) ? 0 : 1;
}
