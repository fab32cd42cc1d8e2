#include "cli/embedded_hub.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <ctime>

#include "common/runtime_dir.hpp"
#include "wire/auth.hpp"

namespace dpdb::cli {
namespace {

std::string load_or_create_secret(const std::string& path) {
    if (!path.empty()) {
        try {
            auto secret = read_private_file(path);
            if (secret.size() >= 32) return secret;
        } catch (const std::exception&) {
            // first start: made below
        }
    }
    auto secret = wire::random_hex(32);
    if (!path.empty()) write_private_file(path, secret + "\n");
    return secret;
}

}  // namespace

EmbeddedHub::EmbeddedHub(EmbeddedHubConfig config) : config_(std::move(config)) {
    // One descriptor per process of the job: a thousand workers must not hit the default 1024.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &files);
    }
    secret_ = load_or_create_secret(config_.secret_path);
    if (!config_.socket_path.empty()) {
        write_private_file(token_path_for_socket(config_.socket_path), secret_ + "\n");
    }
    log_ = config_.log_path.empty() ? stderr : std::fopen(config_.log_path.c_str(), "ae");
    std::FILE* log = log_ != nullptr ? log_ : stderr;
    hub::HubOptions options = config_.network;
    options.socket_path = config_.socket_path;
    options.secret = secret_;
    options.name = config_.name;
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
    if (!config_.socket_path.empty()) {
        ::unlink(config_.socket_path.c_str());
        ::unlink(token_path_for_socket(config_.socket_path).c_str());
    }
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
