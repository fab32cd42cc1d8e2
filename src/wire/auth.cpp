#include "wire/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "wire/openssl_lock.hpp"

namespace dpdb::wire {
namespace {

std::string to_hex(const unsigned char* data, std::size_t size) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(size * 2);
    for (std::size_t i = 0; i < size; ++i) {
        out.push_back(kDigits[data[i] >> 4]);
        out.push_back(kDigits[data[i] & 0xf]);
    }
    return out;
}

}  // namespace

std::string random_hex(std::size_t bytes) {
    std::vector<unsigned char> raw(bytes);
    std::lock_guard<std::mutex> lock(openssl_mutex());
    if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
        throw std::runtime_error("the OS random generator failed");
    }
    return to_hex(raw.data(), raw.size());
}

namespace {

std::string hmac_hex(std::string_view key, std::string_view text) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    std::lock_guard<std::mutex> lock(openssl_mutex());
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac,
             &mac_size) == nullptr) {
        throw std::runtime_error("HMAC-SHA256 failed");
    }
    return to_hex(mac, mac_size);
}

}  // namespace

std::string agent_key(std::string_view secret) {
    return hmac_hex(secret, "dpdb1|agent-key");
}

std::string handshake_mac(std::string_view secret, std::string_view role,
                          std::string_view hub_nonce, std::string_view peer_nonce,
                          std::string_view binding) {
    std::string text = "dpdb1|";
    text.append(role).append("|").append(hub_nonce).append("|").append(peer_nonce);
    text.append("|").append(binding);
    return hmac_hex(secret, text);
}

bool macs_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace dpdb::wire
