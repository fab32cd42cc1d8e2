#include "common/address.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace dpdb {
namespace {

// Idle 4 s, then a probe every 2 s, given up after 3: an idle connection whose link is cut
// fails within 10 s. Unacknowledged data (a heartbeat, a command) is bounded the same way.
constexpr int kKeepAliveIdleSeconds = 4;
constexpr int kKeepAliveIntervalSeconds = 2;
constexpr int kKeepAliveProbes = 3;
constexpr unsigned kUserTimeoutMs = 10000;

// connect() with a bound: non-blocking, then poll() for the answer.
int connect_within(int fd, const sockaddr* to, socklen_t size, std::chrono::milliseconds limit) {
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int result = ::connect(fd, to, size);
    if (result != 0 && errno == EINPROGRESS) {
        pollfd ready{fd, POLLOUT, 0};
        const int polled = ::poll(&ready, 1, static_cast<int>(limit.count()));
        int error = ETIMEDOUT;
        socklen_t length = sizeof error;
        if (polled > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        errno = error;
        result = error == 0 ? 0 : -1;
    }
    ::fcntl(fd, F_SETFL, flags);
    return result;
}

}  // namespace

void keep_alive(int fd, bool bound_unanswered) {
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepAliveIdleSeconds,
                 sizeof kKeepAliveIdleSeconds);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepAliveIntervalSeconds,
                 sizeof kKeepAliveIntervalSeconds);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof kKeepAliveProbes);
    if (bound_unanswered) {
        ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &kUserTimeoutMs, sizeof kUserTimeoutMs);
    }
}

HubAddress HubAddress::parse(const std::string& text) {
    HubAddress address;
    if (text.rfind("tcp://", 0) == 0) {
        const auto rest = text.substr(6);
        const auto colon = rest.rfind(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
            throw std::invalid_argument("hub address \"" + text + "\" is not tcp://HOST:PORT");
        }
        address.kind = Kind::Tcp;
        address.host = rest.substr(0, colon);
        if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
            address.host = address.host.substr(1, address.host.size() - 2);
        }
        try {
            address.port = std::stoi(rest.substr(colon + 1));
        } catch (const std::exception&) {
            address.port = -1;
        }
        if (address.port <= 0 || address.port > 65535) {
            throw std::invalid_argument("hub address \"" + text + "\" has no valid port");
        }
        return address;
    }
    std::string path = text.rfind("unix:", 0) == 0 ? text.substr(5) : text;
    if (path.empty() || path.front() != '/') {
        throw std::invalid_argument("hub address \"" + text +
                                    "\" is neither an absolute socket path nor tcp://HOST:PORT");
    }
    if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
        throw std::invalid_argument("socket path \"" + path + "\" is too long");
    }
    address.path = std::move(path);
    return address;
}

std::string HubAddress::to_string() const {
    if (kind == Kind::Unix) return "unix:" + path;
    return "tcp://" + host + ":" + std::to_string(port);
}

int connect_now(const HubAddress& address) {
    if (address.kind != HubAddress::Kind::Unix) return -1;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, address.path.c_str(), sizeof(sa.sun_path) - 1);
    // A Unix stream connect completes at once or fails (EAGAIN when the backlog is full).
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
        ::close(fd);
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int connect_to(const HubAddress& address, std::optional<std::chrono::milliseconds> limit) {
    if (address.kind == HubAddress::Kind::Unix) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, address.path.c_str(), sizeof(sa.sun_path) - 1);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
            const int saved = errno;
            ::close(fd);
            errno = saved;
            return -1;
        }
        return fd;
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const auto port = std::to_string(address.port);
    if (::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found) != 0) {
        errno = EHOSTUNREACH;
        return -1;
    }
    int fd = -1;
    for (auto* ai = found; ai != nullptr; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        const int connected = limit ? connect_within(fd, ai->ai_addr, ai->ai_addrlen, *limit)
                                    : ::connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (connected == 0) {
            keep_alive(fd);
            break;
        }
        const int saved = errno;
        ::close(fd);
        errno = saved;
        fd = -1;
    }
    ::freeaddrinfo(found);
    return fd;
}

}  // namespace dpdb
