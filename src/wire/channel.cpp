#include "wire/channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "wire/auth.hpp"

namespace dpdb::wire {
namespace {

constexpr int kHandshakeTimeoutMs = 10000;

}  // namespace

Channel::~Channel() {
    close();
}

Json Channel::connect(Channel& channel, const HubAddress& address, const std::string& secret,
                      const std::string& role, const Json& proc) {
    channel.close();
    const int fd = connect_to(address);
    if (fd < 0) {
        throw std::runtime_error("cannot connect to hub at " + address.to_string() + ": " +
                                 std::strerror(errno));
    }
    channel.fd_ = fd;
    channel.decoder_ = FrameDecoder();
    // However the handshake fails (a refusal, a hang-up, a bad frame), the channel ends closed.
    struct CloseUnlessDone {
        Channel& channel;
        bool done = false;
        ~CloseUnlessDone() {
            if (!done) channel.close();
        }
    } guard{channel};
    const auto challenge = channel.receive(kHandshakeTimeoutMs);
    if (!challenge || challenge->type != "challenge") {
        channel.close();
        throw std::runtime_error("hub at " + address.to_string() + " did not send a challenge");
    }
    if (challenge->num("v") != kProtocolVersion) {
        channel.close();
        throw std::runtime_error("hub at " + address.to_string() + " speaks protocol version " +
                                 std::to_string(challenge->num("v")) + ", this dpdb speaks " +
                                 std::to_string(kProtocolVersion));
    }
    const std::string hub_nonce = challenge->str("nonce");
    const std::string my_nonce = random_hex(16);
    Json hello = {{"v", kProtocolVersion},
                  {"role", role},
                  {"nonce", my_nonce},
                  {"mac", handshake_mac(secret, role, hub_nonce, my_nonce)}};
    if (!proc.is_null()) hello["proc"] = proc;
    channel.send(make("hello", std::move(hello)));
    const auto answer = channel.receive(kHandshakeTimeoutMs);
    if (answer && answer->type == "refused") {
        channel.close();
        throw std::runtime_error("hub at " + address.to_string() +
                                 " refused the connection: " + answer->str("reason"));
    }
    if (!answer || answer->type != "welcome") {
        channel.close();
        throw std::runtime_error("hub at " + address.to_string() +
                                 " did not complete the handshake");
    }
    if (!macs_equal(answer->str("mac"), handshake_mac(secret, "hub", hub_nonce, my_nonce))) {
        channel.close();
        throw std::runtime_error("the process at " + address.to_string() +
                                 " does not hold this hub's secret; not talking to it");
    }
    guard.done = true;
    return answer->body.at("hub");
}

bool Channel::send(const Message& message) {
    const std::string bytes = frame(message);
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (fd_ < 0) return false;
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<Message> Channel::receive(int timeout_ms) {
    for (;;) {
        if (auto payload = decoder_.next()) return decode(*payload);
        if (fd_ < 0) throw std::runtime_error("connection closed");
        pollfd pfd{fd_, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return std::nullopt;
        char buffer[65536];
        const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("the hub closed the connection");
        decoder_.feed(buffer, static_cast<std::size_t>(n));
    }
}

void Channel::close() {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (fd_ >= 0) {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        fd_ = -1;
    }
}

void Channel::abandon_after_fork() {
    // The parent still uses this socket: closing our copy of the descriptor is harmless, but a
    // shutdown() would cut the parent's connection.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    decoder_ = FrameDecoder();
}

}  // namespace dpdb::wire
