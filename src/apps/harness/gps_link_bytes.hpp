#pragma once
// The link bytes of one more pass over GPS arrays, as the runtime counts them (Array::set_counting):
// what the apps' gps paradigms report per iteration. Counting costs time, so it is on only for
// that pass; the pass must take its views after the call starts (views taken earlier do not count).
namespace gpsm::apps {

namespace detail {
template <class A>
A& counted_array(A& a) { return a; }
template <class A>
A& counted_array(A* a) { return *a; }
}  // namespace detail

// arrays: a range of gps::Array (or of pointers to arrays, any ArrayBase); pass(): runs the pass
// (e.g. one iteration launched directly).
template <class Arrays, class Pass>
double counted_link_bytes(Arrays& arrays, const Pass& pass) {
  for (auto& e : arrays) {
    auto& a = detail::counted_array(e);
    a.set_counting(true);
    a.reset_link_stats();
  }
  pass();
  double bytes = 0;
  for (auto& e : arrays) {
    auto& a = detail::counted_array(e);
    bytes += static_cast<double>(a.link_stats().link_bytes);
    a.set_counting(false);
  }
  return bytes;
}

}  // namespace gpsm::apps
