// The early hello (ALPN dpdb/2, wire/tls.hpp) against a real hub on TLS: a pinned peer's hello
// and first requests go without a challenge; its MAC holds for its own TLS connection only (no
// replay, no old-style MAC, no MAC without the binding); a peer that did not pin, and a hub
// without it, fall back to the challenge. Every wait is bounded.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/address.hpp"
#include "running_hub.hpp"
#include "wire/auth.hpp"
#include "wire/channel.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/tls.hpp"
#include "wire/transport.hpp"

namespace {

using dpdb::HubAddress;
using dpdb::hub::HubOptions;
using dpdb::hub::testing::RunningHub;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;
using dpdb::wire::Message;
using dpdb::wire::Transport;

constexpr const char* kSecret = "early-hello-test-secret";
constexpr int kWaitMs = 3000;
// How long "no challenge comes" is watched for.
constexpr int kQuietMs = 300;

// A TLS hub on a loopback port, its certificate made for the test; DPDB_TLS_FINGERPRINT is set
// (pinned) or not for the Channels the test makes.
class EarlyHelloTest : public ::testing::Test {
  protected:
    void start(bool early_hello = true) {
        char pattern[] = "/tmp/dpdb-early-hello.XXXXXX";
        ASSERT_NE(::mkdtemp(pattern), nullptr);
        dir_ = pattern;
        dpdb::wire::generate_self_signed(cert(), key(), "dpdb test hub");
        fingerprint_ = dpdb::wire::fingerprint_of_file(cert());
        hub_ =
            std::make_unique<RunningHub>("dpdb-early-hello-hub", kSecret, [&](HubOptions& options) {
                options.tcp_host = "127.0.0.1";
                options.tcp_port = 0;
                options.tls_cert = cert();
                options.tls_key = key();
                options.early_hello = early_hello;
            });
    }

    void TearDown() override {
        ::unsetenv("DPDB_TLS_FINGERPRINT");
        hub_.reset();
        std::remove(cert().c_str());
        std::remove(key().c_str());
        if (!dir_.empty()) ::rmdir(dir_.c_str());
    }

    std::string cert() const { return dir_ + "/cert.pem"; }
    std::string key() const { return dir_ + "/key.pem"; }
    HubAddress address() const {
        return HubAddress::parse("tcp://127.0.0.1:" + std::to_string(hub_->tcp_port()));
    }

    // A TLS connection to the hub as Channel makes it, pinned or not, before any dpdb message.
    std::unique_ptr<Transport> dial(bool pinned) {
        const int fd = dpdb::connect_to(address());
        EXPECT_GE(fd, 0);
        return dpdb::wire::tls_transport(fd, "127.0.0.1", pinned ? fingerprint_ : "");
    }

    std::unique_ptr<RunningHub> hub_;
    std::string dir_;
    std::string fingerprint_;
};

bool write_messages(Transport& transport, const std::vector<Message>& messages) {
    std::string bytes;
    for (const auto& message : messages) bytes += dpdb::wire::frame(message);
    return transport.write_all(bytes.data(), bytes.size(), std::nullopt);
}

// The next message, or nothing within timeout_ms (or once the hub closed the connection).
std::optional<Message> read_message(Transport& transport, dpdb::wire::FrameDecoder& decoder,
                                    int timeout_ms = kWaitMs) {
    for (;;) {
        if (auto payload = decoder.next()) return dpdb::wire::decode(*payload);
        char buffer[65536];
        std::size_t n = 0;
        try {
            n = transport.read(buffer, sizeof(buffer), timeout_ms);
        } catch (const std::runtime_error&) {
            return std::nullopt;
        }
        if (n == 0) return std::nullopt;
        decoder.feed(buffer, n);
    }
}

// A client's hello as the early hello makes it, with the hub's nonce and binding given.
Message hello_with(const std::string& hub_nonce, const std::string& binding,
                   const std::string& peer_nonce = "0123456789abcdef0123456789abcdef") {
    return make(
        "hello",
        {{"v", dpdb::wire::kProtocolVersion},
         {"role", "client"},
         {"nonce", peer_nonce},
         {"mac", dpdb::wire::handshake_mac(kSecret, "client", hub_nonce, peer_nonce, binding)}});
}

TEST_F(EarlyHelloTest, APinnedClientsHelloAndFirstRequestGoWithoutAChallenge) {
    start();
    auto transport = dial(/*pinned=*/true);
    ASSERT_TRUE(transport->early_hello());
    dpdb::wire::FrameDecoder decoder;
    EXPECT_FALSE(read_message(*transport, decoder, kQuietMs)) << "the hub sent a challenge";
    const std::string peer_nonce = "00112233445566778899aabbccddeeff";
    // The hello and the request in one write, as one burst on the network.
    ASSERT_TRUE(write_messages(
        *transport, {hello_with(dpdb::wire::kEarlyHello, transport->binding(), peer_nonce),
                     make("summarize", {{"id", 7}, {"list_up_to", 50}})}));
    const auto welcome = read_message(*transport, decoder);
    ASSERT_TRUE(welcome && welcome->type == "welcome");
    EXPECT_TRUE(dpdb::wire::macs_equal(
        welcome->str("mac"), dpdb::wire::handshake_mac(kSecret, "hub", dpdb::wire::kEarlyHello,
                                                       peer_nonce, transport->binding())));
    EXPECT_EQ(welcome->body["hub"].value("speaks", ""), dpdb::wire::kEarlyHello);
    // Handled after the hello, in order: the summary, then (a small job) the listing.
    const auto summary = read_message(*transport, decoder);
    ASSERT_TRUE(summary && summary->type == "summary");
    EXPECT_EQ(summary->num("id"), 7);
    EXPECT_TRUE(summary->body.value("listing", false));
    const auto listing = read_message(*transport, decoder);
    ASSERT_TRUE(listing && listing->type == "listing");
    EXPECT_EQ(listing->num("id"), 7);
}

TEST_F(EarlyHelloTest, AHelloFromAnotherConnectionIsRefused) {
    start();
    auto first = dial(true);
    auto second = dial(true);
    ASSERT_TRUE(first->early_hello() && second->early_hello());
    // Distinct TLS connections export distinct keying material: what proves the secret on one
    // (recorded, or relayed by a man in the middle) proves nothing on the other.
    ASSERT_NE(first->binding(), second->binding());
    ASSERT_TRUE(write_messages(*second, {hello_with(dpdb::wire::kEarlyHello, first->binding())}));
    dpdb::wire::FrameDecoder decoder;
    const auto answer = read_message(*second, decoder);
    ASSERT_TRUE(answer && answer->type == "refused");
    EXPECT_EQ(answer->str("reason"), "authentication failed (wrong secret)");
}

TEST_F(EarlyHelloTest, AMacWithoutTheBindingOrWithAChallengesNonceIsRefused) {
    start();
    const std::string old_style_nonce = dpdb::wire::random_hex(16);
    for (const auto& [nonce, with_binding] : std::vector<std::pair<std::string, bool>>{
             {dpdb::wire::kEarlyHello, false}, {old_style_nonce, true}}) {
        auto transport = dial(true);
        ASSERT_TRUE(transport->early_hello());
        ASSERT_TRUE(write_messages(*transport,
                                   {hello_with(nonce, with_binding ? transport->binding() : "")}));
        dpdb::wire::FrameDecoder decoder;
        const auto answer = read_message(*transport, decoder);
        ASSERT_TRUE(answer && answer->type == "refused") << nonce;
    }
}

TEST_F(EarlyHelloTest, AClientThatDidNotPinIsChallengedAsBefore) {
    start();
    auto transport = dial(/*pinned=*/false);
    EXPECT_FALSE(transport->early_hello());
    dpdb::wire::FrameDecoder decoder;
    const auto challenge = read_message(*transport, decoder);
    ASSERT_TRUE(challenge && challenge->type == "challenge");
    EXPECT_EQ(challenge->str("nonce").size(), 32u);
}

TEST_F(EarlyHelloTest, ChannelSendsTheFirstRequestsWithTheHelloAndReadsTheirAnswers) {
    start();
    ::setenv("DPDB_TLS_FINGERPRINT", fingerprint_.c_str(), 1);
    Channel channel;
    std::vector<bool> asked;
    const Json hub = Channel::connect(channel, address(), kSecret, "client", [&](bool v2) {
        asked.push_back(v2);
        return std::vector<Message>{make("summarize", {{"id", 1}, {"list_up_to", 0}})};
    });
    EXPECT_EQ(asked, std::vector<bool>{true});
    EXPECT_EQ(hub.value("speaks", ""), dpdb::wire::kEarlyHello);
    const auto summary = channel.receive(kWaitMs);
    ASSERT_TRUE(summary && summary->type == "summary");
    // No process, no session: within list_up_to 0, so the listing follows.
    EXPECT_TRUE(summary->body.value("listing", false));
    const auto listing = channel.receive(kWaitMs);
    ASSERT_TRUE(listing && listing->type == "listing");
}

TEST_F(EarlyHelloTest, AWrongSecretFailsInOneLine) {
    start();
    ::setenv("DPDB_TLS_FINGERPRINT", fingerprint_.c_str(), 1);
    Channel channel;
    try {
        Channel::connect(channel, address(), "not the secret", "client", [](bool) {
            return std::vector<Message>{make("summarize", {{"id", 1}})};
        });
        FAIL() << "connected without the secret";
    } catch (const std::runtime_error& error) {
        const std::string text = error.what();
        EXPECT_NE(text.find("refused the connection: authentication failed (wrong secret)"),
                  std::string::npos)
            << text;
        EXPECT_EQ(text.find('\n'), std::string::npos);
    }
    EXPECT_FALSE(channel.is_open());
}

TEST_F(EarlyHelloTest, AHubWithoutItChallengesAPinnedClientWhichStillConnects) {
    start(/*early_hello=*/false);  // as an older release's hub
    auto transport = dial(/*pinned=*/true);
    EXPECT_FALSE(transport->early_hello());
    dpdb::wire::FrameDecoder decoder;
    const auto challenge = read_message(*transport, decoder);
    ASSERT_TRUE(challenge && challenge->type == "challenge");

    ::setenv("DPDB_TLS_FINGERPRINT", fingerprint_.c_str(), 1);
    Channel channel;
    int asked = 0;
    Channel::connect(channel, address(), kSecret, "client", [&](bool) {
        ++asked;
        return std::vector<Message>{make("list", {{"id", 3}})};
    });
    EXPECT_EQ(asked, 1);
    const auto listing = channel.receive(kWaitMs);
    ASSERT_TRUE(listing && listing->type == "listing");
    EXPECT_EQ(listing->num("id"), 3);
}

}  // namespace
