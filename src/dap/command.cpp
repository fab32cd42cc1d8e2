// `dpdb dap`: the Debug Adapter Protocol on stdio (as IDEs start adapters), or on a loopback TCP
// port with --listen, one IDE at a time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>

#include "cli/commands.hpp"
#include "common/listen_address.hpp"
#include "dap/adapter.hpp"
#include "dap/framing.hpp"

namespace dpdb::cli {
namespace {

constexpr int kTickMs = 100;  // how often pending requests are checked for their deadline

bool write_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const auto n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// One IDE, until it disconnects or goes away; returns once it has.
void serve(int in, int out, const std::string& hub) {
    bool ide_gone = false;
    dap::Adapter adapter(
        [&](const wire::Json& message) {
            if (!ide_gone && !write_all(out, dap::encode_frame(message))) ide_gone = true;
        },
        hub);
    dap::FrameReader reader;
    char buffer[64 * 1024];
    while (!adapter.finished() && !ide_gone) {
        pollfd fds[2] = {{in, POLLIN, 0}, {adapter.hub_fd(), POLLIN, 0}};
        const int count = adapter.hub_fd() >= 0 ? 2 : 1;
        int wait_ms = kTickMs;
        if (const auto due = adapter.standing_due()) {
            const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(
                *due - std::chrono::steady_clock::now());
            wait_ms = static_cast<int>(std::clamp<std::int64_t>(until.count() + 1, 0, kTickMs));
        }
        if (::poll(fds, count, wait_ms) < 0 && errno != EINTR) break;
        if (fds[0].revents != 0) {
            const auto n = ::read(in, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            reader.feed(buffer, static_cast<std::size_t>(n));
            for (;;) {
                const auto frame = reader.next();
                if (const auto* body = std::get_if<dap::Body>(&frame)) {
                    adapter.from_ide(body->json);
                } else if (const auto* bad = std::get_if<dap::BadHeader>(&frame)) {
                    adapter.bad_frame(bad->reason);
                } else {
                    break;
                }
                if (adapter.finished()) break;
            }
            if (!reader.broken().empty()) {
                adapter.bad_frame(reader.broken());
                std::fprintf(stderr, "dpdb dap: %s; closing the connection\n",
                             reader.broken().c_str());
                break;
            }
        }
        adapter.pump();
    }
    // The IDE closed or died without a disconnect: as one (sessions left paused, its breakpoints
    // taken out); after a disconnect this does nothing.
    adapter.leave();
}

// An address as the kernel's socket tables print it (/proc/net/tcp, tcp6): the address's 32-bit
// words in hexadecimal, each as the machine holds it, then the port.
std::string table_address(const sockaddr_storage& address) {
    char out[64];
    if (address.ss_family == AF_INET6) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
        std::uint32_t words[4];
        std::memcpy(words, &in6.sin6_addr, sizeof words);
        std::snprintf(out, sizeof out, "%08X%08X%08X%08X:%04X", words[0], words[1], words[2],
                      words[3], ntohs(in6.sin6_port));
    } else {
        const auto& in4 = reinterpret_cast<const sockaddr_in&>(address);
        std::snprintf(out, sizeof out, "%08X:%04X", in4.sin_addr.s_addr, ntohs(in4.sin_port));
    }
    return out;
}

// The user that owns the other end of a loopback TCP connection, from the kernel's socket table
// (where the peer's socket is listed with its local and remote addresses swapped); -1 if unknown.
long long peer_uid(int connection) {
    sockaddr_storage mine{};
    sockaddr_storage theirs{};
    socklen_t size = sizeof mine;
    if (::getsockname(connection, reinterpret_cast<sockaddr*>(&mine), &size) != 0) return -1;
    size = sizeof theirs;
    if (::getpeername(connection, reinterpret_cast<sockaddr*>(&theirs), &size) != 0) return -1;
    const auto local = table_address(theirs);
    const auto remote = table_address(mine);
    FILE* table = std::fopen(mine.ss_family == AF_INET6 ? "/proc/net/tcp6" : "/proc/net/tcp", "r");
    if (table == nullptr) return -1;
    char line[512];
    long long uid = -1;
    while (std::fgets(line, sizeof line, table) != nullptr) {
        char from[64];
        char to[64];
        long long owner = -1;
        if (std::sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %lld", from, to, &owner) == 3 &&
            local == from && remote == to) {
            uid = owner;
            break;
        }
    }
    std::fclose(table);
    return uid;
}

// HOST:PORT on a loopback address (127.0.0.0/8, or [::1]): the protocol has no authentication,
// so it is never offered beyond this machine, and only to this user's connections (peer_uid).
int listen_on(const std::string& listen) {
    const auto wanted = ListenAddress::parse(listen);
    if (!wanted.is_loopback()) {
        throw std::runtime_error(
            "--listen takes a loopback address (127.0.0.1:PORT or [::1]:PORT): DAP has no "
            "authentication; reach it from elsewhere through SSH");
    }
    sockaddr_storage address{};
    socklen_t length = 0;
    auto& in4 = reinterpret_cast<sockaddr_in&>(address);
    auto& in6 = reinterpret_cast<sockaddr_in6&>(address);
    if (::inet_pton(AF_INET, wanted.host.c_str(), &in4.sin_addr) == 1) {
        in4.sin_family = AF_INET;
        in4.sin_port = htons(static_cast<std::uint16_t>(wanted.port));
        length = sizeof in4;
    } else {
        ::inet_pton(AF_INET6, wanted.host.c_str(), &in6.sin6_addr);
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(static_cast<std::uint16_t>(wanted.port));
        length = sizeof in6;
    }
    const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(fd, 4) != 0) {
        throw std::runtime_error("cannot listen on " + listen + ": " + std::strerror(errno));
    }
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    auto bound = wanted;
    bound.port = ntohs(address.ss_family == AF_INET6 ? in6.sin6_port : in4.sin_port);
    std::fprintf(stderr, "dpdb dap: listening on %s\n", bound.to_string().c_str());
    std::fflush(stderr);
    return fd;
}

}  // namespace

int dap_command(const std::string& hub, const std::string& listen) {
    if (listen.empty()) {
        serve(STDIN_FILENO, STDOUT_FILENO, hub);
        return 0;
    }
    const int server = listen_on(listen);
    for (;;) {
        const int ide = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
        if (ide < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            throw std::runtime_error(std::string("accept: ") + std::strerror(errno));
        }
        // Whoever reaches the port could run code in every process of the job: only this user.
        const auto uid = peer_uid(ide);
        if (uid != static_cast<long long>(::geteuid())) {
            std::fprintf(stderr, "dpdb dap: refused a connection of %s\n",
                         uid < 0 ? "an unknown user" : ("uid " + std::to_string(uid)).c_str());
            ::close(ide);
            continue;
        }
        // A response and the event after it are two small writes: with Nagle's algorithm the
        // event would wait for the IDE's delayed ACK of the response (40 ms a step).
        const int on = 1;
        ::setsockopt(ide, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        // Each connection in a process of its own: an IDE connects again for each child session
        // (startDebugging) while the job's session stays connected.
        const pid_t server_of_one = ::fork();
        if (server_of_one == 0) {
            ::close(server);
            try {
                serve(ide, ide, hub);
            } catch (const std::exception& error) {
                std::fprintf(stderr, "dpdb dap: %s\n", error.what());
                ::_exit(1);
            }
            ::_exit(0);
        }
        if (server_of_one < 0) {
            std::fprintf(stderr, "dpdb dap: cannot serve a connection: %s\n", std::strerror(errno));
        }
        ::close(ide);
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
    }
}

}  // namespace dpdb::cli
