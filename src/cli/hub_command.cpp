// dpdb hub: a standalone hub, on the private Unix socket and, if asked, on TCP with TLS. What
// must survive a restart (the secret, the certificate, global breakpoints, the record of exits)
// lives in its state directory.
#include <sys/stat.h>
#include <unistd.h>

#include <asio.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/embedded_hub.hpp"
#include "cli/hub_locator.hpp"
#include "common/address.hpp"
#include "common/runtime_dir.hpp"
#include "wire/channel.hpp"
#include "wire/tls.hpp"

namespace dpdb::cli {
namespace {

std::string default_state_dir() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
        return std::string(state) + "/dpdb/hub";
    }
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home != '/') throw std::runtime_error("set HOME or --state-dir");
    return std::string(home) + "/.local/state/dpdb/hub";
}

void make_private_dir(const std::string& dir) {
    for (std::size_t i = 1; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0700);
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
        throw std::runtime_error("cannot use " + dir + " as the hub's state directory");
    }
    ::chmod(dir.c_str(), 0700);
}

// "HOST:PORT" or "[V6]:PORT".
std::pair<std::string, int> split_listen(const std::string& listen) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        throw std::invalid_argument("--listen wants HOST:PORT, not \"" + listen + "\"");
    }
    std::string host = listen.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    int port = -1;
    try {
        port = std::stoi(listen.substr(colon + 1));
    } catch (const std::exception&) {
    }
    if (port < 0 || port > 65535) throw std::invalid_argument("--listen has no valid port");
    asio::error_code ec;
    asio::ip::make_address(host, ec);
    if (ec) throw std::invalid_argument("--listen wants an IP address, not \"" + host + "\"");
    return {host, port};
}

int stop_hub(const std::string& socket_path) {
    HubAddress address;
    address.path = socket_path;
    if (::access(socket_path.c_str(), F_OK) != 0) {
        std::printf("no hub on %s\n", socket_path.c_str());
        return 0;
    }
    wire::Channel channel;
    const auto hub = wire::Channel::connect(channel, address, secret_for(address), "client");
    const auto pid = hub.value("pid", 0);
    if (pid <= 0 || ::kill(pid, SIGTERM) != 0) {
        throw std::runtime_error("cannot stop the hub on " + socket_path);
    }
    std::printf("stopped the hub on %s (pid %d)\n", socket_path.c_str(), pid);
    return 0;
}

}  // namespace

int hub_command(const HubCommandOptions& options) {
    const std::string socket_path =
        options.socket_path.empty() ? runtime_dir() + "/hub.sock" : options.socket_path;
    if (options.stop) return stop_hub(socket_path);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    const std::string state = options.state_dir.empty() ? default_state_dir() : options.state_dir;
    make_private_dir(state);
    EmbeddedHubConfig config;
    config.socket_path = socket_path;
    config.name = "hub " + std::to_string(::getpid());
    config.secret_path = state + "/secret";
    config.network.store_path = state + "/hub.sqlite";

    std::string tcp_note;
    if (!options.listen.empty()) {
        const auto [host, port] = split_listen(options.listen);
        config.network.tcp_host = host;
        config.network.tcp_port = port;
        config.network.insecure = options.insecure;
        const bool loopback = asio::ip::make_address(host).is_loopback();
        if (options.insecure) {
            if (!loopback) {
                std::fprintf(stderr,
                             "dpdb hub: WARNING: plain TCP on %s, which is not loopback: anyone "
                             "on that network can read and alter the sessions (--insecure)\n",
                             host.c_str());
            }
            tcp_note = "plain TCP, no TLS";
        } else {
            if (options.tls_cert.empty() != options.tls_key.empty()) {
                throw std::invalid_argument("--tls-cert and --tls-key go together");
            }
            config.network.tls_cert =
                options.tls_cert.empty() ? state + "/tls-cert.pem" : options.tls_cert;
            config.network.tls_key =
                options.tls_key.empty() ? state + "/tls-key.pem" : options.tls_key;
            if (options.tls_cert.empty() && ::access(config.network.tls_cert.c_str(), R_OK) != 0) {
                wire::generate_self_signed(config.network.tls_cert, config.network.tls_key,
                                           "dpdb hub");
            }
            tcp_note = "TLS, certificate " + wire::fingerprint_of_file(config.network.tls_cert);
        }
    }
    EmbeddedHub hub(config);
    const std::string unix_address = "unix:" + config.socket_path;
    std::string tcp_address;
    if (hub.tcp_port() >= 0) {
        const auto& host = config.network.tcp_host;
        tcp_address = "tcp://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                      ":" + std::to_string(hub.tcp_port());
    }
    if (options.quiet) {
        std::printf("%s\n", unix_address.c_str());
        if (!tcp_address.empty()) std::printf("%s\n", tcp_address.c_str());
    } else {
        std::printf("dpdb hub listening on %s\n", unix_address.c_str());
        if (!tcp_address.empty()) {
            std::printf("                  and %s (%s)\n", tcp_address.c_str(), tcp_note.c_str());
        }
        std::printf(
            "  secret: %s (0600); agents and clients elsewhere need it as DPDB_TOKEN or "
            "DPDB_TOKEN_FILE\n",
            config.secret_path.c_str());
        std::printf("  export DPDB_HUB=%s\n",
                    (tcp_address.empty() ? unix_address : tcp_address).c_str());
    }
    std::fflush(stdout);
    hub.wait_for_signal();
    return 0;
}

}  // namespace dpdb::cli
