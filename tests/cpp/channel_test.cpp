// wire::Channel's side of the handshake, against a scripted fake hub: the peer checks the hub as
// much as the hub checks the peer. Every wait is bounded.
#include "wire/channel.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "wire/auth.hpp"
#include "wire/tls.hpp"

namespace {

using dpdb::HubAddress;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;
using dpdb::wire::Message;

constexpr const char* kSecret = "channel-test-secret";
constexpr int kWaitMs = 3000;

// A Unix socket in a fresh private directory; serve() accepts one peer and runs a script on it.
class FakeHub {
  public:
    FakeHub() {
        char pattern[] = "/tmp/dpdb-channel-test.XXXXXX";
        if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
        dir_ = pattern;
        path_ = dir_ + "/hub.sock";
        listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, path_.c_str(), sizeof(sa.sun_path) - 1);
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
            ::listen(listener_, 4) != 0) {
            throw std::runtime_error(std::string("cannot listen: ") + std::strerror(errno));
        }
    }

    ~FakeHub() {
        if (thread_.joinable()) thread_.join();
        ::close(listener_);
        ::unlink(path_.c_str());
        ::rmdir(dir_.c_str());
    }

    HubAddress address() const { return HubAddress::parse(path_); }

    // Runs `script` on the next connection, in a thread; the script's failures are reported by
    // done() (an empty string when all went well).
    void serve(std::function<void(Channel&)> script) {
        thread_ = std::thread([this, script = std::move(script)] {
            std::string failure;
            try {
                pollfd pfd{listener_, POLLIN, 0};
                if (::poll(&pfd, 1, kWaitMs) != 1) throw std::runtime_error("nobody connected");
                Channel peer(::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC));
                script(peer);
            } catch (const std::exception& error) {
                failure = error.what();
            }
            result_.set_value(failure);
        });
    }

    std::string done() {
        auto future = result_.get_future();
        if (future.wait_for(std::chrono::milliseconds(2 * kWaitMs)) != std::future_status::ready) {
            return "the fake hub's script did not finish";
        }
        return future.get();
    }

  private:
    std::string dir_;
    std::string path_;
    int listener_ = -1;
    std::thread thread_;
    std::promise<std::string> result_;
};

Message expect(Channel& channel, const std::string& type) {
    const auto message = channel.receive(kWaitMs);
    if (!message) throw std::runtime_error("no " + type + " within the timeout");
    if (message->type != type) throw std::runtime_error("got " + message->type + ", not " + type);
    return *message;
}

// The error Channel::connect throws (empty if it succeeds).
std::string connect_error(FakeHub& hub, const std::string& secret = kSecret) {
    Channel channel;
    try {
        Channel::connect(channel, hub.address(), secret, "client");
    } catch (const std::runtime_error& error) {
        EXPECT_FALSE(channel.is_open());
        return error.what();
    }
    return "";
}

TEST(Channel, CompletesTheHandshakeWithAHubThatHoldsTheSecret) {
    FakeHub hub;
    hub.serve([](Channel& peer) {
        const std::string nonce = "00ff00ff";
        peer.send(make("challenge", {{"v", dpdb::wire::kProtocolVersion}, {"nonce", nonce}}));
        const Message hello = expect(peer, "hello");
        if (hello.num("v") != dpdb::wire::kProtocolVersion) throw std::runtime_error("bad v");
        if (hello.str("role") != "agent") throw std::runtime_error("bad role");
        if (hello["proc"] != Json({{"pid", 12}})) throw std::runtime_error("bad proc");
        const std::string peer_nonce = hello.str("nonce");
        if (peer_nonce.size() != 32) throw std::runtime_error("short nonce");
        if (hello.str("mac") != dpdb::wire::handshake_mac(kSecret, "agent", nonce, peer_nonce)) {
            throw std::runtime_error("bad mac");
        }
        peer.send(
            make("welcome", {{"mac", dpdb::wire::handshake_mac(kSecret, "hub", nonce, peer_nonce)},
                             {"hub", {{"name", "fake"}}}}));
        expect(peer, "subscribe");
    });
    Channel channel;
    const Json description =
        Channel::connect(channel, hub.address(), kSecret, "agent", Json{{"pid", 12}});
    EXPECT_EQ(description, Json({{"name", "fake"}}));
    EXPECT_TRUE(channel.is_open());
    EXPECT_TRUE(channel.send(make("subscribe")));
    EXPECT_EQ(hub.done(), "");
}

TEST(Channel, DoesNotTrustAHubWithoutTheSecret) {
    FakeHub hub;
    hub.serve([](Channel& peer) {
        peer.send(make("challenge", {{"v", dpdb::wire::kProtocolVersion}, {"nonce", "aa"}}));
        const Message hello = expect(peer, "hello");
        // An impostor can only guess, or replay the peer's own MAC back to it.
        peer.send(make("welcome", {{"mac", hello.str("mac")}, {"hub", Json::object()}}));
    });
    const std::string error = connect_error(hub);
    EXPECT_NE(error.find("does not hold this hub's secret"), std::string::npos) << error;
    EXPECT_EQ(hub.done(), "");
}

TEST(Channel, RefusesAHubOfAnotherProtocolVersion) {
    FakeHub hub;
    hub.serve([](Channel& peer) {
        peer.send(make("challenge", {{"v", dpdb::wire::kProtocolVersion + 1}, {"nonce", "aa"}}));
    });
    const std::string error = connect_error(hub);
    EXPECT_NE(error.find("protocol version"), std::string::npos) << error;
    EXPECT_EQ(hub.done(), "");
}

TEST(Channel, NeverAnswersAChallengeThatPosesAsTheEarlyHello) {
    // Such a MAC is made only on a TLS connection that agreed on the early hello (wire/tls.hpp):
    // an impostor must not get one for its own use by challenging with that nonce.
    FakeHub hub;
    hub.serve([](Channel& peer) {
        peer.send(make("challenge",
                       {{"v", dpdb::wire::kProtocolVersion}, {"nonce", dpdb::wire::kEarlyHello}}));
        std::optional<Message> answer;
        try {
            answer = peer.receive(kWaitMs);
        } catch (const std::runtime_error&) {
            return;  // it hung up without a hello: as it should
        }
        throw std::logic_error(answer ? "the peer answered" : "the peer neither answered nor left");
    });
    const std::string error = connect_error(hub);
    EXPECT_NE(error.find("sent a challenge this dpdb does not answer"), std::string::npos) << error;
    EXPECT_EQ(hub.done(), "");
}

TEST(Channel, ReportsTheHubsRefusal) {
    FakeHub hub;
    hub.serve([](Channel& peer) {
        peer.send(make("challenge", {{"v", dpdb::wire::kProtocolVersion}, {"nonce", "aa"}}));
        expect(peer, "hello");
        peer.send(make("refused", {{"reason", "authentication failed (wrong secret)"}}));
    });
    const std::string error = connect_error(hub);
    EXPECT_NE(error.find("refused the connection: authentication failed"), std::string::npos)
        << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
    EXPECT_EQ(hub.done(), "");
}

TEST(Channel, FailsCleanlyWhenTheHubHangsUpOrSpeaksOutOfTurn) {
    {
        FakeHub hub;
        hub.serve([](Channel& peer) { peer.close(); });
        EXPECT_NE(connect_error(hub), "");
        EXPECT_EQ(hub.done(), "");
    }
    {
        FakeHub hub;
        hub.serve([](Channel& peer) { peer.send(make("subscribe")); });
        EXPECT_NE(connect_error(hub).find("did not send a challenge"), std::string::npos);
        EXPECT_EQ(hub.done(), "");
    }
    {
        FakeHub hub;
        hub.serve([](Channel& peer) {
            peer.send(make("challenge", {{"v", dpdb::wire::kProtocolVersion}, {"nonce", "aa"}}));
            expect(peer, "hello");
            peer.send(make("list", {{"id", 1}}));
        });
        EXPECT_NE(connect_error(hub).find("did not complete the handshake"), std::string::npos);
        EXPECT_EQ(hub.done(), "");
    }
}

TEST(Channel, CannotConnectWhereNobodyListens) {
    Channel channel;
    try {
        Channel::connect(channel, HubAddress::parse("/nonexistent-dpdb-dir/hub.sock"), kSecret,
                         "client");
        ADD_FAILURE() << "connected to nothing";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("cannot connect"), std::string::npos);
    }
    EXPECT_FALSE(channel.is_open());
    EXPECT_FALSE(channel.send(make("subscribe")));
}

TEST(Channel, ReceiveTimesOutAndSeesTheEndOfTheConnection) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    Channel a(fds[0]);
    Channel b(fds[1]);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(a.receive(50).has_value());
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(45));

    // Several frames in one read, and a frame split across reads, all come out whole.
    ASSERT_TRUE(b.send(make("list", {{"id", 1}})));
    ASSERT_TRUE(b.send(make("list", {{"id", 2}})));
    const std::string third = dpdb::wire::frame(make("list", {{"id", 3}}));
    ASSERT_EQ(::send(fds[1], third.data(), 5, MSG_NOSIGNAL), 5);
    EXPECT_EQ(a.receive(kWaitMs)->num("id"), 1);
    EXPECT_EQ(a.receive(kWaitMs)->num("id"), 2);
    EXPECT_FALSE(a.receive(50).has_value());
    ASSERT_EQ(::send(fds[1], third.data() + 5, third.size() - 5, MSG_NOSIGNAL),
              static_cast<ssize_t>(third.size() - 5));
    EXPECT_EQ(a.receive(kWaitMs)->num("id"), 3);

    // A malformed frame is a ProtocolError; the other side closing is a runtime_error.
    ASSERT_EQ(::send(fds[1], "\xff\xff\xff\xff", 4, MSG_NOSIGNAL), 4);
    EXPECT_THROW(a.receive(kWaitMs), dpdb::wire::ProtocolError);
    int more[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, more), 0);
    Channel d(more[0]);
    ::close(more[1]);
    EXPECT_THROW(d.receive(kWaitMs), std::runtime_error);
}

TEST(Channel, CloseWakesABlockedReader) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    Channel a(fds[0]);
    Channel b(fds[1]);
    auto reader = std::async(std::launch::async, [&a] {
        try {
            a.receive(10 * kWaitMs);
            return std::string("returned");
        } catch (const std::runtime_error& error) {
            return std::string("threw");
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a.close();
    ASSERT_EQ(reader.wait_for(std::chrono::milliseconds(kWaitMs)), std::future_status::ready);
    EXPECT_EQ(reader.get(), "threw");
    EXPECT_FALSE(a.is_open());
    EXPECT_FALSE(a.send(make("subscribe")));
}

TEST(Channel, TrySendGivesUpOnAPeerThatReadsNothingAndClosesTheConnection) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    Channel sender(fds[0]);
    Channel stopped(fds[1]);  // a hub that has stopped reading (SIGSTOP, hung)
    const auto message =
        make("log_lines",
             {{"lines", Json::array({{{"time", 1.0}, {"text", std::string(64 * 1024, 'x')}}})}});
    // The socket's buffer fills within a few frames; bounded in count should it never fill.
    int sent = 0;
    bool gave_up = false;
    for (; sent < 1000; ++sent) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
        if (!sender.try_send(message, deadline)) {
            gave_up = true;
            break;
        }
    }
    EXPECT_TRUE(gave_up) << sent << " frames of 64 KB went to a peer that reads nothing";
    // The frame may have been cut short: nothing more is written on the connection.
    EXPECT_FALSE(sender.is_open());
    EXPECT_FALSE(sender.send(make("subscribe")));
    // What went whole before it is still there for the peer, then the end of the connection.
    for (int i = 0; i < sent; ++i) EXPECT_EQ(stopped.receive(kWaitMs)->type, "log_lines");
    EXPECT_THROW(
        {
            while (stopped.receive(kWaitMs)) {
            }
        },
        std::exception);
}

}  // namespace
