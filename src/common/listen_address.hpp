// What --listen takes, for every face that serves a port (the hub, the DAP adapter): "HOST:PORT"
// or "[V6]:PORT", with an IP address or "localhost".
#pragma once

#include <string>

namespace dpdb {

struct ListenAddress {
    std::string host;  // an IP address, without brackets
    int port = 0;      // 0: any free port

    static ListenAddress parse(const std::string& text);  // throws std::invalid_argument
    bool is_loopback() const;
    std::string to_string() const;  // HOST:PORT, brackets around an IPv6 host
};

}  // namespace dpdb
