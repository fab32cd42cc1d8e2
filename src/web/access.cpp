#include "web/access.hpp"

#include "wire/auth.hpp"

namespace dpdb::web {

Access::Access(std::string origin)
    : origin_(std::move(origin)), token_(wire::random_hex(16)), cookie_(wire::random_hex(32)) {}

bool Access::exchange(std::string_view token) {
    if (exchanged_ || !wire::macs_equal(token, token_)) return false;
    exchanged_ = true;
    return true;
}

std::string Access::cookie_header() const {
    // HttpOnly: no script reads it; SameSite=Strict: no other site's page sends it; Secure over
    // TLS: never sent in the clear.
    const bool tls = origin_.rfind("https://", 0) == 0;
    return std::string(kCookieName) + "=" + cookie_ + "; Path=/; HttpOnly; SameSite=Strict" +
           (tls ? "; Secure" : "");
}

bool Access::holds_cookie(std::string_view header) const {
    // "a=1; dpdb_web=…; b=2"
    while (!header.empty()) {
        const auto end = header.find(';');
        auto pair = header.substr(0, end);
        while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
        const auto equals = pair.find('=');
        if (equals != std::string_view::npos && pair.substr(0, equals) == kCookieName &&
            wire::macs_equal(pair.substr(equals + 1), cookie_)) {
            return true;
        }
        if (end == std::string_view::npos) break;
        header.remove_prefix(end + 1);
    }
    return false;
}

std::string query_value(std::string_view target, std::string_view name) {
    const auto question = target.find('?');
    if (question == std::string_view::npos) return "";
    auto query = target.substr(question + 1);
    while (!query.empty()) {
        const auto end = query.find('&');
        const auto pair = query.substr(0, end);
        const auto equals = pair.find('=');
        if (equals != std::string_view::npos && pair.substr(0, equals) == name) {
            return std::string(pair.substr(equals + 1));
        }
        if (end == std::string_view::npos) break;
        query.remove_prefix(end + 1);
    }
    return "";
}

}  // namespace dpdb::web
