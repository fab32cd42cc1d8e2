// bench/hub_scale: one real hub (the `dpdb hub` executable, its own process) under a growing
// number of agents (1,000, 2,000, 4,000, then AGENTS) and SESSIONS paused sessions, driven through
// the real protocol by in-process agents and clients. At each size it measures the hub's memory,
// the `summarize` and whole `list` round trips of an in-process client, and the real `dpdb ls`
// (the summary) and `dpdb ls --json` (everything) commands, process start included; at the
// largest, the console round trip through the hub, the time from a breakpoint hit to the
// notification at a subscribed client, and how long the hub takes to record the end of every
// process when they all hang up at once; and at scale, the time from the real `dpdb break` to
// every agent having armed it (the command's "armed in N" line), and from every agent pausing at
// once to a subscriber having heard every pause and the hub listing them all. Prints markdown
// tables.
//
// The agents look like a training job: eight processes per host, tags RANK, LOCAL_RANK,
// WORLD_SIZE and a role.
//
//   hub_scale DPDB_EXECUTABLE [AGENTS=10000] [SESSIONS=100]
//
// The hub ends with the benchmark, whatever happens (hub_process.hpp).
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/address.hpp"
#include "common/runtime_dir.hpp"
#include "hub_process.hpp"
#include "wire/channel.hpp"

using Clock = std::chrono::steady_clock;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;
using dpdb::wire::Message;

namespace {

constexpr int kAnswerMs = 10000;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<std::size_t>(p * values.size()))];
}

double median(const std::vector<double>& values) {
    return percentile(values, 0.5);
}

long rss_kib(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string key;
    long value = 0;
    while (status >> key) {
        if (key == "VmRSS:") {
            status >> value;
            return value;
        }
    }
    return -1;
}

// The next message of this type, skipping others; an "error" from the hub ends the benchmark.
Message expect(Channel& channel, const std::string& type) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(kAnswerMs);
    while (Clock::now() < deadline) {
        auto message = channel.receive(1000);
        if (!message) continue;
        if (message->type == type) return *message;
        if (message->type == "error") {
            throw std::runtime_error("the hub answered an error: " + message->str("message"));
        }
    }
    throw std::runtime_error("no " + type + " message within " + std::to_string(kAnswerMs) + " ms");
}

struct Listing {
    std::size_t processes = 0;
    std::size_t sessions = 0;
    int pages = 0;
};

// A whole listing: its pages (each the next slice, all but the last marked "more") counted.
Listing list(Channel& client, std::int64_t id) {
    client.send(make("list", {{"id", id}}));
    Listing listing;
    for (;;) {
        const auto page = expect(client, "listing");
        if (page.num("id") != id) continue;
        listing.processes += page["processes"].size();
        listing.sessions += page["sessions"].size();
        ++listing.pages;
        if (!page.has("more")) return listing;
    }
}

Message summarize(Channel& client, std::int64_t id) {
    client.send(make("summarize", {{"id", id}}));
    for (;;) {
        auto summary = expect(client, "summary");
        if (summary.num("id") == id) return summary;
    }
}

void raise_file_limit() {
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
}

Json agent_description(int i, int agents) {
    char host[32];
    std::snprintf(host, sizeof(host), "node%04d", i / 8);
    return {{"pid", 100000 + i},
            {"ppid", 99999},
            {"host", host},
            {"argv", {"python", "/srv/job/train.py", "--rank", std::to_string(i)}},
            {"python", "3.12.1"},
            {"tags",
             {{"RANK", std::to_string(i)},
              {"LOCAL_RANK", std::to_string(i % 8)},
              {"WORLD_SIZE", std::to_string(agents)},
              {"role", i % 100 == 0 ? "loader" : "trainer"}}}};
}

// Everything the hub sent the agents so far read and dropped, so that what comes next is an
// answer to what the benchmark does.
void drain(std::vector<std::unique_ptr<Channel>>& agents) {
    for (auto& agent : agents) {
        while (agent->receive(0)) {
        }
    }
}

// Plays every agent's part in arming: each answers the hub's next non-empty breakpoint list
// with every breakpoint of it armed (what the Python agent's break_status says), as its
// message arrives, all agents waited on at once.
void arm_everywhere(std::vector<std::unique_ptr<Channel>>& agents) {
    std::vector<pollfd> fds;
    for (auto& agent : agents) fds.push_back({agent->fd(), POLLIN, 0});
    std::vector<bool> armed(agents.size(), false);
    std::size_t left = agents.size();
    const auto deadline = Clock::now() + std::chrono::milliseconds(4 * kAnswerMs);
    while (left > 0) {
        if (Clock::now() > deadline) {
            throw std::runtime_error(std::to_string(left) + " agents never got the breakpoint");
        }
        if (::poll(fds.data(), fds.size(), 1000) <= 0) continue;
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].revents == 0 || armed[i]) continue;
            while (auto message = agents[i]->receive(0)) {
                if (message->type != "breakpoints" || (*message)["list"].empty()) continue;
                Json ids = Json::array();
                for (const auto& bp : (*message)["list"]) ids.push_back(bp["id"]);
                agents[i]->send(
                    make("break_status", {{"resolved", ids}, {"version", (*message)["version"]}}));
                armed[i] = true;
                --left;
                fds[i].events = 0;
                break;
            }
        }
    }
}

struct Step {
    int agents = 0;
    int connected = 0;  // agents connected for this step
    double connect_ms = 0;
    long rss_kib = 0;
    double summarize_ms = 0;
    double list_ms = 0;
    int list_pages = 0;
    double ls_median = 0, ls_p99 = 0;
    double json_median = 0, json_p99 = 0;
};

// `dpdb ARGS... --hub unix:SOCKET`, `rounds` times: the median and p99 in ms, and its output.
std::pair<double, double> time_command(const std::string& dpdb, const std::string& socket,
                                       std::vector<std::string> args, int rounds,
                                       std::string& output, const std::string& errors) {
    std::vector<std::string> argv = {dpdb};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--hub");
    argv.push_back("unix:" + socket);
    std::vector<double> times;
    for (int round = 0; round < rounds; ++round) {
        const auto start = Clock::now();
        const int status = hub_scale::run_captured(argv, output, errors);
        times.push_back(ms_since(start));
        if (status != 0) {
            throw std::runtime_error("dpdb " + args.front() + " failed with status " +
                                     std::to_string(status) + " (see " + errors + ")");
        }
    }
    return {median(times), percentile(times, 0.99)};
}

int bench(hub_scale::HubProcess& hub, const std::string& dpdb, const std::string& dir, int agents,
          int sessions) {
    const std::string socket_path = dir + "/hub.sock";
    const auto address = dpdb::HubAddress::parse(socket_path);
    std::string secret;
    for (int i = 0; i < 250 && secret.empty(); ++i) {
        try {
            secret = dpdb::read_private_file(dpdb::token_path_for_socket(socket_path));
            if (::access(socket_path.c_str(), F_OK) != 0) secret.clear();
        } catch (const std::exception&) {
        }
        if (secret.empty()) ::usleep(20000);
        if (hub.ended()) throw std::runtime_error("the hub ended as it started");
    }
    if (secret.empty()) throw std::runtime_error("the hub did not start within 5 s");
    ::setenv("DPDB_TOKEN", secret.c_str(), 1);
    ::usleep(100000);
    const long rss_idle = rss_kib(hub.pid());
    const std::string errors = dir + "/dpdb-errors.log";

    std::vector<int> sizes;
    for (int size : {1000, 2000, 4000}) {
        if (size < agents) sizes.push_back(size);
    }
    sizes.push_back(agents);

    // Each agent a real authenticated connection that says who it is; the first `sessions` of
    // them paused.
    std::vector<std::unique_ptr<Channel>> agent_channels;
    Channel client;
    Channel::connect(client, address, secret, "client");
    std::vector<Step> steps;
    std::int64_t request = 0;
    std::string ls_output;
    for (int size : sizes) {
        Step step;
        step.agents = size;
        const auto connect_start = Clock::now();
        while (static_cast<int>(agent_channels.size()) < size) {
            const int i = static_cast<int>(agent_channels.size());
            auto channel = std::make_unique<Channel>();
            Channel::connect(*channel, address, secret, "agent", agent_description(i, agents));
            if (i < sessions) {
                channel->send(make("session_open", {{"sid", 1},
                                                    {"info",
                                                     {{"thread", "MainThread"},
                                                      {"tid", 1},
                                                      {"file", "/srv/job/train.py"},
                                                      {"line", 42 + i % 3},
                                                      {"function", "step"}}}}));
            }
            agent_channels.push_back(std::move(channel));
        }
        step.connect_ms = ms_since(connect_start);
        step.connected = size - (steps.empty() ? 0 : steps.back().agents);
        // Agents and the client reach the hub on different connections: wait until it has
        // every agent and session.
        const auto deadline = Clock::now() + std::chrono::milliseconds(kAnswerMs);
        for (;;) {
            const auto summary = summarize(client, ++request);
            if (summary.num("processes") == size &&
                summary.num("sessions") == std::min(size, sessions)) {
                break;
            }
            if (Clock::now() > deadline) throw std::runtime_error("the hub never had them all");
            ::usleep(10000);
        }
        step.rss_kib = rss_kib(hub.pid());
        std::vector<double> summarize_ms, list_ms;
        for (int round = 0; round < 50; ++round) {
            const auto start = Clock::now();
            summarize(client, ++request);
            summarize_ms.push_back(ms_since(start));
        }
        for (int round = 0; round < 10; ++round) {
            const auto start = Clock::now();
            const auto listing = list(client, ++request);
            list_ms.push_back(ms_since(start));
            if (listing.processes != static_cast<std::size_t>(size)) {
                throw std::runtime_error("a listing held " + std::to_string(listing.processes) +
                                         " of " + std::to_string(size) + " processes");
            }
            step.list_pages = listing.pages;
        }
        step.summarize_ms = median(summarize_ms);
        step.list_ms = median(list_ms);
        std::string json;
        std::tie(step.ls_median, step.ls_p99) =
            time_command(dpdb, socket_path, {"ls"}, 20, ls_output, errors);
        std::tie(step.json_median, step.json_p99) =
            time_command(dpdb, socket_path, {"ls", "--json"}, 5, json, errors);
        if (json.find("\"processes\"") == std::string::npos) {
            throw std::runtime_error("dpdb ls --json printed no listing");
        }
        steps.push_back(step);
        std::fprintf(stderr, "hub_scale: %d agents measured\n", size);
    }

    // Console round trip: the client's line reaches the agent through the hub, the agent's
    // output comes back the same way.
    std::vector<double> round_trip_ms;
    if (sessions > 0) {
        client.send(make("attach", {{"sid", 1}, {"cols", 80}}));
        expect(client, "attached");
        Channel& paused = *agent_channels[0];
        expect(paused, "attach");
        for (int round = 0; round < 2000; ++round) {
            const auto start = Clock::now();
            client.send(make("input", {{"sid", 1}, {"line", "p x"}}));
            const auto input = expect(paused, "input");
            paused.send(make("output", {{"sid", 1}, {"text", input.str("line") + " = 42\n"}}));
            expect(client, "output");
            round_trip_ms.push_back(ms_since(start));
        }
    }

    // Breakpoint hit to notification: an agent opens a session, a subscriber hears of it.
    Channel subscriber;
    Channel::connect(subscriber, address, secret, "client");
    subscriber.send(make("subscribe"));
    std::vector<double> notify_ms;
    Channel& hitting = *agent_channels[agents - 1];
    for (int round = 0; round < 200; ++round) {
        const auto start = Clock::now();
        hitting.send(
            make("session_open",
                 {{"sid", 1000 + round}, {"info", {{"file", "/srv/job/train.py"}, {"line", 7}}}}));
        for (;;) {
            const auto event = expect(subscriber, "event");
            if (event.str("kind") == "session_open") break;
        }
        notify_ms.push_back(ms_since(start));
        hitting.send(make("session_close", {{"sid", 1000 + round}, {"reason", "continued"}}));
    }

    // Arming at scale: the real `dpdb break` until it prints where the breakpoint is armed,
    // which it does once every process has answered the new list.
    drain(agent_channels);
    std::string break_output;
    const auto arm_start = Clock::now();
    std::thread arming([&] { arm_everywhere(agent_channels); });
    const int break_status = hub_scale::run_captured(
        {dpdb, "break", "/srv/job/train.py:42", "--hub", "unix:" + socket_path}, break_output,
        errors);
    const double break_ms = ms_since(arm_start);
    arming.join();
    if (break_status != 0) throw std::runtime_error("dpdb break failed (see " + errors + ")");

    // Pausing at scale: every agent opens a session at once; timed until the subscriber has
    // heard every one, and until the hub's summary (what `dpdb ls` shows) counts them all.
    drain(agent_channels);
    const auto pause_start = Clock::now();
    for (int i = 0; i < agents; ++i) {
        agent_channels[i]->send(
            make("session_open",
                 {{"sid", 5000}, {"info", {{"file", "/srv/job/train.py"}, {"line", 42}}}}));
    }
    const double pause_sent_ms = ms_since(pause_start);
    int heard = 0;
    while (heard < agents) {
        const auto event = expect(subscriber, "event");
        if (event.str("kind") == "session_open") ++heard;
    }
    const double pause_heard_ms = ms_since(pause_start);
    const auto pause_deadline = pause_start + std::chrono::milliseconds(4 * kAnswerMs);
    while (summarize(client, ++request).num("sessions") < sessions + agents) {
        if (Clock::now() > pause_deadline)
            throw std::runtime_error("the pauses were never all listed");
    }
    const double pause_listed_ms = ms_since(pause_start);
    std::string pause_ls;
    std::vector<std::string> ls_argv = {dpdb, "ls", "--hub", "unix:" + socket_path};
    const auto pause_ls_start = Clock::now();
    hub_scale::run_captured(ls_argv, pause_ls, errors);
    const double pause_ls_ms = ms_since(pause_ls_start);

    // The job ends: every agent hangs up at once, and the hub records how each ended. Timed
    // until a listing is empty.
    const auto leave_start = Clock::now();
    agent_channels.clear();
    const auto leave_deadline = leave_start + std::chrono::seconds(120);
    while (summarize(client, ++request).num("processes") > 0) {
        if (Clock::now() > leave_deadline) {
            throw std::runtime_error("the hub still had processes 120 s after they all left");
        }
        ::usleep(10000);
    }
    const double leave_ms = ms_since(leave_start);

    std::printf("## hub_scale: up to %d agents, %d paused sessions, one hub\n\n", agents, sessions);
    std::printf("hub RSS idle: %.1f MiB\n\n", rss_idle / 1024.0);
    std::printf(
        "| agents | connect | hub RSS | per agent | `summarize` | `list` (pages) | `dpdb ls` "
        "median / p99 | `dpdb ls --json` median / p99 |\n|---|---|---|---|---|---|---|---|\n");
    for (const auto& s : steps) {
        std::printf(
            "| %d | %.2f ms each | %.1f MiB | %.1f KiB | %.2f ms | %.1f ms (%d) | %.1f / %.1f ms "
            "| %.1f / %.1f ms |\n",
            s.agents, s.connect_ms / std::max(1, s.connected), s.rss_kib / 1024.0,
            static_cast<double>(s.rss_kib - rss_idle) / s.agents, s.summarize_ms, s.list_ms,
            s.list_pages, s.ls_median, s.ls_p99, s.json_median, s.json_p99);
    }
    std::printf("\nTarget: `dpdb ls` under 100 ms at 10,000 agents.\n\n");
    if (!round_trip_ms.empty()) {
        std::printf("console round trip through the hub, median / p99: %.3f / %.3f ms (< 2 ms)\n",
                    median(round_trip_ms), percentile(round_trip_ms, 0.99));
    }
    std::printf("breakpoint hit to notification, median / p99: %.3f / %.3f ms\n", median(notify_ms),
                percentile(notify_ms, 0.99));
    std::printf("%d agents hang up at once: the hub has recorded every exit after %.0f ms\n\n",
                agents, leave_ms);
    std::printf("`dpdb break` to every one of %d agents armed: %.0f ms, printing:\n%s\n", agents,
                break_ms, break_output.c_str());
    std::printf(
        "%d agents pause at once: sent in %.0f ms, a subscriber has heard every pause after %.0f "
        "ms, the summary counts them all after %.0f ms; a `dpdb ls` then: %.0f ms\n\n",
        agents, pause_sent_ms, pause_heard_ms, pause_listed_ms, pause_ls_ms);
    std::printf("`dpdb ls` with every agent paused:\n\n```\n%s```\n\n", pause_ls.c_str());
    std::printf("`dpdb ls` at %d agents:\n\n```\n%s```\n", agents, ls_output.c_str());
    hub.stop();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DPDB_EXECUTABLE [AGENTS=10000] [SESSIONS=100]\n", argv[0]);
        return 2;
    }
    const std::string dpdb = argv[1];
    const int agents = std::max(1, argc > 2 ? std::atoi(argv[2]) : 10000);
    const int sessions = std::max(0, std::min(agents, argc > 3 ? std::atoi(argv[3]) : 100));
    // Before any thread: every thread inherits the mask, and only the signal thread takes them.
    const sigset_t stop = hub_scale::stop_signals();
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    raise_file_limit();

    char dir_template[] = "/tmp/dpdb-hub-scale.XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) {
        std::perror("hub_scale: mkdtemp");
        return 1;
    }
    const std::string dir = dir_template;
    hub_scale::HubProcess hub(dpdb, dir);
    hub_scale::stop_on_signal(hub);
    try {
        return bench(hub, dpdb, dir, agents, sessions);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "hub_scale: %s\nthe hub's log ends with:\n%s", error.what(),
                     hub.log_tail().c_str());
        return 1;
    }
}
