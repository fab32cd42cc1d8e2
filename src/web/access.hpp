// Who may have the page and its WebSocket: the holder of the one-time token `dpdb web` printed,
// which is exchanged for a cookie at its first use, and only from the page's own origin.
#pragma once

#include <string>
#include <string_view>

namespace dpdb::web {

class Access {
  public:
    // `origin` is the page's own, "http://HOST:PORT" or "https://HOST:PORT", as the printed URL
    // names it.
    explicit Access(std::string origin);

    const std::string& origin() const { return origin_; }
    // What the printed URL carries; good for one exchange only.
    const std::string& token() const { return token_; }
    static constexpr std::string_view kCookieName = "dpdb_web";

    // The one-time token's first use: true once (the cookie is then set), false ever after.
    bool exchange(std::string_view token);
    // The Set-Cookie value that goes with a successful exchange.
    std::string cookie_header() const;
    // Whether a request's Cookie header carries the cookie.
    bool holds_cookie(std::string_view cookie_header) const;
    // Whether a WebSocket's Origin is the page's own (a page elsewhere must not reach the job).
    bool same_origin(std::string_view origin) const { return origin == origin_; }

  private:
    std::string origin_;
    std::string token_;
    std::string cookie_;
    bool exchanged_ = false;
};

// The value of `name` in a URL's query ("" if absent).
std::string query_value(std::string_view target, std::string_view name);

}  // namespace dpdb::web
