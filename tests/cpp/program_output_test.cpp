// The programs' output through the hub (hub/program_output.cpp): agents copy it only while a
// client watches, and only the clients that asked get it.
#include <gtest/gtest.h>

#include "hub_fixture.hpp"

namespace {

using namespace dpdb::hub::testing;  // NOLINT(google-build-using-namespace): the fixture's words

TEST_F(HubTest, ProgramOutputGoesToTheClientsThatWatchItAndOnlyWhileOneDoes) {
    auto plain = connect_client();
    subscribe(*plain);
    auto watcher = connect_client();
    ASSERT_TRUE(watcher->send(make("subscribe", {{"program_output", true}})));
    ASSERT_TRUE(list(*watcher).has_value());

    // An agent that connects while a client watches is told so before its breakpoints, which its
    // program waits for at start-up.
    Channel agent;
    Channel::connect(agent, address(), kSecret, "agent", test_proc(10));
    const auto order = next_message(agent);
    ASSERT_EQ(order.type, "copy_output");
    EXPECT_EQ(order.body["on"], true);
    EXPECT_EQ(next_message(agent).type, "breakpoints");

    ASSERT_TRUE(agent.send(make("program_output", {{"stream", "stdout"}, {"text", "hello\n"}})));
    const auto copied = wait_for_event(*watcher, "program_output");
    ASSERT_TRUE(copied.has_value());
    EXPECT_EQ((*copied)["data"], (Json{{"pid", 10}, {"stream", "stdout"}, {"text", "hello\n"}}));

    // The plain subscriber gets the agent's later news, and never the output sent before it.
    ASSERT_TRUE(agent.send(make("proc_update", {{"proc", {{"pid", 10}}}})));
    for (;;) {
        const auto message = next_message(*plain);
        ASSERT_FALSE(message.type == "event" && message.str("kind") == "program_output");
        if (message.type == "event" && message.str("kind") == "process_update") break;
    }

    // The last watcher gone: the agents stop copying.
    watcher.reset();
    const auto off = next_message(agent);
    ASSERT_EQ(off.type, "copy_output");
    EXPECT_EQ(off.body["on"], false);
}

TEST_F(HubTest, ProgramOutputOfAnUnknownStreamIsNotPassedOn) {
    auto watcher = connect_client();
    ASSERT_TRUE(watcher->send(make("subscribe", {{"program_output", true}})));
    ASSERT_TRUE(list(*watcher).has_value());
    Channel agent;
    Channel::connect(agent, address(), kSecret, "agent", test_proc(11));
    EXPECT_EQ(next_message(agent).type, "copy_output");
    ASSERT_TRUE(agent.send(make("program_output", {{"stream", "stdin"}, {"text", "no\n"}})));
    ASSERT_TRUE(agent.send(make("program_output", {{"stream", "stderr"}, {"text", "yes\n"}})));
    const auto copied = wait_for_event(*watcher, "program_output");
    ASSERT_TRUE(copied.has_value());
    EXPECT_EQ((*copied)["data"]["text"], "yes\n");
}

}  // namespace
