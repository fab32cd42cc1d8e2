// The hub, end to end (tests/cpp/hub_fixture.hpp): handshake, routing, job-wide requests, and
// what hostile or broken peers cannot do to it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "hub_fixture.hpp"

namespace {

using namespace dpdb::hub::testing;  // NOLINT(google-build-using-namespace): the fixture's words

// --- handshake ----------------------------------------------------------------------------------

TEST_F(HubTest, WelcomesClientsAndAgentsWithItsDescription) {
    Channel client;
    const Json hub = Channel::connect(client, address(), kSecret, "client");
    EXPECT_EQ(hub.at("name"), "test hub");
    EXPECT_EQ(hub.at("pid"), ::getpid());
    EXPECT_EQ(hub.at("socket"), hub_->socket_path());
    auto agent = connect_agent(test_proc(1));
    EXPECT_TRUE(agent->is_open());
}

TEST_F(HubTest, RefusesAWrongSecretWithAOneLineReason) {
    for (const char* role : {"client", "agent"}) {
        Channel channel;
        try {
            Channel::connect(channel, address(), "not the secret", role);
            ADD_FAILURE() << role << " was admitted with a wrong secret";
        } catch (const std::runtime_error& error) {
            const std::string what = error.what();
            EXPECT_NE(what.find("authentication"), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
        EXPECT_FALSE(channel.is_open());
    }
    EXPECT_TRUE(logged("authentication failed"));
    // The right secret still works afterwards.
    auto client = connect_client();
    EXPECT_TRUE(list(*client).has_value());
}

TEST_F(HubTest, RefusesAnotherProtocolVersion) {
    Channel raw(dpdb::connect_to(address()));
    ASSERT_TRUE(raw.is_open());
    const Message challenge = next_message(raw);
    ASSERT_EQ(challenge.type, "challenge");
    EXPECT_EQ(challenge.num("v"), dpdb::wire::kProtocolVersion);
    const std::string nonce = dpdb::wire::random_hex(16);
    ASSERT_TRUE(raw.send(make(
        "hello",
        {{"v", dpdb::wire::kProtocolVersion + 1},
         {"role", "client"},
         {"nonce", nonce},
         {"mac", dpdb::wire::handshake_mac(kSecret, "client", challenge.str("nonce"), nonce)}})));
    const Message answer = next_message(raw);
    ASSERT_EQ(answer.type, "refused");
    EXPECT_NE(answer.str("reason").find("protocol version"), std::string::npos)
        << answer.str("reason");
    EXPECT_TRUE(closed_by_peer(raw.fd()));
}

TEST_F(HubTest, RefusesAnUnknownRoleAndAnythingButHello) {
    {
        Channel raw(dpdb::connect_to(address()));
        const Message challenge = next_message(raw);
        const std::string nonce = dpdb::wire::random_hex(16);
        // Even with a valid MAC for it, nobody may claim to be the hub.
        ASSERT_TRUE(raw.send(make(
            "hello",
            {{"v", dpdb::wire::kProtocolVersion},
             {"role", "hub"},
             {"nonce", nonce},
             {"mac", dpdb::wire::handshake_mac(kSecret, "hub", challenge.str("nonce"), nonce)}})));
        const Message answer = next_message(raw);
        ASSERT_EQ(answer.type, "refused");
        EXPECT_NE(answer.str("reason").find("role"), std::string::npos);
    }
    {
        Channel raw(dpdb::connect_to(address()));
        ASSERT_EQ(next_message(raw).type, "challenge");
        ASSERT_TRUE(raw.send(make("list", {{"id", 1}})));
        const Message answer = next_message(raw);
        ASSERT_EQ(answer.type, "refused");
        EXPECT_NE(answer.str("reason").find("expected hello"), std::string::npos);
    }
}

TEST_F(HubTest, AMacForOneRoleDoesNotAdmitAnother) {
    Channel raw(dpdb::connect_to(address()));
    const Message challenge = next_message(raw);
    const std::string nonce = dpdb::wire::random_hex(16);
    ASSERT_TRUE(raw.send(make(
        "hello",
        {{"v", dpdb::wire::kProtocolVersion},
         {"role", "agent"},
         {"nonce", nonce},
         {"mac", dpdb::wire::handshake_mac(kSecret, "client", challenge.str("nonce"), nonce)}})));
    const Message answer = next_message(raw);
    ASSERT_EQ(answer.type, "refused");
    EXPECT_NE(answer.str("reason").find("authentication"), std::string::npos);
}

// --- registry and routing -----------------------------------------------------------------------

TEST_F(HubTest, SessionOpenIsPublishedAndListed) {
    auto watcher = connect_client();
    subscribe(*watcher);
    auto agent = connect_agent(test_proc(4242));

    const auto started = wait_for_event(*watcher, "process_start");
    ASSERT_TRUE(started.has_value());
    EXPECT_EQ((*started)["data"]["pid"], 4242);

    ASSERT_TRUE(agent->send(
        make("session_open",
             {{"sid", 7},
              {"info", {{"thread", "MainThread"}, {"function", "handler"}, {"line", 12}}}})));
    const auto opened = wait_for_event(*watcher, "session_open");
    ASSERT_TRUE(opened.has_value());
    const Json& data = (*opened)["data"];
    const auto hub_sid = data.at("sid").get<std::int64_t>();
    EXPECT_EQ(data.at("pid"), 4242);
    EXPECT_EQ(data.at("host"), "testhost");
    EXPECT_EQ(data.at("function"), "handler");
    EXPECT_EQ(data.at("attached"), false);
    EXPECT_TRUE(data.contains("since"));

    const auto listing = list(*watcher);
    ASSERT_TRUE(listing.has_value());
    ASSERT_EQ((*listing)["processes"].size(), 1u);
    EXPECT_EQ((*listing)["processes"][0]["pid"], 4242);
    EXPECT_EQ((*listing)["processes"][0]["sessions"], Json::array({hub_sid}));
    ASSERT_EQ((*listing)["sessions"].size(), 1u);
    EXPECT_EQ((*listing)["sessions"][0]["sid"], hub_sid);
    EXPECT_EQ((*listing)["sessions"][0]["line"], 12);

    // An update replaces the description but keeps when the session started.
    ASSERT_TRUE(
        agent->send(make("session_update", {{"sid", 7}, {"info", {{"function", "other"}}}})));
    const auto updated = wait_for_event(*watcher, "session_update");
    ASSERT_TRUE(updated.has_value());
    EXPECT_EQ((*updated)["data"]["function"], "other");
    EXPECT_EQ((*updated)["data"]["since"], data.at("since"));
    EXPECT_FALSE((*updated)["data"].contains("line"));

    // And the agent may close it itself.
    ASSERT_TRUE(agent->send(make("session_close", {{"sid", 7}, {"reason", "continued"}})));
    const auto closed = wait_for_event(*watcher, "session_close");
    ASSERT_TRUE(closed.has_value());
    EXPECT_EQ((*closed)["data"]["sid"], hub_sid);
    EXPECT_EQ((*closed)["data"]["reason"], "continued");
    EXPECT_TRUE(listing_of(*watcher)["sessions"].empty());
}

TEST_F(HubTest, SubscribingTwiceDoesNotDuplicateEvents) {
    auto watcher = connect_client();
    subscribe(*watcher);
    subscribe(*watcher);
    auto agent = connect_agent(test_proc(5));
    ASSERT_TRUE(wait_for_event(*watcher, "process_start").has_value());
    EXPECT_FALSE(wait_for_event(*watcher, "process_start", kQuietMs).has_value())
        << "the same event arrived twice";
}

// dpdb run's console: it hears its own run's processes only (and those of no run), so that a job
// of N runs pausing is not N * N events.
TEST_F(HubTest, ASubscriberScopedToARunHearsOnlyThatRunsEvents) {
    auto watcher = connect_client();
    ASSERT_TRUE(watcher->send(make("subscribe", {{"run", "11"}})));
    ASSERT_TRUE(list(*watcher).has_value());  // the subscription has been taken
    // Another client, unsubscribed, sees when the hub has handled the other run's message: an
    // event of it, had it been published, would have been queued to the watcher by then, before
    // the watcher's own run's.
    auto observer = connect_client();
    const auto until_listed = [&](const std::function<bool(const Json&)>& done) {
        for (int attempt = 0; attempt < 1000; ++attempt) {
            if (done(listing_of(*observer))) return true;
        }
        return false;
    };
    auto proc_other = test_proc(22);
    proc_other["run"] = "22";
    auto other = connect_agent(proc_other);
    auto proc_mine = test_proc(11);
    proc_mine["run"] = "11";
    auto mine = connect_agent(proc_mine);
    const auto started = wait_for_event(*watcher, "process_start");
    ASSERT_TRUE(started.has_value());
    EXPECT_EQ((*started)["data"]["pid"], 11);

    const Json info = {{"thread", "MainThread"}, {"function", "f"}, {"line", 3}};
    ASSERT_TRUE(other->send(make("session_open", {{"sid", 1}, {"info", info}})));
    ASSERT_TRUE(until_listed([](const Json& l) { return l["sessions"].size() == 1; }));
    ASSERT_TRUE(mine->send(make("session_open", {{"sid", 1}, {"info", info}})));
    const auto opened = wait_for_event(*watcher, "session_open");
    ASSERT_TRUE(opened.has_value());
    EXPECT_EQ((*opened)["data"]["pid"], 11);

    // Closes and exits name no run in their data: the hub knows whose they are.
    ASSERT_TRUE(other->send(make("session_close", {{"sid", 1}, {"reason", "continued"}})));
    ASSERT_TRUE(until_listed([](const Json& l) { return l["sessions"].size() == 1; }));
    ASSERT_TRUE(mine->send(make("session_close", {{"sid", 1}, {"reason", "continued"}})));
    const auto closed = wait_for_event(*watcher, "session_close");
    ASSERT_TRUE(closed.has_value());
    EXPECT_EQ((*closed)["data"]["sid"], (*opened)["data"]["sid"]);
    other.reset();
    ASSERT_TRUE(until_listed([](const Json& l) { return l["processes"].size() == 1; }));
    mine.reset();
    const auto exited = wait_for_event(*watcher, "process_exit");
    ASSERT_TRUE(exited.has_value());
    EXPECT_EQ((*exited)["data"]["pid"], 11);
}

TEST_F(HubTest, AttachRoutesTheConsoleBothWays) {
    auto agent = connect_agent(test_proc(100));
    auto client = connect_client();
    const std::int64_t agent_sid = 7;
    const std::int64_t hub_sid = open_session(*agent, *client, agent_sid);
    ASSERT_GT(hub_sid, 0);
    ASSERT_NE(hub_sid, agent_sid);  // so that the tests below see the hub translating ids

    ASSERT_TRUE(client->send(make("attach", {{"sid", hub_sid}, {"cols", 120}})));
    const auto attached = wait_for_type(*client, "attached");
    ASSERT_TRUE(attached.has_value());
    EXPECT_EQ(attached->num("sid"), hub_sid);
    EXPECT_EQ((*attached)["session"]["attached"], true);
    EXPECT_EQ((*attached)["session"]["pid"], 100);

    const Message attach = next_message(*agent);
    ASSERT_EQ(attach.type, "attach");
    EXPECT_EQ(attach.num("sid"), agent_sid);
    EXPECT_EQ(attach.num("cols"), 120);

    // Agent -> client, with the hub's session id.
    ASSERT_TRUE(agent->send(make("output", {{"sid", agent_sid}, {"text", "> app.py(3)f()\n"}})));
    ASSERT_TRUE(agent->send(make("prompt", {{"sid", agent_sid}, {"text", "(Pdb) "}})));
    Message output = next_message(*client);
    ASSERT_EQ(output.type, "output");
    EXPECT_EQ(output.num("sid"), hub_sid);
    EXPECT_EQ(output.str("text"), "> app.py(3)f()\n");
    Message prompt = next_message(*client);
    ASSERT_EQ(prompt.type, "prompt");
    EXPECT_EQ(prompt.num("sid"), hub_sid);
    EXPECT_EQ(prompt.str("text"), "(Pdb) ");

    // Client -> agent, with the agent's session id.
    ASSERT_TRUE(client->send(make("input", {{"sid", hub_sid}, {"line", "next"}})));
    Message input = next_message(*agent);
    ASSERT_EQ(input.type, "input");
    EXPECT_EQ(input.num("sid"), agent_sid);
    EXPECT_EQ(input.str("line"), "next");

    // Completion requests and answers, and interrupts, travel the same way.
    ASSERT_TRUE(client->send(make("complete", {{"sid", hub_sid},
                                               {"id", 3},
                                               {"text", "pri"},
                                               {"line", "pri"},
                                               {"begidx", 0},
                                               {"endidx", 3}})));
    Message complete = next_message(*agent);
    ASSERT_EQ(complete.type, "complete");
    EXPECT_EQ(complete.num("sid"), agent_sid);
    EXPECT_EQ(complete.num("id"), 3);
    ASSERT_TRUE(agent->send(
        make("completions", {{"sid", agent_sid}, {"id", 3}, {"matches", {"print", "property"}}})));
    Message completions = next_message(*client);
    ASSERT_EQ(completions.type, "completions");
    EXPECT_EQ(completions.num("sid"), hub_sid);
    EXPECT_EQ(completions["matches"], Json::array({"print", "property"}));
    ASSERT_TRUE(client->send(make("interrupt", {{"sid", hub_sid}})));
    Message interrupt = next_message(*agent);
    ASSERT_EQ(interrupt.type, "interrupt");
    EXPECT_EQ(interrupt.num("sid"), agent_sid);

    // An explicit detach reaches the agent and is confirmed to the client.
    ASSERT_TRUE(client->send(make("detach", {{"sid", hub_sid}})));
    EXPECT_EQ(next_message(*client).type, "detached");
    Message detach = next_message(*agent);
    ASSERT_EQ(detach.type, "detach");
    EXPECT_EQ(detach.num("sid"), agent_sid);
}

TEST_F(HubTest, OutputOfAnUnattachedSessionGoesNowhere) {
    auto agent = connect_agent(test_proc(100));
    auto client = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *client, 1);
    ASSERT_TRUE(agent->send(make("output", {{"sid", 1}, {"text", "nobody sees this"}})));
    ASSERT_TRUE(agent->send(make("output", {{"sid", 99}, {"text", "no such session"}})));
    EXPECT_FALSE(wait_for_type(*client, "output", kQuietMs).has_value());
    // The agent is not dropped for it.
    ASSERT_TRUE(client->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
    EXPECT_TRUE(wait_for_type(*agent, "attach").has_value());
}

TEST_F(HubTest, ConsoleTrafficNeedsAnAttachedSession) {
    auto agent = connect_agent(test_proc(100));
    auto client = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *client, 1);

    ASSERT_TRUE(client->send(make("input", {{"sid", hub_sid}, {"line", "c"}})));
    auto error = wait_for_type(*client, "error");
    ASSERT_TRUE(error.has_value());
    EXPECT_NE(error->str("message").find("not attached"), std::string::npos);

    ASSERT_TRUE(client->send(make("attach", {{"sid", hub_sid + 100}, {"cols", 80}})));
    error = wait_for_type(*client, "error");
    ASSERT_TRUE(error.has_value());
    EXPECT_NE(error->str("message").find("no session"), std::string::npos);

    EXPECT_FALSE(wait_for_type(*agent, "input", kQuietMs).has_value());
    EXPECT_TRUE(list(*client).has_value());  // errors do not cost the client its connection
}

TEST_F(HubTest, ASecondClientTakesOverAnAttachedSession) {
    auto agent = connect_agent(test_proc(100));
    auto first = connect_client();
    auto second = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *first, 1);
    ASSERT_TRUE(first->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
    ASSERT_TRUE(wait_for_type(*first, "attached").has_value());
    ASSERT_TRUE(wait_for_type(*agent, "attach").has_value());

    ASSERT_TRUE(second->send(make("attach", {{"sid", hub_sid}, {"cols", 100}})));
    const auto detached = wait_for_type(*first, "detached");
    ASSERT_TRUE(detached.has_value());
    EXPECT_EQ(detached->num("sid"), hub_sid);
    EXPECT_TRUE(wait_for_type(*second, "attached").has_value());
    EXPECT_EQ(next_message(*agent).type, "detach");
    const Message attach = next_message(*agent);
    EXPECT_EQ(attach.type, "attach");
    EXPECT_EQ(attach.num("cols"), 100);

    ASSERT_TRUE(agent->send(make("output", {{"sid", 1}, {"text", "to the second"}})));
    const auto output = wait_for_type(*second, "output");
    ASSERT_TRUE(output.has_value());
    EXPECT_EQ(output->str("text"), "to the second");
    EXPECT_FALSE(wait_for_type(*first, "output", kQuietMs).has_value());
}

TEST_F(HubTest, ClientDisconnectDetachesButKeepsTheSession) {
    auto agent = connect_agent(test_proc(100));
    auto observer = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *observer, 3);
    {
        auto client = connect_client();
        ASSERT_TRUE(client->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
        ASSERT_TRUE(wait_for_type(*client, "attached").has_value());
        ASSERT_TRUE(wait_for_type(*agent, "attach").has_value());
        EXPECT_EQ(listing_of(*observer)["sessions"][0]["attached"], true);
        client->close();
    }
    const auto detach = wait_for_type(*agent, "detach");
    ASSERT_TRUE(detach.has_value());
    EXPECT_EQ(detach->num("sid"), 3);

    const auto listing = list(*observer);
    ASSERT_TRUE(listing.has_value());
    ASSERT_EQ((*listing)["sessions"].size(), 1u);
    EXPECT_EQ((*listing)["sessions"][0]["sid"], hub_sid);
    EXPECT_EQ((*listing)["sessions"][0]["attached"], false);
    EXPECT_EQ((*listing)["processes"].size(), 1u);
}

TEST_F(HubTest, AgentDisconnectClosesItsSessionsAndDetachesTheClient) {
    auto watcher = connect_client();
    subscribe(*watcher);
    auto agent = connect_agent(test_proc(777));
    auto client = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *client, 5);
    const std::int64_t other_sid =
        open_session(*agent, *client, 6, {{"thread", "Worker"}, {"function", "g"}});
    ASSERT_TRUE(client->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
    ASSERT_TRUE(wait_for_type(*client, "attached").has_value());
    ASSERT_TRUE(wait_for_type(*agent, "attach").has_value());

    agent->close();
    const auto detached = wait_for_type(*client, "detached");
    ASSERT_TRUE(detached.has_value());
    EXPECT_EQ(detached->num("sid"), hub_sid);
    EXPECT_NE(detached->str("reason").find("777"), std::string::npos) << detached->str("reason");

    std::vector<std::int64_t> closed;
    for (int i = 0; i < 2; ++i) {
        const auto event = wait_for_event(*watcher, "session_close");
        ASSERT_TRUE(event.has_value());
        closed.push_back((*event)["data"]["sid"].get<std::int64_t>());
    }
    std::sort(closed.begin(), closed.end());
    EXPECT_EQ(closed, (std::vector<std::int64_t>{std::min(hub_sid, other_sid),
                                                 std::max(hub_sid, other_sid)}));
    const auto exited = wait_for_event(*watcher, "process_exit");
    ASSERT_TRUE(exited.has_value());
    EXPECT_EQ((*exited)["data"]["pid"], 777);

    const auto listing = list(*client);
    ASSERT_TRUE(listing.has_value());
    EXPECT_TRUE((*listing)["sessions"].empty());
    EXPECT_TRUE((*listing)["processes"].empty());
}

TEST_F(HubTest, ProcUpdateReplacesTheDescription) {
    auto watcher = connect_client();
    subscribe(*watcher);
    auto agent = connect_agent(test_proc(10));
    const Json tags = {{"ROLE", "web"}};
    ASSERT_TRUE(agent->send(make("proc_update", {{"proc", {{"pid", 10}, {"tags", tags}}}})));
    const auto updated = wait_for_event(*watcher, "process_update");
    ASSERT_TRUE(updated.has_value());
    EXPECT_EQ((*updated)["data"]["tags"], tags);
    EXPECT_EQ(listing_of(*watcher)["processes"][0]["tags"], tags);
}

// --- hostile and broken peers -------------------------------------------------------------------

TEST_F(HubTest, GarbageBytesAreDropped) {
    expect_dropped_while_others_served("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
                                       "malformed input");
}

TEST_F(HubTest, AnOversizedLengthPrefixIsDropped) {
    // Announces 1 MiB + 1 bytes: refused at once, without waiting for (or buffering) them.
    expect_dropped_while_others_served(std::string("\x00\x10\x00\x01", 4) + "{}",
                                       "malformed input");
}

TEST_F(HubTest, AZeroLengthFrameIsDropped) {
    expect_dropped_while_others_served(std::string(4, '\0'), "malformed input");
}

TEST_F(HubTest, AValidFrameOfAnUnknownTypeIsDropped) {
    expect_dropped_while_others_served(dpdb::wire::encode_frame(R"({"t":"nonsense","sid":1})"),
                                       "unknown message type");
}

TEST_F(HubTest, AFrameOfInvalidJsonIsDropped) {
    expect_dropped_while_others_served(dpdb::wire::encode_frame("{\"t\":\"list\",\"id\":\xff}"),
                                       "malformed input");
}

TEST_F(HubTest, ATruncatedFrameThenCloseIsDropped) {
    auto client = connect_client();
    ASSERT_TRUE(list(*client).has_value());
    const int fd = connect_raw();
    ASSERT_GE(fd, 0);
    const std::string frame = dpdb::wire::frame(make("list", {{"id", 1}}));
    ASSERT_TRUE(send_raw(fd, frame.substr(0, frame.size() - 3)));
    // A half-received frame on one connection does not hold up the others.
    ASSERT_TRUE(list(*client).has_value());
    ::shutdown(fd, SHUT_WR);
    EXPECT_TRUE(closed_by_peer(fd));
    close_raw(fd);
    EXPECT_TRUE(list(*client).has_value());
}

TEST_F(HubTest, AnAuthenticatedPeerBreakingTheProtocolIsDropped) {
    auto observer = connect_client();
    {
        // A client may not speak for an agent.
        auto client = connect_client();
        ASSERT_TRUE(client->send(make("session_open", {{"sid", 1}, {"info", Json::object()}})));
        EXPECT_FALSE(wait_for_type(*client, "never", kWaitMs).has_value());
        EXPECT_THROW(client->receive(0), std::runtime_error);
    }
    {
        // An agent may not open the same session twice.
        auto agent = connect_agent(test_proc(1));
        ASSERT_TRUE(agent->send(make("session_open", {{"sid", 1}, {"info", Json::object()}})));
        ASSERT_TRUE(agent->send(make("session_open", {{"sid", 1}, {"info", Json::object()}})));
        EXPECT_FALSE(wait_for_type(*agent, "never", kWaitMs).has_value());
        EXPECT_THROW(agent->receive(0), std::runtime_error);
    }
    {
        // Garbage after a valid handshake.
        auto client = connect_client();
        ASSERT_TRUE(send_raw(client->fd(), "\xff\xff\xff\xff junk"));
        EXPECT_FALSE(wait_for_type(*client, "never", kWaitMs).has_value());
        EXPECT_THROW(client->receive(0), std::runtime_error);
    }
    const auto listing = list(*observer);
    ASSERT_TRUE(listing.has_value());
    EXPECT_TRUE((*listing)["processes"].empty());  // the dropped agent took its process along
}

TEST_F(HubTest, OversizedOutgoingMessagesDoNotTakeDownTheHub) {
    // Every message the agent sends fits in a frame, but what the hub assembles from them (a
    // session together with its process's details, a listing) does not.
    const std::string big(600 * 1024, 'a');
    auto agent = connect_agent({{"pid", 9}, {"argv", {big}}});
    auto client = connect_client();
    ASSERT_TRUE(agent->send(make("session_open", {{"sid", 1}, {"info", {{"function", "f"}}}})));
    // The hub's first session is 1; retry until the agent's session_open has been handled.
    std::optional<Message> attached;
    const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
    while (!attached && Clock::now() < deadline) {
        ASSERT_TRUE(client->send(make("attach", {{"sid", 1}, {"cols", 80}})));
        const auto answer = wait_for(
            *client, [](const Message& m) { return m.type == "attached" || m.type == "error"; });
        ASSERT_TRUE(answer.has_value());
        if (answer->type == "attached") attached = answer;
    }
    ASSERT_TRUE(attached.has_value());
    ASSERT_TRUE(wait_for_type(*agent, "attach").has_value());

    // The listing holds the big argv twice: it comes in pages, each within a frame.
    int pages = 0;
    const auto whole = list(*client, &pages);
    ASSERT_TRUE(whole.has_value());
    EXPECT_GE(pages, 2);
    EXPECT_EQ((*whole)["processes"].size(), 1u);
    ASSERT_EQ((*whole)["sessions"].size(), 1u);
    EXPECT_EQ((*whole)["sessions"][0]["argv"][0].get<std::string>().size(), big.size());

    // Now the session alone outgrows a frame, and a subscriber is told of every change to it.
    ASSERT_TRUE(agent->send(
        make("session_update", {{"sid", 1}, {"info", {{"function", "f"}, {"locals", big}}}})));
    auto watcher = connect_client();
    ASSERT_TRUE(watcher->send(make("subscribe")));
    ASSERT_TRUE(watcher->send(make("input", {{"sid", 999}, {"line", "sync"}})));
    ASSERT_TRUE(wait_for_type(*watcher, "error").has_value());

    // The client leaving makes the hub publish the session from inside its close handling.
    client->close();
    ASSERT_TRUE(wait_for_type(*agent, "detach").has_value());
    const auto told = wait_for(*watcher, [](const Message& m) { return m.type == "error"; });
    ASSERT_TRUE(told.has_value());
    EXPECT_NE(told->str("message").find("event"), std::string::npos);

    // The hub is still there, and the agent still connected.
    ASSERT_TRUE(agent->send(make("session_close", {{"sid", 1}, {"reason", "done"}})));
    EXPECT_TRUE(wait_for_event(*watcher, "session_close").has_value());
    auto late = connect_client();
    const auto listing = list(*late);
    ASSERT_TRUE(listing.has_value());
    EXPECT_TRUE((*listing)["sessions"].empty());
    EXPECT_EQ((*listing)["processes"].size(), 1u);
}

TEST_F(HubTest, AClientThatDoesNotReadIsDroppedBeforeTheHubHoardsWhatItAskedFor) {
    // Each listing (the argv twice) is nearly a frame, in two pages; the client asks for many,
    // reads none. The hub queues at most 64 MiB for it, then gives up on it.
    auto agent = connect_agent({{"pid", 100}, {"argv", {std::string(450 * 1000, 'a')}}});
    auto observer = connect_client();
    const std::int64_t hub_sid = open_session(*agent, *observer, 1);
    auto sluggard = connect_client();
    ASSERT_TRUE(sluggard->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
    ASSERT_TRUE(wait_for_type(*agent, "attach").has_value());
    for (int i = 0; i < 100 && sluggard->send(make("list", {{"id", i}})); ++i) {
        if (i >= 64 && logged("does not read what it is sent", 0)) break;
    }
    // Once over the bound it gets 2 s to take what is queued before it is cut off. (The wait is
    // a bound against a slow machine: building 64 listings of a MiB takes seconds under ASan.)
    EXPECT_TRUE(logged("does not read what it is sent", 30000)) << log_text();
    // It is detached like any client that went away, and everyone else is still served.
    EXPECT_TRUE(wait_for_type(*agent, "detach", 5000).has_value());
    ASSERT_TRUE(agent->send(make("output", {{"sid", 1}, {"text", "still here"}})));
    ASSERT_TRUE(observer->send(make("attach", {{"sid", hub_sid}, {"cols", 80}})));
    EXPECT_TRUE(wait_for_type(*observer, "attached").has_value());
}

// dpdb detach -p is answered once the process says nothing of the debugger is armed any more,
// so that the program the user lets go never meets a breakpoint the detach took out.
TEST_F(HubTest, AReleaseIsAnsweredOnceTheProcessSaysItIsDone) {
    auto agent = connect_agent(test_proc(4300));
    auto client = connect_client();
    ASSERT_TRUE(client->send(make("release_process", {{"id", 7}, {"pid", 4300}})));
    ASSERT_TRUE(wait_for_type(*agent, "release").has_value());
    EXPECT_FALSE(wait_for_type(*client, "result", kQuietMs).has_value()) << "answered early";
    ASSERT_TRUE(agent->send(make("released")));
    const auto answer = wait_for_type(*client, "result");
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->num("id"), 7);
    EXPECT_TRUE((*answer)["ok"].get<bool>());
    EXPECT_NE(answer->str("message").find("breakpoints out"), std::string::npos);
    // One that never says so (busy in C code, an older agent) is answered after a bound.
    ASSERT_TRUE(client->send(make("release_process", {{"id", 8}, {"pid", 4300}})));
    const auto late = wait_for_type(*client, "result", 5000);
    ASSERT_TRUE(late.has_value());
    EXPECT_NE(late->str("message").find("did not confirm"), std::string::npos);
}

// dpdb pause (and attach -p) is answered once the pause is armed, so that the program the user
// wakes next cannot run past the line it should stop at.
TEST_F(HubTest, APauseIsAnsweredOnceTheProcessSaysItIsArmed) {
    auto agent = connect_agent(test_proc(4301));
    auto client = connect_client();
    ASSERT_TRUE(
        client->send(make("pause_process", {{"id", 9}, {"pid", 4301}, {"all_threads", false}})));
    ASSERT_TRUE(wait_for_type(*agent, "pause").has_value());
    EXPECT_FALSE(wait_for_type(*client, "result", kQuietMs).has_value()) << "answered early";
    ASSERT_TRUE(agent->send(make("pause_armed")));
    const auto answer = wait_for_type(*client, "result");
    ASSERT_TRUE(answer.has_value());
    EXPECT_EQ(answer->num("id"), 9);
    EXPECT_TRUE((*answer)["ok"].get<bool>());
    // A release waiting at the same time is not answered by the pause's word, nor the reverse.
    ASSERT_TRUE(client->send(make("release_process", {{"id", 10}, {"pid", 4301}})));
    ASSERT_TRUE(
        client->send(make("pause_process", {{"id", 11}, {"pid", 4301}, {"all_threads", true}})));
    // The agent says it once the pause came (the client's and the agent's words come on two
    // connections: one sent at once could reach the hub before the pause it answers).
    ASSERT_TRUE(wait_for_type(*agent, "pause").has_value());
    ASSERT_TRUE(agent->send(make("pause_armed", {{"threads", 5}})));
    const auto paused = wait_for_type(*client, "result");
    ASSERT_TRUE(paused.has_value());
    EXPECT_EQ(paused->num("id"), 11);
    // How many threads it asked reaches the client (attach -p --all-threads waits for them).
    EXPECT_EQ((*paused)["data"].value("threads", 0), 5);
    // The process ends before it says the release is done: answered, as a failure.
    agent.reset();
    const auto ended = wait_for_type(*client, "result");
    ASSERT_TRUE(ended.has_value());
    EXPECT_EQ(ended->num("id"), 10);
    EXPECT_FALSE((*ended)["ok"].get<bool>());
    EXPECT_NE(ended->str("message").find("ended before"), std::string::npos);
}

TEST_F(HubTest, APeerThatNeverCompletesTheHandshakeIsDroppedAfterTheTimeout) {
    auto client = connect_client();
    const int fd = connect_raw();
    ASSERT_GE(fd, 0);
    const auto start = Clock::now();
    // Half a frame, and then nothing.
    ASSERT_TRUE(send_raw(fd, std::string("\x00\x00\x00\x40{\"t\":", 9)));
    // Meanwhile everyone else is served.
    ASSERT_TRUE(list(*client).has_value());
    auto agent = connect_agent(test_proc(3));
    EXPECT_EQ(listing_of(*client)["processes"].size(), 1u);
    EXPECT_TRUE(closed_by_peer(fd, 13000)) << "not dropped within 13 s";
    const auto waited = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(waited, 9.0) << "dropped before its 10 s were up";
    EXPECT_TRUE(logged("no handshake"));
    // The authenticated peers, connected for as long, are not subject to the timeout.
    EXPECT_TRUE(list(*client).has_value());
    EXPECT_EQ(listing_of(*client)["processes"].size(), 1u);
}

}  // namespace
