#pragma once
// Ordered subsets of views (Erdogan and Fessler, "Ordered subsets algorithms for transmission
// tomography"). Subset m holds the views v with v mod M == m, ascending: every subset spans
// every angle (and, helical, every turn), so each one's gradient approximates the full one.
// Within an iteration the subsets are visited in bit-reversal order of m: m's bits reversed in
// the width of the next power of two >= M, those >= M skipped (0, 16, 8, 4, 20, 12, 2, ... for
// M = 24), so consecutive subsets sit far apart in angle.
#include <cstdint>
#include <vector>

namespace gpsm::apps::ct {

// Throws std::invalid_argument unless 1 <= subsets <= views.
std::vector<std::int32_t> subset_views(int views, int subsets, int m);
std::vector<int> subset_order(int subsets);

}  // namespace gpsm::apps::ct
