#include "cli/embedded_hub.hpp"

#include <unistd.h>

#include <csignal>
#include <ctime>

#include "common/runtime_dir.hpp"
#include "wire/auth.hpp"

namespace dpdb::cli {

EmbeddedHub::EmbeddedHub(const std::string& socket_path, const std::string& name,
                         const std::string& log_path, bool persistent)
    : socket_path_(socket_path), persistent_(persistent) {
    const std::string token_path = token_path_for_socket(socket_path);
    if (persistent) {
        try {
            secret_ = read_private_file(token_path);
        } catch (const std::exception&) {
            secret_.clear();
        }
    }
    if (secret_.size() < 32) {
        secret_ = wire::random_hex(32);
        write_private_file(token_path, secret_ + "\n");
    }
    log_ = log_path.empty() ? stderr : std::fopen(log_path.c_str(), "ae");
    std::FILE* log = log_ != nullptr ? log_ : stderr;
    hub::HubOptions options;
    options.socket_path = socket_path;
    options.secret = secret_;
    options.name = name;
    options.log = [log](const std::string& line) {
        char stamp[32];
        const std::time_t now = std::time(nullptr);
        std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
        std::fprintf(log, "%s dpdb hub: %s\n", stamp, line.c_str());
        std::fflush(log);
    };
    hub_ = std::make_unique<hub::Hub>(io_, options);
    hub_->start();
    thread_ = std::thread([this] { io_.run(); });
}

EmbeddedHub::~EmbeddedHub() {
    hub_->stop();
    // stop() posts the shutdown; let it run, then end the loop.
    asio::post(io_, [this] { io_.stop(); });
    thread_.join();
    ::unlink(socket_path_.c_str());
    if (!persistent_) ::unlink(token_path_for_socket(socket_path_).c_str());
    if (log_ != nullptr && log_ != stderr) std::fclose(log_);
}

void EmbeddedHub::wait_for_signal() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int received = 0;
    sigwait(&set, &received);
}

}  // namespace dpdb::cli
