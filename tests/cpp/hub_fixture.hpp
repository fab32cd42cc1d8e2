// The hub test fixture: a real Hub on its own io_context thread, listening on a Unix socket in a
// fresh private directory, driven through real sockets by wire::Channel (as agents and clients
// hold them) and by raw sockets (as a hostile or broken peer would).
//
// Every wait is bounded: Channel::receive always gets a timeout and raw reads use poll().
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/address.hpp"
#include "hub/hub.hpp"
#include "running_hub.hpp"
#include "wire/auth.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"

namespace dpdb::hub::testing {

using dpdb::HubAddress;
using dpdb::hub::HubOptions;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;
using dpdb::wire::Message;
using Clock = std::chrono::steady_clock;

inline constexpr const char* kSecret = "0123456789abcdef0123456789abcdef";
// Long enough for a loaded machine, short enough that a failing test does not take ages.
inline constexpr int kWaitMs = 3000;
// How long "nothing arrives" is watched for.
inline constexpr int kQuietMs = 200;

inline int remaining_ms(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

// The next message on `channel` for which `wanted` holds, skipping others; nothing if none comes
// within timeout_ms or the connection ends.
inline std::optional<Message> wait_for(Channel& channel,
                                       const std::function<bool(const Message&)>& wanted,
                                       int timeout_ms = kWaitMs) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        std::optional<Message> message;
        try {
            message = channel.receive(remaining_ms(deadline));
        } catch (const std::runtime_error&) {
            return std::nullopt;
        }
        if (!message) return std::nullopt;
        if (wanted(*message)) return message;
    }
}

inline std::optional<Message> wait_for_type(Channel& channel, const std::string& type,
                                            int timeout_ms = kWaitMs) {
    return wait_for(
        channel, [&](const Message& m) { return m.type == type; }, timeout_ms);
}

inline std::optional<Message> wait_for_event(Channel& channel, const std::string& kind,
                                             int timeout_ms = kWaitMs) {
    return wait_for(
        channel, [&](const Message& m) { return m.type == "event" && m.str("kind") == kind; },
        timeout_ms);
}

// The very next message, which must arrive within kWaitMs.
inline Message next_message(Channel& channel) {
    const auto message = channel.receive(kWaitMs);
    if (!message) throw std::runtime_error("no message within " + std::to_string(kWaitMs) + " ms");
    return *message;
}

// True once the peer has closed the connection: reads return end-of-file (or a reset) within
// timeout_ms. Whatever arrives before (a challenge, a refusal) is discarded.
inline bool closed_by_peer(int fd, int timeout_ms = kWaitMs) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        pollfd pfd{fd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, remaining_ms(deadline));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
        if (n == 0) return true;
        if (n < 0 && errno != EINTR && errno != EAGAIN) return true;  // ECONNRESET
    }
}

inline bool send_raw(int fd, const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

class HubTest : public ::testing::Test {
  protected:
    void SetUp() override {
        hub_ = std::make_unique<RunningHub>("dpdb-hub-test", kSecret, [this](HubOptions& options) {
            options.name = "test hub";
            options.log = [this](const std::string& line) {
                std::lock_guard<std::mutex> lock(log_mutex_);
                log_.push_back(line);
            };
        });
    }

    void TearDown() override { hub_.reset(); }

    HubAddress address() const { return HubAddress::parse(hub_->socket_path()); }

    std::unique_ptr<Channel> connect_client(const std::string& secret = kSecret) {
        auto channel = std::make_unique<Channel>();
        Channel::connect(*channel, address(), secret, "client");
        return channel;
    }

    // An agent as it starts: connected, and told the global breakpoints (none here).
    std::unique_ptr<Channel> connect_agent(const Json& proc) {
        auto channel = std::make_unique<Channel>();
        Channel::connect(*channel, address(), kSecret, "agent", proc);
        const auto breakpoints = channel->receive(kWaitMs);
        EXPECT_TRUE(breakpoints && breakpoints->type == "breakpoints");
        return channel;
    }

    // A raw, unauthenticated stream socket to the hub.
    int connect_raw() {
        const int fd = dpdb::connect_to(address());
        EXPECT_GE(fd, 0) << std::strerror(errno);
        raw_fds_.push_back(fd);
        return fd;
    }

    // The hub's answer to `list`, skipping anything else that arrives first: its pages gathered
    // into one (arrays appended; `pages` says how many there were).
    std::optional<Message> list(Channel& client, int* pages = nullptr) {
        const std::int64_t id = ++list_id_;
        if (!client.send(make("list", {{"id", id}}))) return std::nullopt;
        std::optional<Message> whole;
        for (int page_count = 1;; ++page_count) {
            const auto page = wait_for(
                client, [&](const Message& m) { return m.type == "listing" && m.num("id") == id; });
            if (!page) return std::nullopt;
            if (!whole) {
                whole = page;
            } else {
                for (const char* key : {"processes", "sessions", "exited"}) {
                    for (const auto& item : page->body.value(key, Json::array())) {
                        whole->body[key].push_back(item);
                    }
                }
            }
            if (!page->has("more")) {
                whole->body.erase("more");
                if (pages != nullptr) *pages = page_count;
                return whole;
            }
            EXPECT_TRUE((*page)["more"].get<bool>()) << "\"more\" is only ever true";
        }
    }

    // The listing's body, or an empty object (and a test failure) if none came.
    Json listing_of(Channel& client) {
        const auto answer = list(client);
        if (!answer) {
            ADD_FAILURE() << "no answer to list";
            return Json::object();
        }
        return answer->body;
    }

    // Subscribes, and returns once the hub has processed the subscription (the hub handles one
    // connection's messages in order, so the answer to a later `list` proves it).
    void subscribe(Channel& client) {
        ASSERT_TRUE(client.send(make("subscribe")));
        ASSERT_TRUE(list(client).has_value());
    }

    // An agent with one open session; returns the hub's id for the session.
    std::int64_t open_session(Channel& agent, Channel& observer, std::int64_t agent_sid,
                              Json info = {{"thread", "MainThread"}, {"function", "f"}}) {
        EXPECT_TRUE(agent.send(make("session_open", {{"sid", agent_sid}, {"info", info}})));
        // The agent and the observer reach the hub on different connections, in no set order:
        // poll the listing until the session shows up.
        const auto deadline = Clock::now() + std::chrono::milliseconds(kWaitMs);
        while (Clock::now() < deadline) {
            const auto listing = list(observer);
            if (!listing) break;
            for (const auto& session : (*listing)["sessions"]) {
                if (session.value("function", "") == info.value("function", "")) {
                    return session.at("sid").get<std::int64_t>();
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        ADD_FAILURE() << "the session never showed up in the listing";
        return -1;
    }

    bool logged(const std::string& text, int timeout_ms = kWaitMs) {
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            {
                std::lock_guard<std::mutex> lock(log_mutex_);
                for (const auto& line : log_) {
                    if (line.find(text) != std::string::npos) return true;
                }
            }
            if (Clock::now() >= deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    std::string log_text() {
        std::lock_guard<std::mutex> lock(log_mutex_);
        std::string all;
        for (const auto& line : log_) all += line + "\n";
        return all;
    }

    // A raw hostile peer sends `bytes` straight away (leaving the challenge unread) while a
    // well-behaved client is connected: the hostile peer is dropped, the client is still served.
    void expect_dropped_while_others_served(const std::string& bytes, const std::string& reason) {
        auto client = connect_client();
        ASSERT_TRUE(list(*client).has_value());
        const int fd = connect_raw();
        ASSERT_GE(fd, 0);
        ASSERT_TRUE(send_raw(fd, bytes));
        EXPECT_TRUE(closed_by_peer(fd)) << "the hub kept a connection that sent junk";
        EXPECT_TRUE(logged(reason)) << log_text();
        const auto listing = list(*client);
        ASSERT_TRUE(listing.has_value()) << "the well-behaved client was not served";
        EXPECT_TRUE((*listing)["processes"].empty());
        // And the hub still admits newcomers.
        auto late = connect_client();
        EXPECT_TRUE(list(*late).has_value());
    }

    void close_raw(int fd) {
        for (auto& held : raw_fds_) {
            if (held == fd) held = -1;
        }
        ::close(fd);
    }

    ~HubTest() override {
        for (int fd : raw_fds_) {
            if (fd >= 0) ::close(fd);
        }
    }

    std::unique_ptr<RunningHub> hub_;
    std::mutex log_mutex_;
    std::vector<std::string> log_;
    std::vector<int> raw_fds_;
    std::int64_t list_id_ = 0;
};

inline Json test_proc(int pid) {
    return {{"pid", pid}, {"host", "testhost"}, {"argv", {"python", "app.py"}}};
}

}  // namespace dpdb::hub::testing
