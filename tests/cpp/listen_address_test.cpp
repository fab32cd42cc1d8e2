#include "common/listen_address.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace dpdb {
namespace {

TEST(ListenAddress, ReadsV4V6AndLocalhost) {
    const auto v4 = ListenAddress::parse("10.0.0.7:7777");
    EXPECT_EQ(v4.host, "10.0.0.7");
    EXPECT_EQ(v4.port, 7777);
    EXPECT_FALSE(v4.is_loopback());
    const auto v6 = ListenAddress::parse("[::1]:0");
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, 0);
    EXPECT_TRUE(v6.is_loopback());
    EXPECT_EQ(v6.to_string(), "[::1]:0");
    const auto named = ListenAddress::parse("localhost:9");
    EXPECT_EQ(named.host, "127.0.0.1");
    EXPECT_TRUE(named.is_loopback());
    EXPECT_TRUE(ListenAddress::parse("127.8.9.1:1").is_loopback());
    EXPECT_FALSE(ListenAddress::parse("[::]:1").is_loopback());
}

TEST(ListenAddress, RefusesWhatIsNoHostAndPort) {
    for (const char* bad :
         {"", "7777", ":7777", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
          "127.0.0.1:99999999999999", "example.org:80", "[::1:80"}) {
        EXPECT_THROW(ListenAddress::parse(bad), std::invalid_argument) << bad;
    }
}

}  // namespace
}  // namespace dpdb
