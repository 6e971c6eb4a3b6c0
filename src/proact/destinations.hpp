#pragma once
// Where each chunk goes: a destination mask per chunk (bit r = context rank r), from the GPS
// subscription table of the array (the pages the chunk overlaps) or to every peer. The producer
// itself is never a destination. Plain C++.
#include <cstdint>
#include <vector>

#include "gpsm/gps/subscription.hpp"
#include "proact/chunks.hpp"

namespace gpsm::proact {

// Every rank but `producer`, for each of the plan's chunks. Throws gpsm::Error for a producer
// outside [0, ranks) or ranks outside [1, 32].
std::vector<std::uint32_t> destinations_all_peers(const ChunkPlan& plan, int ranks, int producer);

// The union of the subscribers of the pages chunk c overlaps, minus the producer. The plan covers
// the array bytes [array_offset, array_offset + plan.bytes()) (a producer's slice). A chunk whose
// pages nobody else subscribes to gets mask 0 (nothing to ship). Throws gpsm::Error when the slice
// runs past the table's pages, page_bytes is 0, or the producer is not a rank of the table.
std::vector<std::uint32_t> destinations_from_subscriptions(const gps::SubscriptionTable& table,
                                                           std::uint64_t page_bytes, const ChunkPlan& plan,
                                                           int producer, std::uint64_t array_offset = 0);

// Ranks in a mask, ascending.
std::vector<int> ranks_of(std::uint32_t mask);

}  // namespace gpsm::proact
