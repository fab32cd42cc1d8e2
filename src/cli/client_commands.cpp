// dpdb ls, dpdb attach.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/describe.hpp"
#include "cli/hub_locator.hpp"
#include "cli/job_summary.hpp"
#include "common/runtime_dir.hpp"

namespace dpdb::cli {
namespace {

constexpr int kListTimeoutMs = 5000;
// Above this many processes (or paused sessions), `dpdb ls` shows the summary rather than a line
// for each: a screenful. `--all` and `--json` list everything whatever the size.
constexpr std::int64_t kSummaryAbove = 50;
// `dpdb attach` with several sessions paused lists this many to choose from.
constexpr std::size_t kSessionsToChooseFrom = 20;

constexpr auto kHubAwayPause = std::chrono::milliseconds(500);

// Until the hub answers again and, for a session named by its id, lists it again.
void wait_for_session(const HubTarget& target, const ConsoleOptions& options) {
    for (;;) {
        try {
            const auto listing = list_hub(target, kListTimeoutMs, /*sessions_only=*/true);
            if (options.follow != Follow::Session) return;
            for (const auto& s : listing["sessions"]) {
                if (s.value("sid", 0LL) == options.session) return;
            }
        } catch (const std::exception&) {
            // Not back yet.
        }
        std::this_thread::sleep_for(kHubAwayPause);
    }
}

}  // namespace

int ls_command(const std::string& hub, const LsOptions& options) {
    const auto targets = locate_hubs(hub);
    // Everything, as asked; else first the summaries, then everything only for a small job (one
    // connection per hub either way).
    const bool whole = options.json || options.all;
    std::vector<HubSummary> summaries;
    std::vector<std::unique_ptr<wire::Channel>> channels;
    std::vector<const HubTarget*> answered;
    // A hub's listing that came with its summary (list_up_to), else null: asked for below.
    std::vector<wire::Json> listings;
    std::int64_t processes = 0, sessions = 0;
    int failures = 0;
    for (const auto& target : targets) {
        try {
            // One question, with the hello where the hub allows it: a hub of dpdb/2 sends the
            // listing after the summary when the job is small (two round trips in all over TLS
            // 1.3, docs/remote.md); an older one is asked for the listing after.
            auto channel = std::make_unique<wire::Channel>();
            connect_client(*channel, target, [whole](bool v2) {
                wire::Json fields = {{"id", 1}};
                if (whole) return std::vector<wire::Message>{wire::make("list", std::move(fields))};
                if (v2) fields["list_up_to"] = kSummaryAbove;
                return std::vector<wire::Message>{wire::make("summarize", std::move(fields))};
            });
            wire::Json listing;
            if (!whole) {
                const auto summary = await_answer(*channel, target, "summary", kListTimeoutMs, 1);
                if (summary.type == "error") throw std::runtime_error(summary.str("message"));
                processes += summary.num("processes");
                sessions += summary.num("sessions");
                summaries.push_back({target.address.to_string(), summary.body});
            }
            if (whole || summaries.back().body.value("listing", false)) {
                auto answer = await_answer(*channel, target, "listing", kListTimeoutMs, 1);
                if (answer.type == "error") throw std::runtime_error(answer.str("message"));
                listing = std::move(answer.body);
            }
            channels.push_back(std::move(channel));
            answered.push_back(&target);
            listings.push_back(std::move(listing));
        } catch (const std::exception& error) {
            std::fprintf(stderr, "dpdb: %s\n", error.what());
            ++failures;
        }
    }
    if (failures == static_cast<int>(targets.size())) return 1;
    if (!whole && (processes > kSummaryAbove || sessions > kSummaryAbove)) {
        std::cout << job_summary(summaries);
        return 0;
    }
    wire::Json all_processes = wire::Json::array();
    wire::Json all_sessions = wire::Json::array();
    for (std::size_t i = 0; i < channels.size(); ++i) {
        const auto& target = *answered[i];
        try {
            auto listing = !listings[i].is_null()
                               ? std::move(listings[i])
                               : list_hub(*channels[i], target, kListTimeoutMs, 2);
            for (auto& p : listing["processes"]) {
                p["hub"] = target.address.to_string();
                all_processes.push_back(std::move(p));
            }
            for (auto& s : listing["sessions"]) {
                s["hub"] = target.address.to_string();
                all_sessions.push_back(std::move(s));
            }
        } catch (const std::exception& error) {
            std::fprintf(stderr, "dpdb: %s\n", error.what());
            if (++failures == static_cast<int>(targets.size())) return 1;
        }
    }
    if (options.json) {
        wire::Json out = wire::Json::object();
        out["processes"] = std::move(all_processes);
        out["sessions"] = std::move(all_sessions);
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << all_processes.size() << " process(es), " << all_sessions.size()
                  << " paused session(s)\n\n";
        if (!all_sessions.empty()) std::cout << sessions_table(all_sessions) << "\n";
        std::cout << processes_table(all_processes);
    }
    return 0;
}

int attach_command(const std::string& hub, const std::string& session, bool next) {
    const auto targets = locate_hubs(hub);
    ConsoleOptions options;
    const HubTarget* chosen = nullptr;
    // The connection the chosen session was listed on: the console attaches on it, without a
    // second TLS handshake and hello (two round trips to a remote hub).
    std::unique_ptr<wire::Channel> listed_on;
    if (next) {
        if (targets.size() > 1) {
            throw std::runtime_error(
                "several hubs are running; say which with --hub (`dpdb ls` shows them)");
        }
        options.follow = Follow::Next;
        chosen = &targets.front();
    } else {
        std::vector<std::pair<const HubTarget*, wire::Json>> found;
        std::vector<std::unique_ptr<wire::Channel>> channels(targets.size());
        long long wanted = 0;
        if (!session.empty()) {
            try {
                wanted = std::stoll(session);
            } catch (const std::exception&) {
                std::fprintf(stderr, "dpdb: session must be a number, not \"%s\"\n",
                             session.c_str());
                return 2;
            }
        }
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const auto& target = targets[i];
            try {
                channels[i] = std::make_unique<wire::Channel>();
                const auto listing = connect_and_list(*channels[i], target, kListTimeoutMs,
                                                      /*sessions_only=*/true);
                for (const auto& s : listing["sessions"]) {
                    if (wanted == 0 || s.value("sid", 0LL) == wanted)
                        found.emplace_back(&target, s);
                }
            } catch (const std::exception& error) {
                std::fprintf(stderr, "dpdb: %s\n", error.what());
            }
        }
        if (found.empty()) {
            if (wanted != 0) {
                std::fprintf(stderr,
                             "dpdb: no session %lld (`dpdb ls` lists the paused sessions)\n",
                             wanted);
            } else {
                std::fprintf(stderr,
                             "dpdb: no paused session; `dpdb attach --next` waits for one\n");
            }
            return 2;
        }
        if (found.size() > 1) {
            // A screenful to choose from: with thousands paused, `dpdb ls` sums them up.
            wire::Json some = wire::Json::array();
            for (const auto& f : found) {
                if (some.size() == kSessionsToChooseFrom) break;
                some.push_back(f.second);
            }
            std::string more;
            if (found.size() > some.size()) {
                more = "… and " + std::to_string(found.size() - some.size()) +
                       " more (`dpdb ls` shows where they are paused)\n";
            }
            std::fprintf(stderr, "dpdb: %s; say which:\n%s%s",
                         wanted != 0 ? "that session number is on several hubs (use --hub)"
                                     : "several sessions are paused",
                         sessions_table(some).c_str(), more.c_str());
            return 2;
        }
        chosen = found.front().first;
        listed_on = std::move(channels[static_cast<std::size_t>(chosen - targets.data())]);
        options.follow = Follow::Session;
        options.session = found.front().second.value("sid", 0LL);
    }
    for (;;) {
        std::unique_ptr<wire::Channel> channel = std::move(listed_on);
        if (!channel || !channel->is_open()) {
            channel = std::make_unique<wire::Channel>();
            connect_client(*channel, *chosen);
        }
        Console console(*channel, options);
        const int status = console.run();
        if (!console.lost_hub() || console.hung_up()) return status;
        // As `dpdb logs --follow` does: the hub restarts with its store, the process dials it
        // again, and the session comes back with its id (hub/store).
        std::fprintf(stderr,
                     "dpdb: waiting for the hub to come back; attaching again then "
                     "(Ctrl-C stops)\n");
        std::signal(SIGINT, SIG_DFL);  // the console's handler only flags it for its loop
        wait_for_session(*chosen, options);
    }
}

}  // namespace dpdb::cli
