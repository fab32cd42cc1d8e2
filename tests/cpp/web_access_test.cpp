#include <gtest/gtest.h>

#include <string>

#include "web/access.hpp"

namespace dpdb::web {
namespace {

std::string cookie_value(const Access& access) {
    const auto header = access.cookie_header();
    return header.substr(0, header.find(';'));  // "dpdb_web=…"
}

TEST(WebAccess, TheTokenIsGoodForOneExchange) {
    Access access("http://127.0.0.1:8080");
    EXPECT_EQ(access.token().size(), 32u);
    EXPECT_FALSE(access.exchange(""));
    EXPECT_FALSE(access.exchange(std::string(access.token().size(), '0')));
    EXPECT_FALSE(access.exchange(access.token().substr(1)));
    EXPECT_TRUE(access.exchange(access.token()));
    EXPECT_FALSE(access.exchange(access.token()));
}

TEST(WebAccess, EachServerHasItsOwnTokenAndCookie) {
    Access one("http://127.0.0.1:1");
    Access two("http://127.0.0.1:1");
    EXPECT_NE(one.token(), two.token());
    EXPECT_NE(cookie_value(one), cookie_value(two));
    EXPECT_FALSE(two.holds_cookie(cookie_value(one)));
}

TEST(WebAccess, TheCookieIsFoundAmongOthersAndOnlyWhole) {
    Access access("http://127.0.0.1:8080");
    const auto mine = cookie_value(access);
    EXPECT_NE(access.cookie_header().find("HttpOnly"), std::string::npos);
    EXPECT_NE(access.cookie_header().find("SameSite=Strict"), std::string::npos);
    EXPECT_TRUE(access.holds_cookie(mine));
    EXPECT_TRUE(access.holds_cookie("a=1; " + mine + "; b=2"));
    EXPECT_TRUE(access.holds_cookie("a=1;" + mine));
    EXPECT_FALSE(access.holds_cookie(""));
    EXPECT_FALSE(access.holds_cookie(mine.substr(0, mine.size() - 1)));
    EXPECT_FALSE(access.holds_cookie(mine + "0"));
    EXPECT_FALSE(access.holds_cookie("x" + mine));
    EXPECT_FALSE(access.holds_cookie("dpdb_web="));
}

TEST(WebAccess, OverTlsTheCookieIsNeverSentInTheClear) {
    EXPECT_EQ(Access("http://127.0.0.1:8080").cookie_header().find("Secure"), std::string::npos);
    const auto header = Access("https://10.0.0.1:8080").cookie_header();
    EXPECT_NE(header.find("; Secure"), std::string::npos) << header;
}

TEST(WebAccess, OnlyThePagesOwnOrigin) {
    Access access("http://127.0.0.1:8080");
    EXPECT_TRUE(access.same_origin("http://127.0.0.1:8080"));
    for (const char* other :
         {"", "null", "http://127.0.0.1:8081", "http://localhost:8080", "https://127.0.0.1:8080",
          "http://127.0.0.1:8080/", "http://evil.example"}) {
        EXPECT_FALSE(access.same_origin(other)) << other;
    }
}

TEST(WebAccess, QueryValues) {
    EXPECT_EQ(query_value("/?token=abc", "token"), "abc");
    EXPECT_EQ(query_value("/?a=1&token=abc&b=2", "token"), "abc");
    EXPECT_EQ(query_value("/?tokens=abc", "token"), "");
    EXPECT_EQ(query_value("/token=abc", "token"), "");
    EXPECT_EQ(query_value("/?token", "token"), "");
    EXPECT_EQ(query_value("/?token=", "token"), "");
}

}  // namespace
}  // namespace dpdb::web
