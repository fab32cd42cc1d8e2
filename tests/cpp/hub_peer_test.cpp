// A peer that holds a credential but sends what no dpdb sends: well-formed frames whose contents
// have other types, ranges or sizes than the hub reads. For every message type of both roles,
// every field (nested ones too) is replaced in turn by values of every other kind; each such
// message must cost only its sender's connection, store nothing, and leave the hub answering —
// also after a restart on the same store. CI runs this under ASan and UBSan as well.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "hub_fixture.hpp"
#include "wire/contents.hpp"

namespace {

using namespace dpdb::hub::testing;  // NOLINT(google-build-using-namespace): the fixture's words

// A description as an agent gives it, with every field the hub or a client reads.
Json full_proc(int pid) {
    return {{"pid", pid},
            {"ppid", 1},
            {"host", "node1"},
            {"argv", {"python", "app.py"}},
            {"python", "3.12.1"},
            {"executable", "/usr/bin/python3"},
            {"cwd", "/srv"},
            {"tags", {{"RANK", "0"}}},
            {"process_name", "worker"},
            {"run", "7"},
            {"started", "12345"},
            {"kernel", "boot:pid:[4026531836]"}};
}

Json full_info() {
    return {{"tid", 140000},       {"native_tid", 42},      {"thread", "MainThread"},
            {"main_thread", true}, {"file", "/srv/app.py"}, {"line", 3},
            {"function", "f"},     {"process_name", "w"},   {"reason", "breakpoint"}};
}

// What an agent sends after its handshake, each message valid as it stands.
std::vector<Message> agent_messages() {
    return {
        make("proc_update", {{"proc", full_proc(4100)}}),
        make("session_open", {{"sid", 2}, {"info", full_info()}}),
        make("session_update", {{"sid", 1}, {"info", full_info()}}),
        make("session_close", {{"sid", 1}, {"reason", "continued"}}),
        make("break_status",
             {{"resolved", {1}}, {"notes", {{{"id", 1}, {"note", "ambiguous"}}}}, {"version", 1}}),
        make("stacks_reply",
             {{"req", 1},
              {"stacks",
               {{"text", "Thread 1"}, {"note", ""}, {"native", true}, {"gil", Json::object()}}}}),
        make("exiting", {{"status", 3}}),
        make("crash", {{"signal", "SIGSEGV"}, {"stacks", "Thread 1"}}),
        make("exec", {{"path", "/bin/true"}, {"argv", {"true"}}}),
        make("log_lines", {{"lines",
                            {{{"time", 1.5},
                              {"text", "i=1"},
                              {"thread", "T"},
                              {"tid", 7},
                              {"bp", 1},
                              {"dropped", 0}}}}}),
        make("output", {{"sid", 1}, {"text", "out"}}),
        make("prompt", {{"sid", 1}, {"text", "(Pdb) "}, {"nested", false}}),
        make("completions", {{"sid", 1}, {"id", 1}, {"matches", {"a"}}}),
        make("inspect_reply", {{"sid", 1}, {"id", 1}, {"body", Json::object()}}),
    };
}

std::vector<Message> client_messages() {
    return {
        make("list", {{"id", 1}, {"sessions_only", false}}),
        make("summarize", {{"id", 1}}),
        make("attach", {{"sid", 1}, {"cols", 80}}),
        make("input", {{"sid", 1}, {"line", "p x"}, {"eof", false}}),
        make("complete",
             {{"sid", 1}, {"id", 1}, {"text", "p"}, {"line", "p"}, {"begidx", 0}, {"endidx", 1}}),
        make("inspect", {{"sid", 1}, {"id", 1}, {"request", {{"command", "stack"}}}}),
        make("interrupt", {{"sid", 1}}),
        make("break_add",
             {{"id", 1}, {"spec", "app.py:3"}, {"condition", ""}, {"log", "x"}, {"ignore", 1}}),
        make("break_clear", {{"id", 1}, {"bp", 99}}),
        make("break_list", {{"id", 1}}),
        make("stacks", {{"id", 1}, {"pids", {4000}}}),
        make("pause_process", {{"id", 1}, {"pid", 4000}, {"all_threads", false}}),
        make("release_process", {{"id", 1}, {"pid", 4000}}),
        make("log", {{"id", 1}, {"pid", 4000}}),
        make("logs", {{"id", 1}, {"pids", {4000}}, {"limit", 10}}),
        make("detach", {{"sid", 1}}),
    };
}

// Values of every JSON kind, and integers at the edges of what the hub reads them as.
std::vector<Json> odd_values() {
    return {Json("x"),          Json(std::string(70000, 'y')),
            Json(-1),           Json(0),
            Json(4000000000LL), Json(std::numeric_limits<std::uint64_t>::max()),
            Json(1.5),          Json(1e300),
            Json(true),         Json(nullptr),
            Json::array(),      Json::array({Json("x"), Json(1)}),
            Json::object(),     Json{{"pid", "x"}}};
}

// Every variant of `message` with one field (at any depth, the first item of an array
// included) replaced by one of the odd values. The type field stays.
std::vector<Json> variants(const Json& body) {
    std::vector<Json> out;
    std::function<void(const Json::json_pointer&, const Json&)> walk =
        [&](const Json::json_pointer& at, const Json& value) {
            if (value.is_object()) {
                for (const auto& [key, item] : value.items()) {
                    if (at.empty() && key == "t") continue;
                    walk(at / key, item);
                }
            } else if (value.is_array() && !value.empty()) {
                walk(at / 0, value[0]);
            }
            if (at.empty()) return;
            for (const auto& odd : odd_values()) {
                if (odd == value) continue;
                Json changed = body;
                changed[at] = odd;
                out.push_back(std::move(changed));
            }
        };
    walk(Json::json_pointer(), body);
    return out;
}

// Sends one frame of `body` as it stands (the schema check of make() would refuse most).
bool send_body(Channel& channel, const Json& body) {
    return channel.send(Message{body.at("t").get<std::string>(), body});
}

class HubPeerTest : public HubTest {};

TEST_F(HubPeerTest, IllTypedAgentMessagesCostOnlyTheirSender) {
    auto client = connect_client();
    int sent = 0;
    for (const auto& message : agent_messages()) {
        for (const auto& body : variants(message.body)) {
            auto agent = connect_agent(full_proc(5000));
            ASSERT_TRUE(agent->send(make("session_open", {{"sid", 1}, {"info", full_info()}})));
            ASSERT_TRUE(send_body(*agent, body));
            ++sent;
            // Every 50th, and the last of each type: the hub still answers a client, and what
            // it lists is well typed.
            if (sent % 50 == 0) {
                const auto listing = list(*client);
                ASSERT_TRUE(listing.has_value()) << "the hub stopped answering after " << body;
                for (const auto& p : (*listing)["processes"]) dpdb::wire::check_process(p);
                for (const auto& p : (*listing)["exited"]) dpdb::wire::check_exit_record(p);
            }
        }
        ASSERT_TRUE(list(*client).has_value()) << "after the variants of " << message.type;
    }
    EXPECT_GT(sent, 500);
}

TEST_F(HubPeerTest, IllTypedHandshakesAndClientMessagesCostOnlyTheirSender) {
    auto observer = connect_client();
    for (const auto& body : variants(full_proc(6000))) {
        Channel agent;
        try {
            Channel::connect(agent, address(), kSecret, "agent", body);
        } catch (const std::exception&) {
            // refused: as it should be for most
        }
    }
    for (const auto& message : client_messages()) {
        for (const auto& body : variants(message.body)) {
            auto client = connect_client();
            ASSERT_TRUE(send_body(*client, body));
        }
        ASSERT_TRUE(list(*observer).has_value()) << "after the variants of " << message.type;
    }
    const auto listing = list(*observer);
    ASSERT_TRUE(listing.has_value());
    for (const auto& p : (*listing)["processes"]) dpdb::wire::check_process(p);
}

TEST_F(HubPeerTest, AnAgentThatSendsABadMessageIsDroppedWithOneLineAndNothingKept) {
    auto client = connect_client();
    auto agent = connect_agent(full_proc(5100));
    ASSERT_TRUE(
        send_body(*agent, {{"t", "log_lines"}, {"lines", {{{"time", "now"}, {"text", 1}}}}}));
    EXPECT_TRUE(logged("log_lines.lines.time is not a finite number")) << log_text();
    ASSERT_TRUE(client->send(make("logs", {{"id", 5}, {"pids", Json::array()}})));
    const auto logs = wait_for_type(*client, "result");
    ASSERT_TRUE(logs.has_value());
    EXPECT_TRUE((*logs)["data"]["messages"].empty());
}

// On the private socket the kernel names each agent's process: one that claims another live
// process's pid (to be attached to in its stead) is refused; its own pid, or one that names no
// process (nobody to impersonate), stands.
TEST(HubClaimedPids, AnImpostorOfAnotherProcessIsRefused) {
    RunningHub hub("dpdb-hub-test", kSecret,
                   [](dpdb::hub::HubOptions& options) { options.check_claimed_pids = true; });
    const auto address = HubAddress::parse(hub.socket_path());
    Channel impostor;
    EXPECT_THROW(Channel::connect(impostor, address, kSecret, "agent", {{"pid", 1}}),
                 std::runtime_error);
    Channel itself;
    Channel::connect(itself, address, kSecret, "agent", {{"pid", ::getpid()}});
    Channel nobody;
    Channel::connect(nobody, address, kSecret, "agent", {{"pid", 4194300}});
    ASSERT_TRUE(itself.send(make("proc_update", {{"proc", {{"pid", 1}}}})));
    Channel client;
    Channel::connect(client, address, kSecret, "client");
    bool listed_impostor = true;
    const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
    while (listed_impostor && Clock::now() < deadline) {
        ASSERT_TRUE(client.send(make("list", {{"id", 1}})));
        const auto listing = wait_for_type(client, "listing");
        ASSERT_TRUE(listing.has_value());
        listed_impostor = false;
        for (const auto& p : (*listing)["processes"]) listed_impostor |= p["pid"] == 1;
    }
    EXPECT_FALSE(listed_impostor);
}

// A hub with its store on disk, restarted on it: rows the hub never writes (another version's,
// a hand edit) are removed with one line each, never fatal.
TEST(HubStoreReadBack, ABadRowIsRemovedAndToldNotFatal) {
    char folder[] = "/tmp/dpdb-store-test.XXXXXX";
    ASSERT_NE(::mkdtemp(folder), nullptr);
    const std::string store = std::string(folder) + "/hub.sqlite";
    std::vector<std::string> lines;
    std::mutex mutex;
    const auto configure = [&](dpdb::hub::HubOptions& options) {
        options.store_path = store;
        options.log = [&](const std::string& line) {
            std::lock_guard<std::mutex> lock(mutex);
            lines.push_back(line);
        };
    };
    {
        RunningHub hub("dpdb-hub-test", kSecret, configure);
        Channel agent;
        Channel::connect(agent, HubAddress::parse(hub.socket_path()), kSecret, "agent",
                         full_proc(5200));
    }
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
        for (
            const char* sql :
            {R"(INSERT INTO exits (ended, process) VALUES (1, '{"pid": 4000000, "disconnected": "yes"}'))",
             R"(INSERT INTO exits (ended, process) VALUES (1, '{"pid": "x"}'))",
             R"(INSERT INTO exits (ended, process) VALUES (1, 'not json'))",
             R"(INSERT INTO logs (time, pid, line) VALUES (1, 1, '{"time": 1, "text": 2}'))"}) {
            ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
        }
        sqlite3_close(db);
    }
    for (int restart = 0; restart < 2; ++restart) {
        RunningHub hub("dpdb-hub-test", kSecret, configure);
        Channel client;
        Channel::connect(client, HubAddress::parse(hub.socket_path()), kSecret, "client");
        ASSERT_TRUE(client.send(make("list", {{"id", 1}})));
        const auto listing = wait_for_type(client, "listing");
        ASSERT_TRUE(listing.has_value()) << "restart " << restart;
        ASSERT_EQ((*listing)["exited"].size(), 1u);
        EXPECT_EQ((*listing)["exited"][0]["pid"], 5200);
        ASSERT_TRUE(client.send(make("logs", {{"id", 2}, {"pids", Json::array()}})));
        const auto logs = wait_for_type(client, "result");
        ASSERT_TRUE(logs.has_value());
        EXPECT_TRUE((*logs)["data"]["messages"].empty());
    }
    {
        std::lock_guard<std::mutex> lock(mutex);
        int removed = 0;
        for (const auto& line : lines) removed += line.find("hub store: removed row") == 0;
        EXPECT_EQ(removed, 4);  // once each: the second start found them gone
    }
    std::filesystem::remove_all(folder);
}

}  // namespace
