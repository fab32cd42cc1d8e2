// A hub on its own thread inside the client process: what `dpdb run` and `dpdb hub` host.
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <thread>

#include "hub/hub.hpp"

namespace dpdb::cli {

class EmbeddedHub {
  public:
    // Listens on socket_path with a secret kept in the 0600 file beside it; logs to log_path, or
    // stderr if empty. A persistent hub reuses and keeps its secret, so that agents and clients
    // can come back after a restart; a private one makes a fresh secret and removes it at the end.
    EmbeddedHub(const std::string& socket_path, const std::string& name,
                const std::string& log_path, bool persistent);
    ~EmbeddedHub();  // stops the hub and removes its socket
    EmbeddedHub(const EmbeddedHub&) = delete;
    EmbeddedHub& operator=(const EmbeddedHub&) = delete;

    const std::string& socket_path() const { return socket_path_; }
    const std::string& secret() const { return secret_; }
    // Blocks until SIGINT or SIGTERM; the caller blocks both before constructing the hub.
    void wait_for_signal();

  private:
    std::string socket_path_;
    std::string secret_;
    asio::io_context io_;
    std::unique_ptr<hub::Hub> hub_;
    std::thread thread_;
    std::FILE* log_ = nullptr;
    bool persistent_;
};

}  // namespace dpdb::cli
