// dpdb logs: the logpoint messages a hub keeps, merged across processes in time order; --follow
// prints them as they come, --trace-events writes them for a trace viewer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/describe.hpp"
#include "cli/hub_locator.hpp"
#include "cli/log_lines.hpp"
#include "common/printable.hpp"

namespace dpdb::cli {
namespace {

constexpr int kAnswerTimeoutMs = 10000;
constexpr std::int64_t kAskedAtMost = 100000;  // what a hub keeps
// --follow holds what arrives this long, so that messages from processes whose batches arrive in
// another order than they were written print in time order.
constexpr auto kReorderWindow = std::chrono::milliseconds(500);
constexpr int kTickMs = 100;
constexpr auto kReconnectPause = std::chrono::milliseconds(500);

void print_line(const wire::Json& entry, bool json) {
    const auto text = json ? entry.dump(-1, ' ', false, wire::Json::error_handler_t::replace)
                           : log_line_text(entry);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
}

bool before(const wire::Json& a, const wire::Json& b) {
    const auto ta = a.value("time", 0.0);
    const auto tb = b.value("time", 0.0);
    if (ta != tb) return ta < tb;
    return a.value("seq", std::int64_t{0}) < b.value("seq", std::int64_t{0});
}

bool wanted(const wire::Json& entry, const std::set<std::int64_t>& pids) {
    if (pids.empty()) return true;
    const auto pid = entry.value("pid", wire::Json());
    return pid.is_number_integer() && pids.count(pid.get<std::int64_t>()) != 0;
}

// What one hub keeps, asked on a channel of ours.
wire::Json kept_on(wire::Channel& channel, const HubTarget& target, const wire::Json& pids) {
    const auto result = ask_on(channel, target, "logs", {{"pids", pids}, {"limit", kAskedAtMost}},
                               "result", kAnswerTimeoutMs);
    if (result.type != "result") throw std::runtime_error(result.str("message"));
    return result["data"].value("messages", wire::Json::array());
}

// Every message of every hub, oldest first.
wire::Json kept_messages(const std::vector<HubTarget>& targets, const wire::Json& pids) {
    wire::Json all = wire::Json::array();
    for (const auto& target : targets) {
        wire::Channel channel;
        connect_client(channel, target);
        for (auto& entry : kept_on(channel, target, pids)) all.push_back(std::move(entry));
    }
    std::stable_sort(all.begin(), all.end(), before);
    return all;
}

// The messages the hub passes on as they come, in time order within kReorderWindow, until the
// hub goes away (its error is returned) or the user stops it (Ctrl-C).
std::string follow_channel(wire::Channel& events, const std::set<std::int64_t>& pids,
                           std::int64_t& seen, bool json) {
    using Clock = std::chrono::steady_clock;
    std::vector<std::pair<Clock::time_point, wire::Json>> held;
    // Printed by the catch-up already. Not raised as messages go out: the hub numbers a message
    // when it stores it, and passes on batches of several processes in any order.
    const std::int64_t caught_up = seen;
    std::string lost;
    while (lost.empty() || !held.empty()) {
        std::optional<wire::Message> message;
        if (lost.empty()) {
            try {
                message = events.receive(kTickMs);
            } catch (const std::exception& error) {
                lost = error.what();  // what is held still goes out, in order
            }
        }
        if (message && message->type == "event" && message->str("kind") == "log") {
            const auto& entry = (*message)["data"];
            if (entry.value("seq", std::int64_t{0}) > caught_up && wanted(entry, pids)) {
                held.emplace_back(Clock::now(), entry);
            }
        }
        const auto due = lost.empty() ? Clock::now() - kReorderWindow : Clock::time_point::max();
        std::vector<wire::Json> ready;
        for (auto it = held.begin(); it != held.end();) {
            if (it->first > due) {
                ++it;
                continue;
            }
            ready.push_back(std::move(it->second));
            it = held.erase(it);
        }
        std::stable_sort(ready.begin(), ready.end(), before);
        for (const auto& entry : ready) {
            print_line(entry, json);
            seen = std::max(seen, entry.value("seq", std::int64_t{0}));
        }
        if (!ready.empty()) std::fflush(stdout);
    }
    return lost;
}

// Prints what the hub kept past `seen`. Asked on the subscribed channel itself, after the
// subscription: the hub serves one connection in order, so every message it stores after that
// answer comes as an event, and those that came as events before it are in the answer too.
void catch_up(wire::Channel& events, const HubTarget& target, const wire::Json& pids,
              std::int64_t& seen, bool json) {
    connect_client(events, target);
    events.send(wire::make("subscribe"));
    auto kept = kept_on(events, target, pids);
    std::stable_sort(kept.begin(), kept.end(), before);
    // Printed before, on an earlier connection. Not raised as lines go out: they go in time
    // order, and a process's batch stored earlier (a lower number) can hold later times.
    const std::int64_t printed = seen;
    for (const auto& entry : kept) {
        if (entry.value("seq", std::int64_t{0}) <= printed) continue;
        print_line(entry, json);
        seen = std::max(seen, entry.value("seq", std::int64_t{0}));
    }
    std::fflush(stdout);
}

// As `tail -F` does with a file: a hub that restarts (its messages survive in its state
// directory) is followed again where it left off, for as long as the user waits.
int follow(const std::string& hub, const wire::Json& pids, const std::set<std::int64_t>& pid_set,
           bool json) {
    std::int64_t seen = 0;
    bool away = false;
    for (;;) {
        wire::Channel events;
        try {
            catch_up(events, locate_hubs(hub).front(), pids, seen, json);
        } catch (const std::exception&) {
            std::this_thread::sleep_for(kReconnectPause);
            continue;
        }
        if (away) std::fprintf(stderr, "dpdb: the hub is back; following it again\n");
        const auto lost = follow_channel(events, pid_set, seen, json);
        std::fprintf(stderr,
                     "dpdb: lost the hub (%s); waiting for it to come back (Ctrl-C stops)\n",
                     lost.c_str());
        away = true;
    }
}

}  // namespace

int logs_command(const std::string& hub, const LogsOptions& options) {
    wire::Json pids = wire::Json::array();
    std::set<std::int64_t> pid_set;
    for (const auto& pid : options.pids) {
        try {
            std::size_t used = 0;
            const auto value = std::stoll(pid, &used);
            if (used != pid.size()) throw std::invalid_argument(pid);
            pids.push_back(value);
            pid_set.insert(value);
        } catch (const std::exception&) {
            std::fprintf(stderr, "dpdb: \"%s\" is not a pid\n", pid.c_str());
            return 2;
        }
    }
    if (options.follow && !options.trace_events.empty()) {
        std::fprintf(stderr, "dpdb: --trace-events writes what is kept; it cannot --follow\n");
        return 2;
    }
    const auto targets = locate_hubs(hub);
    if (options.follow) {
        if (targets.size() > 1) {
            std::fprintf(stderr,
                         "dpdb: several hubs are running; say which to follow with --hub\n");
            return 2;
        }
        return follow(targets.front().address.to_string(), pids, pid_set, options.json);
    }
    const auto kept = kept_messages(targets, pids);
    if (!options.trace_events.empty()) {
        const auto trace = trace_events(kept);
        std::ofstream out(options.trace_events, std::ios::trunc);
        out << trace.dump(-1, ' ', false, wire::Json::error_handler_t::replace) << "\n";
        out.close();
        if (!out) {
            std::fprintf(stderr, "dpdb: cannot write %s\n", options.trace_events.c_str());
            return 2;
        }
        std::printf("%zu messages from %zu processes written to %s\n", kept.size(),
                    trace["otherData"]["processes"].get<std::size_t>(),
                    options.trace_events.c_str());
        return 0;
    }
    for (const auto& entry : kept) print_line(entry, options.json);
    std::fflush(stdout);
    return 0;
}

std::string log_line_text(const wire::Json& entry) {
    const double time = entry.value("time", 0.0);
    const auto seconds = static_cast<std::time_t>(std::floor(time));
    const int millis = static_cast<int>((time - std::floor(time)) * 1000.0);
    std::tm local{};
    localtime_r(&seconds, &local);
    char clock[32];
    std::snprintf(clock, sizeof clock, "%02d:%02d:%02d.%03d", local.tm_hour, local.tm_min,
                  local.tm_sec, millis);
    std::string line = clock;
    // Everything but the clock came from a debugged process (the text may quote what a request
    // carried): escaped, so that a terminal runs no sequence of theirs.
    const auto host = entry.value("host", wire::Json());
    if (host.is_string()) line += " " + shown(host.get<std::string>());
    line += " pid " + entry.value("pid", wire::Json()).dump();
    if (const auto tags = tags_of(entry); !tags.empty()) line += " [" + tags + "]";
    line += " " + shown(entry.value("thread", std::string("?"))) + ": ";
    line += shown(entry.value("text", std::string()));
    return line;
}

wire::Json trace_events(const wire::Json& messages) {
    wire::Json events = wire::Json::array();
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> tracks;  // (host, pid) -> pid
    std::set<std::int64_t> used;
    std::set<std::pair<std::int64_t, std::int64_t>> threads;
    const double start = messages.empty() ? 0.0 : messages.front().value("time", 0.0);
    for (const auto& entry : messages) {
        const auto host = entry.value("host", std::string());
        const auto pid = entry.value("pid", std::int64_t{0});
        auto track = tracks.find({host, pid});
        if (track == tracks.end()) {
            // The same pid on two hosts is two processes: the second gets a number of its own.
            std::int64_t number = pid;
            while (used.count(number) != 0) number += 10000000;
            used.insert(number);
            track = tracks.emplace(std::make_pair(host, pid), number).first;
            std::string name = "pid " + std::to_string(pid) + (host.empty() ? "" : " on " + host);
            if (const auto tags = tags_of(entry); !tags.empty()) name += " [" + tags + "]";
            events.push_back({{"ph", "M"},
                              {"name", "process_name"},
                              {"pid", number},
                              {"tid", 0},
                              {"args", {{"name", name}}}});
        }
        const auto tid = entry.value("tid", std::int64_t{0});
        if (threads.insert({track->second, tid}).second) {
            events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", track->second},
                              {"tid", tid},
                              {"args", {{"name", entry.value("thread", std::string("?"))}}}});
        }
        wire::Json args = {{"time", entry.value("time", 0.0)},
                           {"host", host},
                           {"pid", pid},
                           {"thread", entry.value("thread", std::string("?"))},
                           {"tags", entry.value("tags", wire::Json::object())}};
        for (const char* field : {"bp", "dropped", "process_name"}) {
            if (entry.contains(field)) args[field] = entry[field];
        }
        events.push_back({{"name", entry.value("text", std::string())},
                          {"ph", "i"},
                          {"s", "t"},
                          {"ts", std::round((entry.value("time", 0.0) - start) * 1e6)},
                          {"pid", track->second},
                          {"tid", tid},
                          {"args", std::move(args)}});
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"generator", "dpdb logs"}, {"processes", tracks.size()}}}};
}

}  // namespace dpdb::cli
