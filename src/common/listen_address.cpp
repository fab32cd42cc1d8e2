#include "common/listen_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdexcept>

namespace dpdb {

ListenAddress ListenAddress::parse(const std::string& text) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        throw std::invalid_argument("--listen wants HOST:PORT, not \"" + text + "\"");
    }
    ListenAddress address;
    address.host = text.substr(0, colon);
    if (address.host == "localhost") address.host = "127.0.0.1";
    if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
        address.host = address.host.substr(1, address.host.size() - 2);
    }
    const auto digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 5 ||
        digits.find_first_not_of("0123456789") != std::string::npos || std::stoi(digits) > 65535) {
        throw std::invalid_argument("--listen has no valid port in \"" + text + "\"");
    }
    address.port = std::stoi(digits);
    in6_addr scratch{};
    if (::inet_pton(AF_INET, address.host.c_str(), &scratch) != 1 &&
        ::inet_pton(AF_INET6, address.host.c_str(), &scratch) != 1) {
        throw std::invalid_argument("--listen wants an IP address, not \"" + address.host + "\"");
    }
    return address;
}

bool ListenAddress::is_loopback() const {
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string ListenAddress::to_string() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace dpdb
