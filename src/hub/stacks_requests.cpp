#include "hub/stacks_requests.hpp"

namespace dpdb::hub {

using wire::Json;

std::int64_t StacksRequests::open(std::uint64_t client, std::int64_t client_request, Json processes,
                                  std::set<std::uint64_t> agents) {
    const auto number = next_number_++;
    requests_[number] = {client, client_request, std::move(agents), std::move(processes),
                         Clock::now() + kTimeout};
    return number;
}

void StacksRequests::answered(std::int64_t number, std::uint64_t agent,
                              const std::function<Json()>& entry) {
    const auto it = requests_.find(number);
    if (it == requests_.end() || it->second.waiting.erase(agent) == 0) return;
    it->second.processes.push_back(entry());
}

void StacksRequests::agent_gone(std::uint64_t agent, const Json& pid) {
    for (auto& [number, request] : requests_) {
        if (request.waiting.erase(agent) > 0) {
            request.processes.push_back({{"pid", pid}, {"error", "exited before answering"}});
        }
    }
}

std::vector<StacksRequests::Finished> StacksRequests::take_finished(
    const std::function<Json(std::uint64_t)>& silent) {
    const auto now = Clock::now();
    std::vector<Finished> finished;
    for (auto it = requests_.begin(); it != requests_.end();) {
        auto& request = it->second;
        if (!request.waiting.empty() && now < request.deadline) {
            ++it;
            continue;
        }
        for (auto agent : request.waiting) {
            Json entry = silent(agent);
            entry["error"] = "no answer within 1 s";
            request.processes.push_back(std::move(entry));
        }
        finished.push_back({request.client, request.client_request, std::move(request.processes)});
        it = requests_.erase(it);
    }
    return finished;
}

}  // namespace dpdb::hub
