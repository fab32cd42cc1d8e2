#include "wire/auth.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using dpdb::wire::handshake_mac;
using dpdb::wire::macs_equal;
using dpdb::wire::random_hex;

TEST(Auth, MacIsDeterministicHexSha256) {
    const auto mac = handshake_mac("secret", "agent", "hubnonce", "peernonce");
    EXPECT_EQ(mac, handshake_mac("secret", "agent", "hubnonce", "peernonce"));
    EXPECT_EQ(mac.size(), 64u);
    EXPECT_EQ(mac.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Auth, MacDependsOnEveryInput) {
    const auto base = handshake_mac("secret", "agent", "hubnonce", "peernonce");
    EXPECT_NE(base, handshake_mac("secret", "client", "hubnonce", "peernonce"));
    EXPECT_NE(base, handshake_mac("secret", "hub", "hubnonce", "peernonce"));
    EXPECT_NE(base, handshake_mac("secreT", "agent", "hubnonce", "peernonce"));
    EXPECT_NE(base, handshake_mac("", "agent", "hubnonce", "peernonce"));
    EXPECT_NE(base, handshake_mac("secret", "agent", "hubnoncf", "peernonce"));
    EXPECT_NE(base, handshake_mac("secret", "agent", "hubnonce", "peernoncf"));
    // The nonces are not interchangeable: the hub's answer cannot be replayed as the peer's.
    EXPECT_NE(base, handshake_mac("secret", "agent", "peernonce", "hubnonce"));
}

TEST(Auth, MacSeparatesFieldsUnambiguously) {
    // Nonces are hex, so a "|" cannot move between fields; still, shifting characters across the
    // role/nonce boundary must not give the same MAC.
    EXPECT_NE(handshake_mac("s", "agent", "ab", "cd"), handshake_mac("s", "agent", "a", "bcd"));
    EXPECT_NE(handshake_mac("s", "agent", "ab", "cd"), handshake_mac("s", "agenta", "b", "cd"));
}

TEST(Auth, MacsEqual) {
    const auto mac = handshake_mac("secret", "client", "a", "b");
    EXPECT_TRUE(macs_equal(mac, mac));
    EXPECT_TRUE(macs_equal(mac, std::string(mac)));
    EXPECT_TRUE(macs_equal("", ""));
    std::string flipped = mac;
    flipped.back() = flipped.back() == '0' ? '1' : '0';
    EXPECT_FALSE(macs_equal(mac, flipped));
    flipped = mac;
    flipped.front() = flipped.front() == 'f' ? 'e' : 'f';
    EXPECT_FALSE(macs_equal(mac, flipped));
    EXPECT_FALSE(macs_equal(mac, mac.substr(0, 63)));  // a prefix is not equal
    EXPECT_FALSE(macs_equal(mac, mac + "0"));
    EXPECT_FALSE(macs_equal(mac, ""));
    EXPECT_FALSE(macs_equal("", mac));
}

TEST(Auth, RandomHexLength) {
    EXPECT_EQ(random_hex().size(), 64u);
    EXPECT_EQ(random_hex(16).size(), 32u);
    EXPECT_EQ(random_hex(1).size(), 2u);
    EXPECT_EQ(random_hex(0), "");
    const auto hex = random_hex(64);
    EXPECT_EQ(hex.size(), 128u);
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(Auth, RandomHexIsUnique) {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) seen.insert(random_hex(16));
    EXPECT_EQ(seen.size(), 1000u);
}
