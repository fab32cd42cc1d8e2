// A real Hub on its own io_context thread, in a private folder: what the hub tests drive through
// real sockets.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "hub/hub.hpp"

namespace dpdb::hub::testing {

class RunningHub {
  public:
    // `configure` adds what a test needs (a name, a log) to the socket and secret set here.
    RunningHub(const std::string& prefix, const std::string& secret,
               const std::function<void(HubOptions&)>& configure = {}) {
        std::string pattern = "/tmp/" + prefix + ".XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
        }
        dir_ = pattern;
        HubOptions options;
        options.socket_path = socket_path();
        options.secret = secret;
        // The tests play many processes from this one (pids they make up).
        options.check_claimed_pids = false;
        if (configure) configure(options);
        hub_ = std::make_unique<Hub>(io_, std::move(options));
        hub_->start();
        auto done = std::make_shared<std::promise<void>>();
        io_done_ = done->get_future();
        io_thread_ = std::thread([this, done] {
            io_.run();
            done->set_value();
        });
    }

    // Stops the hub (connections get at most 2 s to flush; a failure past 5 s) and removes
    // its folder.
    ~RunningHub() {
        hub_->stop();
        if (io_done_.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
            ADD_FAILURE() << "the hub did not stop within 5 s";
            io_.stop();
        }
        io_thread_.join();
        hub_.reset();
        ::unlink(socket_path().c_str());
        ::rmdir(dir_.c_str());
    }

    RunningHub(const RunningHub&) = delete;
    RunningHub& operator=(const RunningHub&) = delete;

    std::string socket_path() const { return dir_ + "/hub.sock"; }
    int tcp_port() const { return hub_->tcp_port(); }

  private:
    asio::io_context io_;
    std::unique_ptr<Hub> hub_;
    std::thread io_thread_;
    std::future<void> io_done_;
    std::string dir_;
};

}  // namespace dpdb::hub::testing
