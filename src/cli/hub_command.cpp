// dpdb hub: a standalone hub, on the private Unix socket and, if asked, on TCP with TLS. What
// must survive a restart (the secret, the certificate, global breakpoints, the record of exits)
// lives in its state directory.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cli/commands.hpp"
#include "cli/embedded_hub.hpp"
#include "cli/hub_locator.hpp"
#include "cli/hub_lock.hpp"
#include "cli/idle_exit.hpp"
#include "cli/state_dir.hpp"
#include "common/address.hpp"
#include "common/listen_address.hpp"
#include "common/runtime_dir.hpp"
#include "wire/auth.hpp"
#include "wire/channel.hpp"
#include "wire/tls.hpp"

namespace dpdb::cli {
namespace {

// The pid that a hub answering on this socket gives; nullopt if none answers.
std::optional<pid_t> hub_answering(const std::string& socket_path) {
    HubAddress address;
    address.path = socket_path;
    if (!hub_answers(address)) return std::nullopt;
    wire::Channel channel;
    const auto hello = wire::Channel::connect(channel, address, secret_for(address), "client");
    return static_cast<pid_t>(hello.value("pid", 0));
}

// The pid of the hub on this socket: the one that holds its lock, else one from before the lock
// that answers on it; nullopt if none runs.
std::optional<pid_t> hub_on(const std::string& socket_path) {
    if (const auto holder = hub_holding(socket_path)) return holder;
    return hub_answering(socket_path);
}

constexpr auto kStopWait = std::chrono::seconds(10);

int stop_hub(const std::string& socket_path) {
    const auto pid = hub_on(socket_path);
    if (!pid) {
        std::printf("no hub on %s\n", socket_path.c_str());
        return 0;
    }
    if (*pid <= 0 || ::kill(*pid, SIGTERM) != 0) {
        throw std::runtime_error("cannot stop the hub on " + socket_path);
    }
    // Gone once it let go of its lock and its socket, so that a hub started next finds both free.
    const auto deadline = std::chrono::steady_clock::now() + kStopWait;
    while (hub_on(socket_path)) {
        if (std::chrono::steady_clock::now() >= deadline) {
            throw std::runtime_error("the hub on " + socket_path + " (pid " + std::to_string(*pid) +
                                     ") did not stop within 10 s of SIGTERM");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::printf("stopped the hub on %s (pid %d)\n", socket_path.c_str(), *pid);
    return 0;
}

// What to do instead of starting a second hub on a socket that has one.
[[noreturn]] void refuse_second_hub(const std::string& socket_path, pid_t pid) {
    const std::string who = pid > 0 ? " (pid " + std::to_string(pid) + ")" : "";
    throw std::runtime_error(
        "a hub runs already on unix:" + socket_path + who +
        ", perhaps the one `dpdb attach -p` started: use it as it is (`dpdb ls`), or stop it "
        "with `dpdb hub --stop` first (then start this one, with --listen if it should serve "
        "TCP), or give this one a socket of its own with --socket PATH");
}

// The hub that serves the user, for --stop: the one on --socket, else the Unix socket that --hub
// or DPDB_HUB names, else the local one.
std::string socket_to_stop(const HubCommandOptions& options) {
    if (!options.socket_path.empty()) return options.socket_path;
    if (!options.hub.empty()) {
        const auto named = HubAddress::parse(options.hub);
        if (named.kind != HubAddress::Kind::Unix) {
            throw std::runtime_error("--stop stops a hub on this machine, by its Unix socket; " +
                                     options.hub + " is not one (give --socket PATH)");
        }
        return named.path;
    }
    return runtime_dir() + "/hub.sock";
}

}  // namespace

int hub_command(const HubCommandOptions& options) {
    if (options.stop) return stop_hub(socket_to_stop(options));
    const std::string socket_path =
        options.socket_path.empty() ? runtime_dir() + "/hub.sock" : options.socket_path;
    const auto lock = HubLock::take(socket_path);
    if (!lock) refuse_second_hub(socket_path, hub_holding(socket_path).value_or(0));
    if (const auto older = hub_answering(socket_path)) refuse_second_hub(socket_path, *older);
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
        const auto listen = ListenAddress::parse(options.listen);
        config.network.tcp_host = listen.host;
        config.network.tcp_port = listen.port;
        config.network.insecure = options.insecure;
        const bool loopback = listen.is_loopback();
        if (options.insecure) {
            if (!loopback) {
                std::fprintf(stderr,
                             "dpdb hub: WARNING: plain TCP on %s, which is not loopback: anyone "
                             "on that network can read and alter the sessions (--insecure)\n",
                             listen.host.c_str());
            }
            tcp_note = "plain TCP, no TLS";
        } else {
            if (options.tls_cert.empty() != options.tls_key.empty()) {
                throw std::invalid_argument("--tls-cert and --tls-key go together");
            }
            const auto certificate =
                options.tls_cert.empty()
                    ? own_certificate(state, "tls", "dpdb hub")
                    : wire::CertificateFiles{options.tls_cert, options.tls_key};
            config.network.tls_cert = certificate.cert;
            config.network.tls_key = certificate.key;
            tcp_note = "TLS, certificate " + wire::fingerprint_of_file(config.network.tls_cert);
        }
    }
    EmbeddedHub hub(config);
    // What nodes and pods get instead of the secret: it proves the role of a debugged process
    // and nothing more (wire/auth.hpp), so it cannot list, attach to or arm anything.
    const std::string agent_key_path = state + "/agent-key";
    write_private_file(agent_key_path, wire::agent_key(hub.secret()) + "\n");
    std::optional<IdleExit> idle_exit;
    if (options.idle_exit > 0) {
        HubTarget self;
        self.address.path = hub.socket_path();
        self.secret = hub.secret();
        idle_exit.emplace(std::move(self), std::chrono::seconds(options.idle_exit));
    }
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
            "  secret: %s (0600); clients elsewhere need it as DPDB_TOKEN or DPDB_TOKEN_FILE\n",
            config.secret_path.c_str());
        std::printf(
            "  agent key: %s (0600); debugged processes elsewhere need only it, as "
            "DPDB_TOKEN_FILE\n",
            agent_key_path.c_str());
        std::printf("  export DPDB_HUB=%s\n",
                    (tcp_address.empty() ? unix_address : tcp_address).c_str());
    }
    std::fflush(stdout);
    hub.wait_for_signal();
    return 0;
}

}  // namespace dpdb::cli
