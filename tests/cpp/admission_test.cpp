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
};

TEST_F(AdmissionTest, EverySlotComesBackHoweverItEnds) {
    for (int round = 0; round < 1000; ++round) {
        auto slot = admission.admit("10.0.0.1", t0);
        ASSERT_TRUE(slot) << round;
        if (round % 2) slot->release();  // authenticated; else destroyed (closed, reset, ...)
    }
    EXPECT_EQ(admission.unauthenticated(), 0u);
    EXPECT_TRUE(admission.admit("10.0.0.1", t0));
}

TEST_F(AdmissionTest, LimitsPerAddressAndInAll) {
    std::vector<Admission::Slot> held;
    for (int i = 0; i < 32; ++i) held.push_back(*admission.admit("10.0.0.1", t0));
    EXPECT_FALSE(admission.admit("10.0.0.1", t0));
    for (int a = 2; held.size() < 256; ++a) {
        for (int i = 0; i < 32 && held.size() < 256; ++i) {
            held.push_back(*admission.admit("10.0.0." + std::to_string(a), t0));
        }
    }
    EXPECT_FALSE(admission.admit("10.0.1.1", t0));
    held.pop_back();
    EXPECT_TRUE(admission.admit("10.0.1.1", t0));
}

TEST_F(AdmissionTest, AMovedSlotIsGivenBackOnce) {
    auto slot = admission.admit("10.0.0.1", t0);
    Admission::Slot moved = std::move(*slot);
    slot.reset();
    EXPECT_EQ(admission.unauthenticated("10.0.0.1"), 1u);
    moved.release();
    moved.release();
    EXPECT_EQ(admission.unauthenticated(), 0u);
}

TEST_F(AdmissionTest, ASlotOutlivingTheAdmissionIsHarmless) {
    Admission::Slot slot;
    {
        Admission gone([](const std::string&) {});
        slot = *gone.admit("10.0.0.1", t0);
    }
    slot.release();
}

TEST_F(AdmissionTest, RefusalsAreSummarisedNotLoggedOneByOne) {
    std::vector<Admission::Slot> held;
    for (int i = 0; i < 32; ++i) held.push_back(*admission.admit("127.0.4.1", t0));
    for (int i = 0; i < 1204; ++i) EXPECT_FALSE(admission.admit("127.0.4.1", t0 + 1s));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0],
              "refusing connections from 127.0.4.1: 32 unauthenticated connections "
              "open from it");
    admission.tick(t0 + 61s);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[1], "1,204 refused connections from 127.0.4.1 in the last minute");
    admission.tick(t0 + 200s);
    EXPECT_EQ(lines.size(), 2u);
}

TEST_F(AdmissionTest, RefusalsFromManyAddressesStayFewLines) {
    std::vector<Admission::Slot> held;
    for (int a = 0; held.size() < 256; ++a) {
        for (int i = 0; i < 32; ++i) held.push_back(*admission.admit(std::to_string(a), t0));
    }
    for (int a = 0; a < 1000; ++a) admission.admit("10.9." + std::to_string(a), t0);
    admission.tick(t0 + 61s);
    ASSERT_EQ(lines.size(), 20u + 20u + 1u);  // first refusals, summaries, the rest in one line
    EXPECT_EQ(lines.back(), "980 refused connections from other addresses in the last minute");
}

TEST_F(AdmissionTest, FailuresBlockAnAddressForAWhile) {
    for (int i = 0; i < 4; ++i) admission.failure("10.0.0.9", "bad frame", t0);
    EXPECT_FALSE(admission.blocked("10.0.0.9", t0));
    admission.failure("10.0.0.9", "bad frame", t0);
    EXPECT_EQ(*admission.blocked("10.0.0.9", t0 + 1s),
              "too many failed authentications from 10.0.0.9; try again in 30 s");
    EXPECT_FALSE(admission.blocked("10.0.0.8", t0 + 1s));
    EXPECT_FALSE(admission.blocked("10.0.0.9", t0 + 31s));
    for (int i = 0; i < 10; ++i) admission.failure("unix", "bad frame", t0);
    EXPECT_FALSE(admission.blocked("unix", t0));
}

TEST_F(AdmissionTest, StrangersHaveALogBudget) {
    for (int i = 0; i < 5000; ++i) {
        admission.failure("10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250),
                          "refused: wrong secret", t0);
    }
    EXPECT_EQ(lines.size(), 20u);
    for (int i = 0; i < 5; ++i) admission.failure("10.2.0.1", "bad frame", t0);
    EXPECT_EQ(lines.back(), "blocking 10.2.0.1 for 30 s after 5 failures");
    admission.tick(t0 + 61s);
    ASSERT_EQ(lines.size(), 22u);
    EXPECT_EQ(lines.back(),
              "4,985 more lines about unauthenticated peers left out of the log in the last "
              "minute");
}

}  // namespace
}  // namespace dpdb::hub
