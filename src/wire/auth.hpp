// Mutual challenge-response over a shared per-hub secret: neither side ever sends the secret, and
// each proves it holds it by an HMAC-SHA256 over both sides' fresh nonces and its own role.
#pragma once

#include <string>
#include <string_view>

namespace dpdb::wire {

// 32 random bytes from the OS, as 64 hex digits.
std::string random_hex(std::size_t bytes = 32);

// The MAC that `role` ("agent", "client" or "hub") sends for this pair of nonces. Over TLS,
// `binding` is the connection's channel binding (tls.hpp), so the MAC is good for it alone.
std::string handshake_mac(std::string_view secret, std::string_view role,
                          std::string_view hub_nonce, std::string_view peer_nonce,
                          std::string_view binding = {});

// The credential a debugged process is given instead of the secret: HMAC-SHA256(secret,
// "dpdb1|agent-key"), 64 hex digits. A hub takes it for the role "agent" only, so whoever reads
// it from a process's environment can pose as a debugged process but attach to none, and cannot
// work the secret out of it.
std::string agent_key(std::string_view secret);

// Constant-time comparison of two MACs.
bool macs_equal(std::string_view a, std::string_view b);

}  // namespace dpdb::wire
