#include "apps/filter/filter_plan.hpp"

namespace gpsm::apps::filter {

LocalPass local_pass_of(const std::vector<FilterSlab>& s, int r, std::int64_t width, std::int64_t height,
                        const float* in, float* out, const std::vector<float*>& out_of, bool push) {
  const FilterSlab& me = s[static_cast<std::size_t>(r)];
  LocalPass a;
  a.in = in;
  a.out = out;
  a.width = width;
  a.height = height;
  a.row_base = me.first - me.halo;
  a.y0 = me.first;
  a.y1 = me.first + me.rows;
  if (push) {
    // Image row gy lives at local row s[q].local_row(gy) of rank q's buffer.
    auto at = [&](int q, std::int64_t gy) { return out_of[static_cast<std::size_t>(q)] + s[q].local_row(gy) * width; };
    a.push_rows = me.halo;
    if (me.top >= 0) a.push_top = at(me.top, me.first);
    if (me.bottom >= 0) a.push_bottom = at(me.bottom, me.first + me.rows - me.halo);
  }
  return a;
}

std::vector<HaloSend> halo_sends(const std::vector<FilterSlab>& s, int r) {
  const FilterSlab& me = s[static_cast<std::size_t>(r)];
  std::vector<HaloSend> v;
  if (me.top >= 0) v.push_back({me.top, me.first, s[me.top].below});  // my first rows: its halo below
  if (me.bottom >= 0) {
    const std::int64_t rows = s[me.bottom].above;  // my last rows: its halo above
    v.push_back({me.bottom, me.first + me.rows - rows, rows});
  }
  return v;
}

}  // namespace gpsm::apps::filter
