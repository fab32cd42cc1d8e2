// bench/hub_scale: one real hub (the `dpdb hub` executable, its own process) under N agents and M
// paused sessions, driven through the real protocol by in-process agents and clients. Prints a
// markdown table: hub memory per agent, `dpdb ls` latency, console round trip through the hub,
// and the time from a breakpoint hit to the notification at a subscribed client.
//
//   hub_scale DPDB_EXECUTABLE [AGENTS=1000] [SESSIONS=100]
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/address.hpp"
#include "common/runtime_dir.hpp"
#include "wire/channel.hpp"

using Clock = std::chrono::steady_clock;
using dpdb::wire::Channel;
using dpdb::wire::Json;
using dpdb::wire::make;

namespace {

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

double percentile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<std::size_t>(p * values.size()))];
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

dpdb::wire::Message expect(Channel& channel, const std::string& type) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
        auto message = channel.receive(1000);
        if (message && message->type == type) return *message;
    }
    throw std::runtime_error("no " + type + " message within 10 s");
}

void raise_file_limit() {
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DPDB_EXECUTABLE [AGENTS] [SESSIONS]\n", argv[0]);
        return 2;
    }
    const std::string dpdb = argv[1];
    const int agents = argc > 2 ? std::atoi(argv[2]) : 1000;
    const int sessions = argc > 3 ? std::min(agents, std::atoi(argv[3])) : 100;
    raise_file_limit();

    char dir_template[] = "/tmp/dpdb-hub-scale.XXXXXX";
    const std::string dir = ::mkdtemp(dir_template);
    const std::string socket_path = dir + "/hub.sock";
    const pid_t hub = ::fork();
    if (hub == 0) {
        ::execl(dpdb.c_str(), dpdb.c_str(), "hub", "--quiet", "--socket", socket_path.c_str(),
                "--state-dir", (dir + "/state").c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const auto address = dpdb::HubAddress::parse(socket_path);
    std::string secret;
    for (int i = 0; i < 200 && secret.empty(); ++i) {
        try {
            secret = dpdb::read_private_file(dpdb::token_path_for_socket(socket_path));
            if (::access(socket_path.c_str(), F_OK) != 0) secret.clear();
        } catch (const std::exception&) {
        }
        if (secret.empty()) ::usleep(20000);
    }
    if (secret.empty()) throw std::runtime_error("the hub did not start");
    ::usleep(100000);
    const long rss_idle = rss_kib(hub);

    // N agents, each a real authenticated connection that says who it is.
    std::vector<std::unique_ptr<Channel>> agent_channels;
    const auto connect_start = Clock::now();
    for (int i = 0; i < agents; ++i) {
        auto channel = std::make_unique<Channel>();
        Channel::connect(*channel, address, secret, "agent",
                         {{"pid", 100000 + i},
                          {"ppid", 99999},
                          {"host", "bench"},
                          {"argv", {"python", "train.py", "--rank", std::to_string(i)}},
                          {"python", "3.12.1"},
                          {"tags", {{"RANK", std::to_string(i)}}}});
        agent_channels.push_back(std::move(channel));
    }
    const double connect_ms = ms_since(connect_start);
    for (int i = 0; i < sessions; ++i) {
        agent_channels[i]->send(make("session_open", {{"sid", 1},
                                                      {"info",
                                                       {{"thread", "MainThread"},
                                                        {"tid", 1},
                                                        {"file", "/srv/job/train.py"},
                                                        {"line", 42 + i},
                                                        {"function", "step"}}}}));
    }

    Channel client;
    Channel::connect(client, address, secret, "client");
    // Wait until the hub has every session, then measure `list` round trips in-process...
    std::vector<double> list_ms;
    for (int round = 0; round < 200; ++round) {
        const auto start = Clock::now();
        client.send(make("list", {{"id", round}}));
        const auto listing = expect(client, "listing");
        if (listing["sessions"].size() < static_cast<std::size_t>(sessions)) {
            --round;
            continue;
        }
        list_ms.push_back(ms_since(start));
    }
    const long rss_loaded = rss_kib(hub);

    // ...and the real `dpdb ls` command, process start and all.
    std::vector<double> ls_ms;
    const std::string ls_command =
        "'" + dpdb + "' ls --json --hub unix:" + socket_path + " > /dev/null";
    ::setenv("DPDB_TOKEN", secret.c_str(), 1);
    for (int round = 0; round < 20; ++round) {
        const auto start = Clock::now();
        if (std::system(ls_command.c_str()) != 0) throw std::runtime_error("dpdb ls failed");
        ls_ms.push_back(ms_since(start));
    }

    // Console round trip: the client's line reaches the agent through the hub, the agent's
    // output comes back the same way.
    client.send(make("attach", {{"sid", 1}, {"cols", 80}}));
    expect(client, "attached");
    Channel& paused = *agent_channels[0];
    expect(paused, "attach");
    std::vector<double> round_trip_ms;
    for (int round = 0; round < 2000; ++round) {
        const auto start = Clock::now();
        client.send(make("input", {{"sid", 1}, {"line", "p x"}}));
        const auto input = expect(paused, "input");
        paused.send(make("output", {{"sid", 1}, {"text", input.str("line") + " = 42\n"}}));
        expect(client, "output");
        round_trip_ms.push_back(ms_since(start));
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

    std::printf("## hub_scale: %d agents, %d paused sessions, one hub\n\n", agents, sessions);
    std::printf("| measure | value | target |\n|---|---|---|\n");
    std::printf("| hub RSS idle | %.1f MiB | |\n", rss_idle / 1024.0);
    std::printf("| hub RSS with %d agents + %d sessions | %.1f MiB | |\n", agents, sessions,
                rss_loaded / 1024.0);
    std::printf("| hub memory per agent | %.1f KiB | |\n",
                static_cast<double>(rss_loaded - rss_idle) / agents);
    std::printf("| connect + authenticate %d agents | %.0f ms (%.2f ms each) | |\n", agents,
                connect_ms, connect_ms / agents);
    std::printf("| `list` round trip (in-process client), median / p99 | %.2f / %.2f ms | |\n",
                median(list_ms), percentile(list_ms, 0.99));
    std::printf("| `dpdb ls --json` command, median / p99 | %.1f / %.1f ms | < 100 ms |\n",
                median(ls_ms), percentile(ls_ms, 0.99));
    std::printf("| console round trip through the hub, median / p99 | %.3f / %.3f ms | < 2 ms |\n",
                median(round_trip_ms), percentile(round_trip_ms, 0.99));
    std::printf("| breakpoint hit to notification, median / p99 | %.3f / %.3f ms | |\n",
                median(notify_ms), percentile(notify_ms, 0.99));

    ::kill(hub, SIGTERM);
    ::waitpid(hub, nullptr, 0);
    std::system(("rm -rf '" + dir + "'").c_str());
    return 0;
}
