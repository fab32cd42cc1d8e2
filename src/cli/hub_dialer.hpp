// Dials a hub that `dpdb run` joins (DPDB_HUB, --hub) from a thread of its own, again and again
// until it answers: the program never waits on the debugger, whether the hub is down at the
// start, restarting, or behind a cut network (a connect to a black hole blocks for minutes).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "cli/hub_locator.hpp"
#include "wire/channel.hpp"

namespace dpdb::cli {

class HubDialer {
  public:
    // Starts dialling `address` at once; after a failure, again with backoff (up to kMaxRedial)
    // and jitter, so that the jobs of a cluster do not dial in step. The secret is `secret`, or
    // else the content of `secret_file`, read at every attempt (a Unix-socket hub started later
    // writes its token file then).
    HubDialer(HubAddress address, std::string secret, std::string secret_file);
    // Stops dialling. A connect still under way ends with the process, never holding it up.
    ~HubDialer();
    HubDialer(const HubDialer&) = delete;
    HubDialer& operator=(const HubDialer&) = delete;

    // Waits up to `limit` for a connection; returns whether one was made.
    bool wait(std::chrono::milliseconds limit);
    // The same, but returns as soon as the first attempt failed.
    bool wait_first_attempt(std::chrono::milliseconds limit);
    // Why the last attempt failed (empty before the first has ended).
    std::string last_failure() const;
    // After wait() said true: the connected client channel. The dialer then makes no other
    // connection.
    std::unique_ptr<wire::Channel> take_channel();

    static constexpr auto kMaxRedial = std::chrono::seconds(2);

  private:
    struct Shared;
    std::shared_ptr<Shared> shared_;
};

}  // namespace dpdb::cli
