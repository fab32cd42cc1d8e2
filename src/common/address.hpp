// Where a hub listens: "unix:/path", a bare absolute path, or "tcp://host:port".
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace dpdb {

struct HubAddress {
    enum class Kind { Unix, Tcp } kind = Kind::Unix;
    std::string path;  // Unix
    std::string host;  // Tcp
    int port = 0;      // Tcp

    static HubAddress parse(const std::string& text);  // throws std::invalid_argument
    std::string to_string() const;
};

// A connected, blocking stream socket, or -1 with errno set. Over TCP, a connection that stays
// unanswered for `limit` (when given) fails with ETIMEDOUT: a dialer that retries on its own
// would otherwise wait for TCP's retransmissions (1, 3, 7 s ...) after a cut link returns. A TCP
// socket carries keep_alive()'s settings.
int connect_to(const HubAddress& address,
               std::optional<std::chrono::milliseconds> limit = std::nullopt);

// TCP keepalive on a connected socket, so that an idle connection whose link is cut fails within
// about 10 s (docs/remote.md, "What happens on each fault"); with `bound_unanswered`, data left
// unacknowledged that long (TCP_USER_TIMEOUT) fails it too. The hub leaves that out: it marks an
// agent it does not hear from unreachable, and keeps it through a cut (hub/hub_liveness.cpp).
void keep_alive(int fd, bool bound_unanswered = true);
// The same for a Unix socket, at once or not at all (-1: a hub that does not accept now, or an
// address that is no Unix socket); never blocks.
int connect_now(const HubAddress& address);

}  // namespace dpdb
