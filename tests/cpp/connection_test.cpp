#include "hub/connection.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio.hpp>
#include <string>
#include <vector>

#include "hub/stream.hpp"
#include "wire/message.hpp"

namespace dpdb::hub {
namespace {

using Socket = asio::local::stream_protocol::socket;

struct Pair {
    asio::io_context io;
    std::shared_ptr<Connection> hub_side;
    int peer = -1;
    std::vector<std::string> received;
    std::vector<std::string> closes;

    Pair() {
        int fds[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        peer = fds[1];
        Socket socket(io, asio::local::stream_protocol(), fds[0]);
        hub_side = std::make_shared<Connection>(
            std::make_unique<PlainStream<Socket>>(std::move(socket)), 1);
        hub_side->start(
            [this](const std::shared_ptr<Connection>&, const wire::Message& message) {
                received.push_back(message.type + " " + std::to_string(message.num("bp")));
            },
            [this](const std::shared_ptr<Connection>&, const std::string& reason) {
                closes.push_back(reason);
            });
    }
    ~Pair() {
        if (peer >= 0) ::close(peer);
    }
    void peer_says(const wire::Message& message) {
        const auto bytes = wire::frame(message);
        ASSERT_EQ(::write(peer, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    }
};

// A client that sends its last requests and exits at once (an IDE's adapter clearing its
// breakpoints at a disconnect) while the hub still has something to send it: the hub's write
// fails first (the peer is gone), yet what the peer sent before it went is handled, in order.
TEST(Connection, WhatAPeerSentBeforeItWentIsHandledAfterAWriteToItFailed) {
    Pair pair;
    pair.peer_says(wire::make("break_clear", {{"id", 1}, {"bp", 7}}));
    pair.peer_says(wire::make("break_clear", {{"id", 2}, {"bp", 8}}));
    ::close(pair.peer);
    pair.peer = -1;
    pair.hub_side->send(wire::make("error", {{"message", "an event it will never read"}}));
    pair.io.run_for(std::chrono::seconds(5));
    EXPECT_EQ(pair.received, (std::vector<std::string>{"break_clear 7", "break_clear 8"}));
    ASSERT_EQ(pair.closes.size(), 1u);
    EXPECT_EQ(pair.closes[0], "disconnected");
}

// A peer that stops reading but keeps its end open and silent is not held for ever once a
// write to it failed: the connection ends within the flush bound.
TEST(Connection, APeerThatCannotBeWrittenToEndsEvenIfItNeverCloses) {
    Pair pair;
    ::shutdown(pair.peer, SHUT_RD);
    pair.hub_side->send(wire::make("error", {{"message", "unwritable"}}));
    pair.io.run_for(std::chrono::seconds(5));
    ASSERT_EQ(pair.closes.size(), 1u);
}

}  // namespace
}  // namespace dpdb::hub
