// Where the persistent Standard CG kernels keep q between their phases (q_storage.hpp): the
// environment's choice, the slots a block needs and when they fit, the run's words on it, and the
// bytes the memory model stops counting.
#include <gtest/gtest.h>

#include <string>

#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/q_storage.hpp"
#include "apps/cg/traffic.hpp"
#include "test_support.hpp"

using namespace gpsm::apps::cg;

TEST(CgQStorage, ParsesTheEnvironmentsChoiceAndRefusesOthers) {
  EXPECT_EQ(parse_q_storage(nullptr), QStorage::shared);
  EXPECT_EQ(parse_q_storage(""), QStorage::shared);
  EXPECT_EQ(parse_q_storage("global"), QStorage::global);
  EXPECT_EQ(parse_q_storage("shared"), QStorage::shared);
  EXPECT_EQ(gpsm::test::error_of([] { parse_q_storage("smem"); }),
            "gpsm: GPSM_CG_Q=smem: not where the Standard kernels keep q; use global or shared (the default)");
  EXPECT_STREQ(q_storage_name(QStorage::shared), "shared");
  EXPECT_STREQ(q_storage_name(QStorage::global), "global");
}

TEST(CgQStorage, ABlockKeepsEveryChunkItOwnsOrNone) {
  const std::size_t kb48 = 48u << 10;
  // 2048^2 on 4 GPUs: 1024 chunks of 1024 rows over 528 blocks: 2 each, 16 KB.
  EXPECT_EQ(q_slots_for(QStorage::shared, 1024, 528, 1024, kb48), 2);
  // On 2 GPUs: 2048 chunks, 4 each, 32 KB.
  EXPECT_EQ(q_slots_for(QStorage::shared, 2048, 528, 1024, kb48), 4);
  // On 1 GPU: 4096 chunks, 8 each, 64 KB: more than a block may have without opting in.
  EXPECT_EQ(q_slots_for(QStorage::shared, 4096, 528, 1024, kb48), 0);
  // Exactly full fits; a byte less does not.
  EXPECT_EQ(q_slots_for(QStorage::shared, 12, 2, 1024, 6 * 1024 * 8), 6);
  EXPECT_EQ(q_slots_for(QStorage::shared, 12, 2, 1024, 6 * 1024 * 8 - 1), 0);
  // Fewer chunks than blocks: one slot.
  EXPECT_EQ(q_slots_for(QStorage::shared, 100, 528, 1024, kb48), 1);
  // `global` never keeps any; nothing to keep gives 0.
  EXPECT_EQ(q_slots_for(QStorage::global, 1024, 528, 1024, kb48), 0);
  EXPECT_EQ(q_slots_for(QStorage::shared, 0, 528, 1024, kb48), 0);
  EXPECT_EQ(q_slots_for(QStorage::shared, 1024, 0, 1024, kb48), 0);
}

TEST(CgQStorage, TheRunSaysWhichRanAndWhy) {
  EXPECT_EQ(q_storage_note(QStorage::shared, 2, 1024, 528),
            "q kept in shared memory between the phases (GPSM_CG_Q=shared, the default: 2 chunks a block)");
  EXPECT_EQ(q_storage_note(QStorage::shared, 1, 100, 528),
            "q kept in shared memory between the phases (GPSM_CG_Q=shared, the default: 1 chunk a block)");
  EXPECT_EQ(q_storage_note(QStorage::shared, 0, 4096, 528),
            "q in global memory: a block's 8 chunks (4096 over 528 blocks) do not fit its shared memory "
            "(GPSM_CG_Q=shared, the default, applies where they do)");
  EXPECT_EQ(q_storage_note(QStorage::global, 0, 4096, 528), "q in global memory (GPSM_CG_Q=global)");
}

TEST(CgQStorage, TheMemoryModelDropsQsSixteenBytesARowOfThePersistentStandardKernels) {
  const Matrix a = poisson2d(100, 100);
  for (int gpus : {1, 3}) {
    const Plan p = make_plan(a, split_rows(a.n, gpus));
    EXPECT_DOUBLE_EQ(mem_bytes_per_iter(p, Variant::standard, false) - mem_bytes_per_iter(p, Variant::standard, false, true),
                     16.0 * static_cast<double>(a.n))
        << gpus << " GPUs";
    // The largest GPU's share drops by 16 bytes a row of that GPU (with halos, the busiest GPU
    // need not be the one with the most rows).
    const double drop = max_rank_mem_bytes(p, Variant::standard, false) - max_rank_mem_bytes(p, Variant::standard, false, true);
    bool a_ranks = false;
    for (const RankPlan& r : p.rank) a_ranks = a_ranks || drop == 16.0 * static_cast<double>(r.local_rows());
    EXPECT_TRUE(a_ranks) << drop;
    // The discrete kernels and Pipelined have no such q: unchanged.
    EXPECT_EQ(mem_bytes_per_iter(p, Variant::standard, true, true), mem_bytes_per_iter(p, Variant::standard, true));
    EXPECT_EQ(mem_bytes_per_iter(p, Variant::pipelined, false, true), mem_bytes_per_iter(p, Variant::pipelined, false));
  }
}
