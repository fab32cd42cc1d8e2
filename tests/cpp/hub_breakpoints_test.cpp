// The hub's global breakpoints as processes answer them (tests/cpp/hub_fixture.hpp): each list
// the hub sends carries a version, and only an answer echoing the latest counts as answered.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hub_fixture.hpp"

namespace {

using namespace dpdb::hub::testing;  // NOLINT(google-build-using-namespace): the fixture's words

class HubBreakpointsTest : public HubTest {
  protected:
    // An agent connected, with the version of the list the hub greeted it with.
    std::unique_ptr<Channel> agent_with_list(int pid, std::int64_t* version) {
        auto agent = std::make_unique<Channel>();
        Channel::connect(*agent, address(), kSecret, "agent", test_proc(pid));
        const auto list = wait_for_type(*agent, "breakpoints");
        EXPECT_TRUE(list.has_value());
        *version = list ? list->num("version") : 0;
        return agent;
    }

    // The next list the hub sends the agent, and its version.
    std::int64_t next_list(Channel& agent) {
        const auto list = wait_for_type(agent, "breakpoints");
        EXPECT_TRUE(list.has_value()) << "no breakpoints list reached the agent";
        return list ? list->num("version") : 0;
    }

    Json ask(Channel& client, const std::string& type, Json fields) {
        const std::int64_t id = ++request_id_;
        fields["id"] = id;
        EXPECT_TRUE(client.send(make(type, std::move(fields))));
        const auto answer = wait_for(
            client, [&](const Message& m) { return m.type == "result" && m.num("id") == id; });
        EXPECT_TRUE(answer.has_value()) << "no answer to " << type;
        return answer ? answer->body : Json::object();
    }

    // The agent's status, then a proc_update behind it on the same connection: the subscribed
    // client hears the update once the hub has taken the status too (it reads a connection's
    // messages in order), so the break_list that follows sees it.
    void answer(Channel& agent, Channel& subscriber, int pid, Json status) {
        ASSERT_TRUE(agent.send(make("break_status", std::move(status))));
        ASSERT_TRUE(agent.send(make("proc_update", {{"proc", test_proc(pid)}})));
        ASSERT_TRUE(wait_for_event(subscriber, "process_update").has_value());
    }

    std::int64_t request_id_ = 100;
};

TEST_F(HubBreakpointsTest, EachListCarriesANewVersion) {
    std::int64_t greeted = 0;
    auto agent = agent_with_list(5100, &greeted);
    auto client = connect_client();
    ask(*client, "break_add", {{"spec", "app.py:3"}, {"condition", ""}});
    const auto added = next_list(*agent);
    EXPECT_GT(added, greeted);
    ask(*client, "break_clear", {{"bp", 0}});
    EXPECT_GT(next_list(*agent), added);
    // A newcomer is greeted with the latest.
    std::int64_t late = 0;
    auto newcomer = agent_with_list(5101, &late);
    EXPECT_EQ(late, added + 1);
}

// A clear, then an add, before a slow process answers either: its answer to the clear is not
// its answer to the add, and `dpdb break` goes on waiting for it.
TEST_F(HubBreakpointsTest, AnAnswerToAnEarlierListIsNotAnAnswerToTheLatest) {
    std::int64_t greeted = 0;
    auto agent = agent_with_list(5200, &greeted);
    auto client = connect_client();
    subscribe(*client);
    ask(*client, "break_add", {{"spec", "app.py:3"}, {"condition", ""}});
    const auto first = next_list(*agent);
    answer(*agent, *client, 5200, {{"resolved", {1}}, {"version", first}});
    ask(*client, "break_clear", {{"bp", 1}});
    const auto cleared = next_list(*agent);
    ask(*client, "break_add", {{"spec", "app.py:4"}, {"condition", ""}});
    const auto added = next_list(*agent);

    answer(*agent, *client, 5200, {{"resolved", Json::array()}, {"version", cleared}});
    auto standing = ask(*client, "break_list", Json::object())["data"];
    EXPECT_EQ(standing["waiting"], 1) << standing.dump();
    EXPECT_EQ(standing["waiting_hosts"]["testhost"], 1) << standing.dump();
    ASSERT_EQ(standing["breakpoints"].size(), 1u);
    EXPECT_EQ(standing["breakpoints"][0]["pending"], 0) << "taken for not loaded: " << standing;

    answer(*agent, *client, 5200, {{"resolved", {2}}, {"version", added}});
    standing = ask(*client, "break_list", Json::object())["data"];
    EXPECT_EQ(standing["waiting"], 0) << standing.dump();
    EXPECT_EQ(standing["breakpoints"][0]["processes"], 1) << standing.dump();
}

// An agent of an earlier release echoes no version: its answer is taken for the latest, as it
// was before versions.
TEST_F(HubBreakpointsTest, AnAnswerWithoutAVersionCountsAsBefore) {
    std::int64_t greeted = 0;
    auto agent = agent_with_list(5300, &greeted);
    auto client = connect_client();
    subscribe(*client);
    ask(*client, "break_add", {{"spec", "app.py:3"}, {"condition", ""}});
    next_list(*agent);
    answer(*agent, *client, 5300, {{"resolved", {1}}});
    const auto standing = ask(*client, "break_list", Json::object())["data"];
    EXPECT_EQ(standing["waiting"], 0) << standing.dump();
    EXPECT_EQ(standing["breakpoints"][0]["processes"], 1) << standing.dump();
}

}  // namespace
