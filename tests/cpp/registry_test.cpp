#include "hub/registry.hpp"

#include <gtest/gtest.h>

namespace {

using dpdb::hub::Registry;
using Json = dpdb::wire::Json;

TEST(Registry, AProcessBackOnAFreshConnectionKeepsItsSessionsAndTheirIds) {
    Registry registry;
    registry.add_process(7, {{"pid", 4242}, {"host", "node17"}});
    registry.add_process(8, {{"pid", 4242}, {"host", "node18"}});
    registry.open_session(8, 1, Json::object());  // node18's, id 1
    const auto id = registry.open_session(7, 3, {{"line", 12}}).id;
    EXPECT_EQ(registry.connection_of("node17", 4242), 7u);
    EXPECT_EQ(registry.connection_of("node19", 4242), 0u);

    registry.move_process(7, 9);
    EXPECT_EQ(registry.process(7), nullptr);
    ASSERT_NE(registry.process(9), nullptr);
    EXPECT_EQ(registry.process(9)->connection, 9u);
    EXPECT_EQ(registry.connection_of("node17", 4242), 9u);
    EXPECT_EQ(registry.sessions_of(7), std::vector<std::int64_t>{});
    EXPECT_EQ(registry.sessions_of(9), std::vector<std::int64_t>{id});
    ASSERT_NE(registry.session_of_agent(9, 3), nullptr);
    EXPECT_EQ(registry.session_of_agent(9, 3)->id, id);
    EXPECT_EQ(registry.session(id)->agent, 9u);
}

TEST(Registry, ASessionTakesTheIdItHadBeforeARestartWhenFree) {
    Registry registry;
    registry.number_from(6);  // ids up to 5 were remembered
    registry.add_process(1, {{"pid", 10}, {"host", "a"}});
    EXPECT_EQ(registry.open_session(1, 1, Json::object()).id, 6);
    EXPECT_EQ(registry.open_session(1, 2, Json::object(), 3).id, 3);
    EXPECT_EQ(registry.open_session(1, 3, Json::object(), 3).id, 7);  // taken: a new one
    EXPECT_EQ(registry.open_session(1, 4, Json::object(), 9).id, 9);
    EXPECT_EQ(registry.open_session(1, 5, Json::object()).id, 10);
}

TEST(Registry, TheHubsWordOnReachabilityIsNeverTheAgents) {
    Registry registry;
    registry.add_process(1, {{"pid", 10}, {"unreachable_since", 1.0}});
    EXPECT_FALSE(registry.process(1)->info.contains("unreachable_since"));
}

}  // namespace
