#include "cli/hub_dialer.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "common/runtime_dir.hpp"

namespace dpdb::cli {
namespace {

constexpr auto kFirstRedial = std::chrono::milliseconds(100);

}  // namespace

struct HubDialer::Shared {
    std::mutex mutex;
    std::condition_variable changed;
    bool stopped = false;
    bool connected = false;
    std::string failure;
    std::unique_ptr<wire::Channel> channel;
};

HubDialer::HubDialer(HubAddress address, std::string secret, std::string secret_file)
    : shared_(std::make_shared<Shared>()) {
    // The thread owns a reference to what it shares with us: it may outlive the dialer while a
    // connect blocks, and is detached for that reason. It reads no environment (the main thread
    // changes it for the program).
    std::thread([shared = shared_, address = std::move(address), secret = std::move(secret),
                 secret_file = std::move(secret_file)] {
        std::minstd_rand random(std::random_device{}());
        auto backoff = std::chrono::milliseconds(kFirstRedial);
        for (;;) {
            auto channel = std::make_unique<wire::Channel>();
            HubTarget target;
            std::string failure;
            try {
                target.address = address;
                target.secret = secret.empty() ? read_private_file(secret_file) : secret;
                connect_client(*channel, target);
            } catch (const std::exception& error) {
                failure = error.what();
            }
            std::unique_lock<std::mutex> lock(shared->mutex);
            if (shared->stopped) return;
            if (failure.empty()) {
                shared->channel = std::move(channel);
                shared->connected = true;
                shared->changed.notify_all();
                return;
            }
            shared->failure = std::move(failure);
            shared->changed.notify_all();
            // Between half the backoff and all of it.
            std::uniform_int_distribution<long> spread(backoff.count() / 2, backoff.count());
            const auto pause = std::chrono::milliseconds(spread(random));
            if (shared->changed.wait_for(lock, pause, [&] { return shared->stopped; })) return;
            backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxRedial);
        }
    }).detach();
}

HubDialer::~HubDialer() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stopped = true;
    shared_->changed.notify_all();
}

bool HubDialer::wait(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    return shared_->changed.wait_for(lock, limit, [this] { return shared_->connected; });
}

bool HubDialer::wait_first_attempt(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(shared_->mutex);
    shared_->changed.wait_for(lock, limit,
                              [this] { return shared_->connected || !shared_->failure.empty(); });
    return shared_->connected;
}

std::string HubDialer::last_failure() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->failure;
}

std::unique_ptr<wire::Channel> HubDialer::take_channel() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return std::move(shared_->channel);
}

}  // namespace dpdb::cli
