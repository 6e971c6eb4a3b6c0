// The engine's default link model: link.hpp's packet accounting and System::copy_time_s. Kept
// apart from engine.cpp so the engine's tests link with hand-made link models alone.
#include "sim/engine.hpp"
#include "sim/link.hpp"

namespace gpsm::sim {

namespace {
struct DefaultLinkModel final : LinkModel {
  double write_wire(const LinkParams& l, double payload) const override { return wire_bytes_write(l, payload); }
  double read_wire(const LinkParams& l, double payload) const override { return wire_bytes_read(l, payload); }
  double finepack_wire(const LinkParams& l, double runs, double payload, int subheader) const override {
    return finepack_wire_bytes(l, runs, payload, subheader);
  }
  double wire_time(const LinkParams& l, double wire) const override { return wire_time_s(l, wire); }
  double copy_time(const System& s, int a, int b, double bytes) const override { return s.copy_time_s(a, b, bytes); }
};
}  // namespace

const LinkModel& default_link_model() {
  static const DefaultLinkModel m;
  return m;
}

SimResult simulate(const Trace& t, const System& s, SimParadigm p, const SimOptions& o) {
  return simulate_with(t, s, p, o, default_link_model());
}

}  // namespace gpsm::sim
