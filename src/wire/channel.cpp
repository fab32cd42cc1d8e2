#include "wire/channel.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "wire/auth.hpp"
#include "wire/tls.hpp"

namespace dpdb::wire {
namespace {

constexpr int kHandshakeTimeoutMs = 10000;

// DPDB_INSECURE=1: plain TCP, for a hub started with --insecure.
bool insecure_requested() {
    const char* value = std::getenv("DPDB_INSECURE");
    return value != nullptr && *value != '\0' && std::string(value) != "0";
}

std::string pinned_fingerprint() {
    const char* value = std::getenv("DPDB_TLS_FINGERPRINT");
    return value != nullptr ? value : "";
}

}  // namespace

Channel::~Channel() {
    close();
}

Json Channel::connect(Channel& channel, const HubAddress& address, const std::string& secret,
                      const std::string& role, const Json& proc, int connected) {
    return handshake(channel, address, secret, role, proc, connected, nullptr);
}

Json Channel::connect(Channel& channel, const HubAddress& address, const std::string& secret,
                      const std::string& role, const FirstRequests& first) {
    return handshake(channel, address, secret, role, Json(), -1, first);
}

Json Channel::handshake(Channel& channel, const HubAddress& address, const std::string& secret,
                        const std::string& role, const Json& proc, int connected,
                        const FirstRequests& first) {
    channel.close();
    const int fd = connected >= 0 ? connected : connect_to(address);
    if (fd < 0) {
        throw std::runtime_error("cannot connect to hub at " + address.to_string() + ": " +
                                 std::strerror(errno));
    }
    channel.transport_.reset();
    if (address.kind == HubAddress::Kind::Tcp && !insecure_requested()) {
        try {
            channel.transport_ = tls_transport(fd, address.host, pinned_fingerprint());
        } catch (const std::exception& error) {
            throw std::runtime_error("hub at " + address.to_string() + ": " + error.what());
        }
    } else {
        channel.transport_ = plain_transport(fd);
    }
    const std::string binding = channel.transport_->binding();
    const bool early = channel.transport_->early_hello();
    channel.open_ = true;
    channel.decoder_ = FrameDecoder();
    // However the handshake fails (a refusal, a hang-up, a bad frame), the channel ends closed.
    struct CloseUnlessDone {
        Channel& channel;
        bool done = false;
        ~CloseUnlessDone() {
            if (!done) channel.close();
        }
    } guard{channel};
    const auto refused = [&](const std::optional<Message>& answer) {
        if (answer && answer->type == "refused") {
            throw std::runtime_error("hub at " + address.to_string() +
                                     " refused the connection: " + answer->str("reason"));
        }
    };
    // With the early hello the hub sends no challenge: the channel binding makes the MAC fresh
    // (wire/tls.hpp), and kEarlyHello takes the nonce's place.
    std::string hub_nonce = kEarlyHello;
    if (!early) {
        const auto challenge = channel.receive(kHandshakeTimeoutMs);
        refused(challenge);
        if (!challenge || challenge->type != "challenge") {
            throw std::runtime_error("hub at " + address.to_string() + " did not send a challenge");
        }
        if (challenge->num("v") != kProtocolVersion) {
            throw std::runtime_error("hub at " + address.to_string() + " speaks protocol version " +
                                     std::to_string(challenge->num("v")) + ", this dpdb speaks " +
                                     std::to_string(kProtocolVersion));
        }
        hub_nonce = challenge->str("nonce");
        // Never answer a challenge that poses as the early hello's: such a MAC is only ever made
        // for a connection whose TLS agreed on it.
        if (hub_nonce == kEarlyHello) {
            throw std::runtime_error("hub at " + address.to_string() +
                                     " sent a challenge this dpdb does not answer");
        }
    }
    const std::string my_nonce = random_hex(16);
    Json hello = {{"v", kProtocolVersion},
                  {"role", role},
                  {"nonce", my_nonce},
                  {"mac", handshake_mac(secret, role, hub_nonce, my_nonce, binding)}};
    if (!proc.is_null()) hello["proc"] = proc;
    std::vector<Message> burst{make("hello", std::move(hello))};
    if (early && first) {
        // The hub handles what one read brings in order: the requests after the hello.
        for (auto& request : first(true)) burst.push_back(std::move(request));
    }
    channel.send_all(burst);
    const auto answer = channel.receive(kHandshakeTimeoutMs);
    refused(answer);
    if (!answer || answer->type != "welcome") {
        throw std::runtime_error("hub at " + address.to_string() +
                                 " did not complete the handshake");
    }
    if (!macs_equal(answer->str("mac"),
                    handshake_mac(secret, "hub", hub_nonce, my_nonce, binding))) {
        throw std::runtime_error("the process at " + address.to_string() +
                                 " does not hold this hub's secret; not talking to it");
    }
    Json described = answer->body.at("hub");
    if (!early && first) {
        const auto speaks = described.find("speaks");
        const bool v2 = speaks != described.end() && speaks->is_string() &&
                        speaks->get<std::string>() == kEarlyHello;
        channel.send_all(first(v2));
    }
    guard.done = true;
    return described;
}

bool Channel::send_all(const std::vector<Message>& messages) {
    std::string bytes;
    for (const auto& message : messages) bytes += frame(message);
    if (bytes.empty()) return true;
    std::lock_guard<std::timed_mutex> lock(write_mutex_);
    if (!open_) return false;
    return transport_->write_all(bytes.data(), bytes.size(), std::nullopt);
}

bool Channel::send(const Message& message) {
    const std::string bytes = frame(message);
    std::lock_guard<std::timed_mutex> lock(write_mutex_);
    if (!open_) return false;
    return transport_->write_all(bytes.data(), bytes.size(), std::nullopt);
}

bool Channel::try_send(const Message& message, std::chrono::steady_clock::time_point deadline) {
    const std::string bytes = frame(message);
    std::unique_lock<std::timed_mutex> lock(write_mutex_, std::defer_lock);
    if (!lock.try_lock_until(std::min(
            deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(200))) ||
        !open_) {
        return false;
    }
    if (transport_->write_all(bytes.data(), bytes.size(), deadline)) return true;
    // Gone, or cut short mid-frame: nothing more may be written on it either way.
    if (open_.exchange(false)) transport_->shutdown();
    return false;
}

std::optional<Message> Channel::receive(int timeout_ms) {
    for (;;) {
        if (auto payload = decoder_.next()) return decode(*payload);
        if (!open_) throw std::runtime_error("connection closed");
        char buffer[65536];
        const std::size_t n = transport_->read(buffer, sizeof(buffer), timeout_ms);
        if (n == 0) return std::nullopt;
        decoder_.feed(buffer, n);
    }
}

void Channel::close() {
    std::lock_guard<std::timed_mutex> lock(write_mutex_);
    if (open_.exchange(false)) transport_->shutdown();
}

void Channel::abandon_after_fork() {
    // The parent still uses this connection: letting go of our descriptor is harmless, but a
    // shutdown() (or a TLS close) would cut the parent's connection.
    if (open_.exchange(false)) transport_->abandon();
    decoder_ = FrameDecoder();
}

}  // namespace dpdb::wire
