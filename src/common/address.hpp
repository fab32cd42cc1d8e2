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

}  // namespace dpdb
