// Where a hub listens: "unix:/path", a bare absolute path, or "tcp://host:port".
#pragma once

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

// A connected, blocking stream socket, or -1 with errno set.
int connect_to(const HubAddress& address);
// The same for a Unix socket, at once or not at all (-1: a hub that does not accept now, or an
// address that is no Unix socket); never blocks.
int connect_now(const HubAddress& address);

}  // namespace dpdb
