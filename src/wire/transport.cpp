#include "wire/transport.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "wire/openssl_lock.hpp"
#include "wire/tls.hpp"

namespace dpdb::wire {
namespace {

constexpr int kTlsHandshakeTimeoutMs = 10000;

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

// poll() that restarts after a signal; false on timeout.
bool wait_for(int fd, short events, int timeout_ms) {
    pollfd pfd{fd, events, 0};
    for (;;) {
        const int ready = ::poll(&pfd, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        return ready != 0;
    }
}

// Before a write is tried again: false once the deadline has passed with the socket still full.
// Without one, a second at a time (the caller tries again, for as long as the connection lasts).
bool wait_to_write(int fd, short events, const Deadline& deadline) {
    if (!deadline) {
        wait_for(fd, events, 1000);
        return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *deadline - std::chrono::steady_clock::now());
    return wait_for(fd, events, static_cast<int>(std::max<std::int64_t>(0, left.count())));
}

class PlainTransport final : public Transport {
  public:
    explicit PlainTransport(int fd) : fd_(fd) {}
    ~PlainTransport() override {
        if (fd_ >= 0) ::close(fd_);
    }

    std::size_t read(char* buffer, std::size_t size, int timeout_ms) override {
        for (;;) {
            if (!wait_for(fd_, POLLIN, timeout_ms)) return 0;
            const ssize_t n = ::recv(fd_, buffer, size, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("the hub closed the connection");
            return static_cast<std::size_t>(n);
        }
    }

    bool write_all(const char* data, std::size_t size, Deadline deadline) override {
        // With a deadline the socket is written without blocking and waited for by poll, which
        // can give up; the socket itself stays blocking for every other writer.
        const int flags = MSG_NOSIGNAL | (deadline ? MSG_DONTWAIT : 0);
        std::size_t sent = 0;
        while (sent < size) {
            const ssize_t n = ::send(fd_, data + sent, size - sent, flags);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && deadline && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (!wait_to_write(fd_, POLLOUT, deadline)) return false;
                continue;
            }
            if (n <= 0) return false;
            sent += static_cast<std::size_t>(n);
        }
        return true;
    }

    int fd() const override { return fd_; }
    void shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
    void abandon() override {
        ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// OpenSSL allows no concurrent calls on one SSL object, yet the agent reads on its I/O thread
// while Python threads write. So the socket is non-blocking, every OpenSSL call holds
// openssl_mutex() (which also lets a fork wait for them), and the waiting (poll) happens outside
// the lock.
// Whether a failed SSL call means the peer closed or reset the connection (a hub refusing
// connections closes them before TLS), not that TLS itself failed. Reads the thread's error queue
// without consuming it.
bool hung_up(int error) {
    if (error == SSL_ERROR_ZERO_RETURN) return true;
    if (error == SSL_ERROR_SYSCALL) return ERR_peek_error() == 0;  // EOF or a reset
    return error == SSL_ERROR_SSL &&
           ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

class TlsTransport final : public Transport {
  public:
    TlsTransport(int fd, const std::string& server_name, const std::string& pinned) : fd_(fd) {
        {
            std::lock_guard<std::mutex> lock(openssl_mutex());
            ctx_ = SSL_CTX_new(TLS_client_method());
            if (ctx_ == nullptr) throw std::runtime_error("TLS: " + tls_error());
            SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
            // The hub is authenticated by the channel-bound HMAC handshake (and by the pinned
            // fingerprint when given), not by a certificate authority.
            SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);
            // Only to a pinned hub: the early hello sends requests before the hub's welcome has
            // proved it holds the secret, so the hub must already be known by its certificate.
            if (!pinned.empty()) offer_early_hello(ctx_);
            ssl_ = SSL_new(ctx_);
            SSL_set_fd(ssl_, fd_);
            SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
            SSL_set_tlsext_host_name(ssl_, server_name.c_str());
        }
        ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(kTlsHandshakeTimeoutMs);
        for (;;) {
            int error = 0;
            {
                std::lock_guard<std::mutex> lock(openssl_mutex());
                ERR_clear_error();  // SSL_get_error reads this thread's queue: nothing stale in it
                const int rc = SSL_connect(ssl_);
                if (rc != 1) error = SSL_get_error(ssl_, rc);
            }
            if (error == 0) break;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - std::chrono::steady_clock::now())
                                  .count();
            if ((error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) || left <= 0 ||
                !wait_for(fd_, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
                          static_cast<int>(left))) {
                if (hung_up(error)) {
                    release();
                    throw std::runtime_error(
                        "the hub is refusing connections: it hung up during the TLS handshake "
                        "(too many unauthenticated connections from this address or in all); "
                        "try again shortly");
                }
                const std::string reason = error == SSL_ERROR_SSL ? tls_error() : "no TLS answer";
                release();
                throw std::runtime_error("TLS handshake failed: " + reason);
            }
        }
        if (!pinned.empty()) {
            std::string actual = "none";
            {
                std::lock_guard<std::mutex> lock(openssl_mutex());
                X509* cert = SSL_get1_peer_certificate(ssl_);
                if (cert != nullptr) actual = fingerprint(cert);
                X509_free(cert);
            }
            if (actual != pinned) {
                release();
                throw std::runtime_error("the hub's certificate is " + actual +
                                         ", not the pinned " + pinned);
            }
        }
        std::lock_guard<std::mutex> lock(openssl_mutex());
        binding_ = channel_binding(ssl_);
        early_hello_ = wire::early_hello(ssl_);
    }

    ~TlsTransport() override { release(); }

    std::size_t read(char* buffer, std::size_t size, int timeout_ms) override {
        for (;;) {
            int rc = 0;
            int error = 0;
            {
                std::lock_guard<std::mutex> lock(openssl_mutex());
                if (ssl_ == nullptr) throw std::runtime_error("connection closed");
                ERR_clear_error();
                rc = SSL_read(ssl_, buffer, static_cast<int>(size));
                if (rc > 0) return static_cast<std::size_t>(rc);
                error = SSL_get_error(ssl_, rc);
            }
            if (error == SSL_ERROR_WANT_READ) {
                if (!wait_for(fd_, POLLIN, timeout_ms)) return 0;
            } else if (error == SSL_ERROR_WANT_WRITE) {
                if (!wait_for(fd_, POLLOUT, timeout_ms)) return 0;
            } else {
                throw std::runtime_error("the hub closed the TLS connection");
            }
        }
    }

    bool write_all(const char* data, std::size_t size, Deadline deadline) override {
        while (size > 0) {
            int rc = 0;
            int error = 0;
            {
                std::lock_guard<std::mutex> lock(openssl_mutex());
                if (ssl_ == nullptr) return false;
                ERR_clear_error();
                rc = SSL_write(ssl_, data, static_cast<int>(size));
                if (rc > 0) {
                    data += rc;
                    size -= static_cast<std::size_t>(rc);
                    continue;
                }
                error = SSL_get_error(ssl_, rc);
            }
            if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) return false;
            if (!wait_to_write(fd_, error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, deadline)) {
                return false;
            }
        }
        return true;
    }

    int fd() const override { return fd_; }
    void shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
    std::string binding() const override { return binding_; }
    bool early_hello() const override { return early_hello_; }
    void abandon() override {
        // The SSL state is shared with the parent's connection: never free or shut it here.
        ::close(fd_);
        fd_ = -1;
        ssl_ = nullptr;
        ctx_ = nullptr;
    }

  private:
    void release() {
        std::lock_guard<std::mutex> lock(openssl_mutex());
        if (ssl_ != nullptr) SSL_free(ssl_);
        if (ctx_ != nullptr) SSL_CTX_free(ctx_);
        if (fd_ >= 0) ::close(fd_);
        ssl_ = nullptr;
        ctx_ = nullptr;
        fd_ = -1;
    }

    int fd_;
    SSL_CTX* ctx_ = nullptr;
    SSL* ssl_ = nullptr;
    std::string binding_;
    bool early_hello_ = false;
};

}  // namespace

std::unique_ptr<Transport> plain_transport(int fd) {
    return std::make_unique<PlainTransport>(fd);
}

std::unique_ptr<Transport> tls_transport(int fd, const std::string& server_name,
                                         const std::string& pinned) {
    return std::make_unique<TlsTransport>(fd, server_name, pinned);
}

}  // namespace dpdb::wire
