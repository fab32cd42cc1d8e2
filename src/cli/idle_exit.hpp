// The on-demand local hub ends by itself once no process has been connected to it for a while:
// nothing of an uninstalled dpdb, or of a debugging session long over, keeps running for good.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cli/hub_locator.hpp"

namespace dpdb::cli {

// Asks the hub for its listing now and then (as a client, on its own socket); once it has listed
// no process and no session for `idle`, sends this process SIGTERM, which ends the hub as `dpdb
// hub --stop` would. Stops asking when destroyed.
class IdleExit {
  public:
    IdleExit(HubTarget hub, std::chrono::seconds idle);
    ~IdleExit();
    IdleExit(const IdleExit&) = delete;
    IdleExit& operator=(const IdleExit&) = delete;

  private:
    void watch();

    HubTarget hub_;
    std::chrono::seconds idle_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace dpdb::cli
