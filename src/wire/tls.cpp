#include "wire/tls.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string_view>

namespace dpdb::wire {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;

std::string hex(const unsigned char* data, std::size_t size) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < size; ++i) {
        out.push_back(kDigits[data[i] >> 4]);
        out.push_back(kDigits[data[i] & 0xf]);
    }
    return out;
}

void write_pem(const std::string& path, mode_t mode, int (*write)(FILE*, void*), void* object) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) throw std::runtime_error("cannot write " + path);
    FILE* file = ::fdopen(fd, "w");
    const bool ok = file != nullptr && write(file, object) == 1;
    if (file != nullptr) std::fclose(file);
    if (!ok) throw std::runtime_error("cannot write " + path + ": " + tls_error());
}

}  // namespace

std::string tls_error() {
    const unsigned long code = ERR_get_error();
    if (code == 0) return "unknown TLS error";
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    ERR_clear_error();
    return text;
}

void generate_self_signed(const std::string& cert_path, const std::string& key_path,
                          const std::string& common_name) {
    PKey key(EVP_EC_gen("P-256"));
    if (!key) throw std::runtime_error("cannot generate a key: " + tls_error());
    Cert cert(X509_new());
    X509_set_version(cert.get(), 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    BIGNUM* number = BN_bin2bn(serial, sizeof(serial), nullptr);
    BN_to_ASN1_INTEGER(number, X509_get_serialNumber(cert.get()));
    BN_free(number);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                               0);
    X509_set_issuer_name(cert.get(), name);
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
        throw std::runtime_error("cannot sign the certificate: " + tls_error());
    }
    write_pem(
        key_path, 0600,
        [](FILE* f, void* k) {
            return PEM_write_PrivateKey(f, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                        nullptr);
        },
        key.get());
    write_pem(
        cert_path, 0644, [](FILE* f, void* c) { return PEM_write_X509(f, static_cast<X509*>(c)); },
        cert.get());
}

void serve_with(SSL_CTX* context, const CertificateFiles& files) {
    SSL_CTX_set_options(context, SSL_OP_ALL);  // the usual workarounds for peers' bugs
    if (SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) != 1) {
        throw std::runtime_error("cannot require TLS 1.2: " + tls_error());
    }
    if (SSL_CTX_use_certificate_chain_file(context, files.cert.c_str()) != 1) {
        throw std::runtime_error("cannot use the certificate " + files.cert + ": " + tls_error());
    }
    if (SSL_CTX_use_PrivateKey_file(context, files.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(context) != 1) {
        throw std::runtime_error("cannot use the key " + files.key + " for " + files.cert + ": " +
                                 tls_error());
    }
}

std::string fingerprint(X509* certificate) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (certificate == nullptr || X509_digest(certificate, EVP_sha256(), digest, &size) != 1) {
        throw std::runtime_error("cannot fingerprint the certificate");
    }
    return "sha256:" + hex(digest, size);
}

std::string fingerprint_of_file(const std::string& cert_path) {
    FILE* file = std::fopen(cert_path.c_str(), "re");
    if (file == nullptr) throw std::runtime_error("cannot read " + cert_path);
    Cert cert(PEM_read_X509(file, nullptr, nullptr, nullptr));
    std::fclose(file);
    if (!cert) throw std::runtime_error(cert_path + " holds no PEM certificate");
    return fingerprint(cert.get());
}

std::string channel_binding(SSL* ssl) {
    static constexpr char kLabel[] = "EXPORTER-dpdb-handshake";
    unsigned char material[32];
    if (SSL_export_keying_material(ssl, material, sizeof(material), kLabel, sizeof(kLabel) - 1,
                                   nullptr, 0, 0) != 1) {
        throw std::runtime_error("cannot export TLS keying material: " + tls_error());
    }
    return hex(material, sizeof(material));
}

namespace {

// kEarlyHello in ALPN's wire form: a length byte, then the name.
std::string early_hello_protocols() {
    const std::string name = kEarlyHello;
    return std::string(1, static_cast<char>(name.size())) + name;
}

int select_early_hello(SSL* ssl, const unsigned char** out, unsigned char* out_size,
                       const unsigned char* offered, unsigned int offered_size, void*) {
    // TLS 1.2 has no client data with the Finished: the early hello would save nothing there.
    if (SSL_version(ssl) != TLS1_3_VERSION) return SSL_TLSEXT_ERR_NOACK;
    static const std::string ours = early_hello_protocols();
    unsigned char* selected = nullptr;
    if (SSL_select_next_proto(&selected, out_size,
                              reinterpret_cast<const unsigned char*>(ours.data()),
                              static_cast<unsigned int>(ours.size()), offered,
                              offered_size) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;  // an older release's protocol: the challenge as before
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace

void accept_early_hello(SSL_CTX* server) {
    SSL_CTX_set_alpn_select_cb(server, select_early_hello, nullptr);
}

void offer_early_hello(SSL_CTX* client) {
    const std::string protocols = early_hello_protocols();
    if (SSL_CTX_set_alpn_protos(client, reinterpret_cast<const unsigned char*>(protocols.data()),
                                static_cast<unsigned int>(protocols.size())) != 0) {
        throw std::runtime_error("cannot offer ALPN " + std::string(kEarlyHello) + ": " +
                                 tls_error());
    }
}

bool early_hello(const SSL* ssl) {
    const unsigned char* selected = nullptr;
    unsigned int size = 0;
    SSL_get0_alpn_selected(ssl, &selected, &size);
    return SSL_version(ssl) == TLS1_3_VERSION && selected != nullptr &&
           std::string_view(reinterpret_cast<const char*>(selected), size) == kEarlyHello;
}

}  // namespace dpdb::wire
