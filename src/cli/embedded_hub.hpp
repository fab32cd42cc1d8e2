// A hub on its own thread inside the client process: what `dpdb run` and `dpdb hub` host.
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <thread>

#include "hub/hub.hpp"

namespace dpdb::cli {

struct EmbeddedHubConfig {
    std::string socket_path;  // Unix socket (empty: none); its secret is also written beside it
    std::string name;
    std::string log_path;  // empty: stderr
    // Where the secret is kept across restarts (0600); empty: a fresh secret, removed at the end.
    std::string secret_path;
    hub::HubOptions network;  // TCP, TLS and store settings
};

class EmbeddedHub {
  public:
    explicit EmbeddedHub(EmbeddedHubConfig config);
    ~EmbeddedHub();  // stops the hub and removes its socket
    EmbeddedHub(const EmbeddedHub&) = delete;
    EmbeddedHub& operator=(const EmbeddedHub&) = delete;

    const std::string& socket_path() const { return config_.socket_path; }
    const std::string& secret() const { return secret_; }
    int tcp_port() const { return hub_->tcp_port(); }
    // Blocks until SIGINT or SIGTERM; the caller blocks both before constructing the hub.
    void wait_for_signal();

  private:
    EmbeddedHubConfig config_;
    std::string secret_;
    asio::io_context io_;
    std::unique_ptr<hub::Hub> hub_;
    std::thread thread_;
    std::FILE* log_ = nullptr;
};

}  // namespace dpdb::cli
