// `dpdb stacks`: one client request asks many agents at once. Its answer goes back when every
// agent asked has answered or gone, or when its time is up; an agent still silent then is
// listed with why it is missing, so a stuck process never holds the answer back.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::hub {

class StacksRequests {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto kTimeout = std::chrono::seconds(1);

    struct Finished {
        std::uint64_t client;
        std::int64_t client_request;
        wire::Json processes;  // each process's description with "stacks" or "error"
    };

    // A request of `client` (its id `client_request`) to `agents`; `processes` already holds
    // entries for pids that are not here. Returns the number the agents are asked with.
    std::int64_t open(std::uint64_t client, std::int64_t client_request, wire::Json processes,
                      std::set<std::uint64_t> agents);
    // An agent's answer to request `number`, as `entry()` describes it; ignored unless awaited.
    void answered(std::int64_t number, std::uint64_t agent,
                  const std::function<wire::Json()>& entry);
    // The agent's connection dropped: every request waiting for it lists `pid` as gone.
    void agent_gone(std::uint64_t agent, const wire::Json& pid);
    // Takes out every request that is complete or whose time is up; each agent still silent is
    // listed as `silent(agent)` describes it, with the error.
    std::vector<Finished> take_finished(const std::function<wire::Json(std::uint64_t)>& silent);

  private:
    struct Request {
        std::uint64_t client = 0;
        std::int64_t client_request = 0;
        std::set<std::uint64_t> waiting;  // agents that have not answered
        wire::Json processes = wire::Json::array();
        Clock::time_point deadline;
    };
    std::map<std::int64_t, Request> requests_;
    std::int64_t next_number_ = 1;
};

}  // namespace dpdb::hub
