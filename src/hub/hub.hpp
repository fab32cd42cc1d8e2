// The hub: accepts agents and clients on a Unix socket and optionally TCP (TLS unless insecure),
// keeps the registry of processes and paused sessions, routes each session's console between its
// agent and the attached client, and pushes registry changes to subscribed clients.
//
// Everything runs on one Asio io_context thread, so the registry needs no locks; other threads
// talk to the hub only through its sockets (or Hub::stop(), which posts onto that thread).
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dpdb::hub {

struct HubOptions {
    std::string socket_path;  // Unix socket to listen on (its directory must be private), or none
    std::string tcp_host;     // TCP address to listen on when tcp_port >= 0 (0: any free port)
    int tcp_port = -1;
    std::string tls_cert;  // PEM files for TCP; both required unless insecure
    std::string tls_key;
    bool insecure = false;                // plain TCP
    std::string store_path = ":memory:";  // SQLite file for what survives a restart
    std::string secret;                   // the shared secret every peer must prove it holds
    std::string name;                     // shown to clients ("run 1234", "hub")
    std::function<void(const std::string&)> log;  // one line per call
    // An agent on the Unix socket is listed under the pid the kernel gives its connection
    // (hub/local_process: agree_on_pid). Off only for tests that play many processes from one.
    bool check_claimed_pids = true;
    // dpdb run's hub: the processes below this one (the job it runs) may be agents, never
    // clients, whatever file of the user's they read the secret from (0: no such rule).
    std::int64_t job_parent = 0;
    // Select ALPN dpdb/2 (wire/tls.hpp: the early hello) for TLS 1.3 peers that offer it. Off
    // only for tests that play an older hub.
    bool early_hello = true;
};

class HubImpl;

class Hub {
  public:
    Hub(asio::io_context& io, HubOptions options);
    ~Hub();
    Hub(const Hub&) = delete;
    Hub& operator=(const Hub&) = delete;

    // Binds and listens; throws std::system_error if a socket cannot be bound,
    // std::invalid_argument for TCP without TLS material (and without insecure), and
    // std::runtime_error for TLS material that cannot be used.
    void start();
    int tcp_port() const;  // the bound TCP port, or -1
    // Closes the listener and every connection; safe from any thread.
    void stop();

  private:
    std::shared_ptr<HubImpl> impl_;
};

}  // namespace dpdb::hub
