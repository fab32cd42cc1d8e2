// The hub with more than a frame's worth of processes: listings and stacks answers in pages,
// listings of sessions only, and the summary. A real Hub on its own io_context thread, driven
// through real sockets by agents and clients (wire::Channel). Every wait is bounded.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/address.hpp"
#include "hub/hub.hpp"
#include "running_hub.hpp"
#include "wire/channel.hpp"

namespace {

using dpdb::HubAddress;
using dpdb::hub::testing::RunningHub;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;
using dpdb::wire::Message;
using Clock = std::chrono::steady_clock;

constexpr const char* kSecret = "0123456789abcdef0123456789abcdef";
constexpr int kWaitMs = 5000;
// Enough processes, each described in about 5 KiB, for a listing of several frames.
constexpr int kAgents = 300;
constexpr int kPaused = 40;

struct Answer {
    Json whole = Json::object();  // the pages' arrays appended
    int pages = 0;
    bool more_only_before_the_last = true;
};

class HubPagesTest : public ::testing::Test {
  protected:
    void SetUp() override { hub_ = std::make_unique<RunningHub>("dpdb-pages-test", kSecret); }

    void TearDown() override {
        agents_.clear();
        hub_.reset();
    }

    HubAddress address() const { return HubAddress::parse(hub_->socket_path()); }

    std::unique_ptr<Channel> client() {
        auto channel = std::make_unique<Channel>();
        Channel::connect(*channel, address(), kSecret, "client");
        return channel;
    }

    // kAgents agents on 30 hosts, the first kPaused of them paused; returns once the hub has
    // them all.
    void start_job(Channel& observer) {
        for (int i = 0; i < kAgents; ++i) {
            auto agent = std::make_unique<Channel>();
            Channel::connect(*agent, address(), kSecret, "agent",
                             {{"pid", 5000 + i},
                              {"host", "node" + std::to_string(i / 10)},
                              {"argv", {"python", std::string(5000, 'a')}},
                              {"tags", {{"RANK", std::to_string(i)}, {"role", "worker"}}}});
            if (i < kPaused) {
                agent->send(
                    make("session_open", {{"sid", 1}, {"info", {{"file", "w.py"}, {"line", 3}}}}));
            }
            agents_.push_back(std::move(agent));
        }
        const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
        while (Clock::now() < deadline) {
            const auto summary = ask(observer, "summarize", Json::object(), "summary");
            if (summary.whole.value("processes", 0) == kAgents &&
                summary.whole.value("sessions", 0) == kPaused) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        FAIL() << "the hub never had every agent and session";
    }

    // Sends a request and gathers its answer's pages (skipping anything else).
    Answer ask(Channel& channel, const std::string& type, Json fields, const std::string& answer) {
        const std::int64_t id = ++request_;
        fields["id"] = id;
        Answer out;
        if (!channel.send(make(type, std::move(fields)))) return out;
        const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
        while (Clock::now() < deadline) {
            std::optional<Message> page;
            try {
                page = channel.receive(kWaitMs);
            } catch (const std::runtime_error&) {
                break;
            }
            if (!page) break;
            if (page->type != answer || page->num("id") != id) continue;
            ++out.pages;
            const bool more = page->has("more");
            if (more && !(*page)["more"].get<bool>()) out.more_only_before_the_last = false;
            for (const auto& item : page->body.items()) {
                if (item.key() == "t" || item.key() == "more") continue;
                auto& into = out.whole[item.key()];
                if (item.value().is_array()) {
                    if (into.is_null()) into = Json::array();
                    for (const auto& element : item.value()) into.push_back(element);
                } else if (item.value().is_object() && item.value().contains("processes")) {
                    // A result: its data's processes are paged.
                    auto& processes = into["processes"];
                    if (processes.is_null()) processes = Json::array();
                    for (const auto& p : item.value()["processes"]) processes.push_back(p);
                } else {
                    into = item.value();
                }
            }
            if (!more) return out;
        }
        ADD_FAILURE() << "no (complete) " << answer << " to " << type;
        return out;
    }

    std::unique_ptr<RunningHub> hub_;
    std::vector<std::unique_ptr<Channel>> agents_;
    std::int64_t request_ = 0;
};

TEST_F(HubPagesTest, AListingLargerThanAFrameComesWholeInPages) {
    auto observer = client();
    start_job(*observer);
    // Every page arrived through the frame decoder, which refuses anything over the limit.
    const auto listing = ask(*observer, "list", Json::object(), "listing");
    EXPECT_GE(listing.pages, 2);
    EXPECT_TRUE(listing.more_only_before_the_last);
    ASSERT_EQ(listing.whole["processes"].size(), static_cast<std::size_t>(kAgents));
    ASSERT_EQ(listing.whole["sessions"].size(), static_cast<std::size_t>(kPaused));
    EXPECT_TRUE(listing.whole["exited"].is_array());
    std::set<int> pids;
    for (const auto& p : listing.whole["processes"]) {
        pids.insert(p["pid"].get<int>());
        EXPECT_FALSE(p.contains("truncated"));
    }
    EXPECT_EQ(pids.size(), static_cast<std::size_t>(kAgents));
    EXPECT_EQ(*pids.begin(), 5000);
    EXPECT_EQ(*pids.rbegin(), 5000 + kAgents - 1);
}

TEST_F(HubPagesTest, ASessionsOnlyListingLeavesTheProcessesOut) {
    auto observer = client();
    start_job(*observer);
    const auto listing = ask(*observer, "list", {{"sessions_only", true}}, "listing");
    EXPECT_TRUE(listing.whole["processes"].empty());
    EXPECT_FALSE(listing.whole.contains("exited"));
    ASSERT_EQ(listing.whole["sessions"].size(), static_cast<std::size_t>(kPaused));
    EXPECT_EQ(listing.whole["sessions"][0]["pid"], 5000);
}

TEST_F(HubPagesTest, TheSummaryGroupsTheJobInOneMessage) {
    auto observer = client();
    start_job(*observer);
    const auto summary = ask(*observer, "summarize", Json::object(), "summary");
    EXPECT_EQ(summary.pages, 1);
    const auto& s = summary.whole;
    EXPECT_EQ(s["processes"], kAgents);
    EXPECT_EQ(s["sessions"], kPaused);
    EXPECT_EQ(s["attached"], 0);
    EXPECT_EQ(s["hosts"], kAgents / 10);
    // 30 hosts, within the limit: a row per host and state.
    std::size_t grouped = 0, paused = 0;
    for (const auto& g : s["groups"]) {
        grouped += g["processes"].get<std::size_t>();
        paused += g["sessions"].get<std::size_t>();
        EXPECT_EQ(g["tags"], Json({{"role", "worker"}}));
        EXPECT_EQ(g["hosts"], 1);
    }
    EXPECT_EQ(grouped, static_cast<std::size_t>(kAgents));
    EXPECT_EQ(paused, static_cast<std::size_t>(kPaused));
    EXPECT_EQ(s["group_count"], kAgents / 10);  // node0-node3 paused, the others running
    ASSERT_EQ(s["places"].size(), 1u);
    EXPECT_EQ(s["places"][0]["sessions"], kPaused);
    EXPECT_EQ(s["paused"].size(), 20u);
}

TEST_F(HubPagesTest, StacksOfAWholeJobComeInPages) {
    // Four processes whose stacks are 400 KB each: 1.6 MB in all.
    std::vector<std::unique_ptr<Channel>> agents;
    for (int i = 0; i < 4; ++i) {
        auto agent = std::make_unique<Channel>();
        Channel::connect(*agent, address(), kSecret, "agent", {{"pid", 700 + i}});
        agents.push_back(std::move(agent));
    }
    auto observer = client();
    const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
    while (ask(*observer, "summarize", Json::object(), "summary").whole.value("processes", 0) < 4) {
        ASSERT_LT(Clock::now(), deadline);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::int64_t id = request_ + 1;
    std::thread answering([&] {
        for (auto& agent : agents) {
            for (;;) {
                const auto request = agent->receive(kWaitMs);
                if (!request) return;
                if (request->type != "stacks_request") continue;
                agent->send(
                    make("stacks_reply", {{"req", request->num("req")},
                                          {"stacks", {{"text", std::string(400 * 1000, 's')}}}}));
                break;
            }
        }
    });
    const auto result = ask(*observer, "stacks", {{"pids", Json::array()}}, "result");
    answering.join();
    EXPECT_EQ(request_, id);
    EXPECT_GE(result.pages, 2);
    EXPECT_TRUE(result.more_only_before_the_last);
    ASSERT_EQ(result.whole["data"]["processes"].size(), 4u);
    for (const auto& p : result.whole["data"]["processes"]) {
        EXPECT_EQ(p["stacks"]["text"].get<std::string>().size(), 400u * 1000u);
    }
}

}  // namespace
