#include "hub/admission.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dpdb::hub {
namespace {

using namespace std::chrono_literals;

struct AdmissionTest : ::testing::Test {
    std::vector<std::string> lines;
    Admission::Clock::time_point t0 = Admission::Clock::now();
    Admission admission{[this](const std::string& line) { lines.push_back(line); }};

    // A slot whose eviction is recorded in `evicted` under `name`.
    Admission::Slot admit(const std::string& address, const std::string& name,
                          std::vector<std::string>& evicted, Admission::Clock::time_point now) {
        auto slot = admission.admit(address, now);
        EXPECT_TRUE(slot.has_value()) << name;
        if (!slot) return {};
        slot->on_evict([&evicted, name] { evicted.push_back(name); });
        return std::move(*slot);
    }
};

TEST_F(AdmissionTest, EverySlotComesBackHoweverItEnds) {
    for (int round = 0; round < 1000; ++round) {
        auto slot = admission.admit("10.0.0.1", t0);
        ASSERT_TRUE(slot && slot->held()) << round;
        if (round % 2) slot->release();  // authenticated; else destroyed (closed, reset, ...)
    }
    EXPECT_EQ(admission.unauthenticated(), 0u);
}

TEST_F(AdmissionTest, TheOldestOfTheNewcomersAddressMakesRoomOnceItHadItsGrace) {
    Admission capped([](const std::string&) {}, {16, 4});
    std::vector<std::string> evicted;
    std::vector<Admission::Slot> held;
    for (int i = 0; i < 4; ++i) {
        auto slot = capped.admit("10.0.0.1", t0 + std::chrono::milliseconds(i));
        slot->on_evict([&evicted, i] { evicted.push_back("a" + std::to_string(i)); });
        held.push_back(std::move(*slot));
    }
    // All four younger than their grace: the newcomer is refused (and retries).
    EXPECT_FALSE(capped.admit("10.0.0.1", t0 + 1s));
    auto owner = capped.admit("10.0.0.1", t0 + 3s);
    ASSERT_TRUE(owner);
    EXPECT_EQ(evicted, std::vector<std::string>{"a0"});
    EXPECT_FALSE(held[0].held());
    EXPECT_EQ(capped.unauthenticated("10.0.0.1"), 4u);
    held.clear();  // the evicted one's slot, destroyed later, gives back nothing twice
    EXPECT_EQ(capped.unauthenticated(), 1u);
}

TEST_F(AdmissionTest, WhenAllPlacesAreTakenTheAddressHoldingMostGivesOneUp) {
    std::vector<std::string> evicted;
    std::vector<Admission::Slot> held;
    for (int i = 0; i < 200; ++i) held.push_back(admit("10.0.0.9", "flood", evicted, t0));
    for (int a = 0; held.size() < 256; ++a) {
        held.push_back(admit("10.0.1." + std::to_string(a), "other", evicted, t0));
    }
    auto owner = admit("10.0.2.1", "owner", evicted, t0 + 3s);
    EXPECT_TRUE(owner.held());
    EXPECT_EQ(evicted, std::vector<std::string>{"flood"});
    EXPECT_EQ(admission.unauthenticated(), 256u);
    EXPECT_EQ(admission.unauthenticated("10.0.0.9"), 199u);
}

TEST_F(AdmissionTest, AYoungFloodFromOneAddressMakesRoomFromAnOldStrangerElsewhere) {
    std::vector<std::string> evicted;
    std::vector<Admission::Slot> held;
    held.push_back(admit("10.0.3.1", "old", evicted, t0));
    for (int i = 0; held.size() < 256; ++i)
        held.push_back(admit("10.0.0.9", "flood", evicted, t0 + 2500ms));
    auto owner = admit("10.0.2.1", "owner", evicted, t0 + 3s);
    EXPECT_TRUE(owner.held());
    EXPECT_EQ(evicted, std::vector<std::string>{"old"});
}

TEST_F(AdmissionTest, AMovedSlotIsGivenBackOnce) {
    auto slot = admission.admit("10.0.0.1", t0);
    Admission::Slot moved = std::move(*slot);
    EXPECT_EQ(admission.unauthenticated("10.0.0.1"), 1u);
    moved.release();
    moved.release();
    EXPECT_EQ(admission.unauthenticated(), 0u);
}

TEST_F(AdmissionTest, ASlotOutlivingTheAdmissionIsHarmless) {
    Admission::Slot slot;
    {
        Admission gone([](const std::string&) {});
        slot = std::move(*gone.admit("10.0.0.1", t0));
    }
    EXPECT_FALSE(slot.held());
    slot.release();
}

TEST_F(AdmissionTest, EvictionsAndRefusalsAreSummarisedNotLoggedOneByOne) {
    std::vector<std::string> evicted;
    std::vector<Admission::Slot> held;
    // One every 10 ms: each newcomer finds the oldest 2.56 s old, past its grace.
    for (int i = 0; i < 1460; ++i) {
        held.push_back(admit("127.0.4.1", "x", evicted, t0 + i * 10ms));
    }
    EXPECT_EQ(evicted.size(), 1204u);
    // 256 at once, then more at the same moment: every place is young, and they are refused.
    for (int i = 0; i < 256; ++i) held.push_back(admit("127.0.4.1", "x", evicted, t0 + 20s));
    for (int i = 0; i < 30; ++i) EXPECT_FALSE(admission.admit("127.0.4.1", t0 + 20s));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0],
              "closing the oldest unauthenticated connections from 127.0.4.1 to make room: 256 "
              "unauthenticated connections open from it");
    EXPECT_EQ(lines[1],
              "refusing connections from 127.0.4.1 for now: every place is taken by a "
              "connection younger than 2000 ms");
    admission.tick(t0 + 61s);
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[2],
              "1,460 unauthenticated connections from 127.0.4.1 closed to make room in the last "
              "minute");
    EXPECT_EQ(lines[3], "30 refused connections from 127.0.4.1 in the last minute");
    admission.tick(t0 + 200s);
    EXPECT_EQ(lines.size(), 4u);
}

TEST_F(AdmissionTest, FailuresBlockNobodyAndHaveALogBudget) {
    for (int i = 0; i < 5000; ++i) {
        admission.note("refused: wrong secret", t0);
    }
    EXPECT_EQ(lines.size(), 20u);
    for (int i = 0; i < 50; ++i) admission.note("bad frame", t0);
    EXPECT_TRUE(admission.admit("10.2.0.1", t0 + 1s));
    admission.tick(t0 + 61s);
    ASSERT_EQ(lines.size(), 21u);
    EXPECT_EQ(lines.back(),
              "5,030 more lines about unauthenticated peers left out of the log in the last "
              "minute");
}

}  // namespace
}  // namespace dpdb::hub
