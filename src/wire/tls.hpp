// TLS pieces shared by the hub (server) and its peers (clients): certificates, fingerprints and
// the channel binding that ties the HMAC handshake to one TLS connection.
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace dpdb::wire {

// A self-signed certificate and key (ECDSA P-256, ten years), written as PEM files with the key
// 0600. Throws std::runtime_error.
void generate_self_signed(const std::string& cert_path, const std::string& key_path,
                          const std::string& common_name);

// A server's certificate (chain) and its private key, as PEM files.
struct CertificateFiles {
    std::string cert;
    std::string key;
};

// Makes `context` a TLS server's (the hub's port, `dpdb web` off loopback): TLS 1.2 or later,
// the certificate and its key, which must match. Throws std::runtime_error.
void serve_with(SSL_CTX* context, const CertificateFiles& files);

// "sha256:" and the hex SHA-256 of the certificate's DER encoding, as pinned by peers.
std::string fingerprint(X509* certificate);
std::string fingerprint_of_file(const std::string& cert_path);

// Keying material exported from the TLS session (RFC 5705/8446), as hex. Both ends compute the
// same value only if they share one TLS connection, so a relay in the middle that terminates TLS
// on each side cannot pass the HMAC handshake on.
std::string channel_binding(SSL* ssl);

// ALPN "dpdb/2", the early hello: the peer sends its hello, and a client its first requests with
// it, right after its TLS Finished instead of waiting for the hub's challenge (a round trip
// fewer, and the requests ride along). The TLS 1.3 channel binding, fresh from both ends' random
// values and key shares, stands in for the hub's nonce, which is then kEarlyHello itself (a hub's
// nonce is otherwise 32 hex digits: the two MACs are never confused); docs/architecture.md says
// why that keeps replay and reflection out. A peer that does not offer it (an older release, a
// hub not pinned) is challenged as before; a hub that does not select it (an older release, TLS
// 1.2) is answered as before.
inline constexpr char kEarlyHello[] = "dpdb/2";
// The hub: select kEarlyHello when a TLS 1.3 peer offers it.
void accept_early_hello(SSL_CTX* server);
// The peer: offer it.
void offer_early_hello(SSL_CTX* client);
// Once the handshake is done: both ends agreed on it.
bool early_hello(const SSL* ssl);

// The last OpenSSL error as text.
std::string tls_error();

}  // namespace dpdb::wire
