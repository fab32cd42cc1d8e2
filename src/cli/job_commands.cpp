// dpdb break, ps, stacks, log, pause: questions and orders about a whole job, asked of its hub.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "attach/python_process.hpp"
#include "cli/commands.hpp"
#include "cli/describe.hpp"
#include "cli/hub_locator.hpp"
#include "cli/memory_stacks.hpp"
#include "cli/stack_groups.hpp"
#include "common/printable.hpp"

namespace dpdb::cli {
namespace {

constexpr int kAnswerTimeoutMs = 10000;
// Above this many processes, `dpdb stacks` of the whole job groups identical stacks.
constexpr std::size_t kGroupStacksAbove = 50;

// One hub, for orders: with several running, the user must say which.
HubTarget single_hub(const std::string& hub) {
    auto targets = locate_hubs(hub);
    if (targets.size() > 1) {
        std::string names;
        for (const auto& t : targets) names += "\n  " + t.address.to_string();
        throw std::runtime_error("several hubs are running; say which with --hub:" + names);
    }
    return targets.front();
}

// Sends a request and returns the hub's "result" for it; throws on no answer.
wire::Message ask(const HubTarget& target, std::string_view type, wire::Json fields) {
    return ask_hub(target, type, std::move(fields), "result", kAnswerTimeoutMs);
}

int report(const wire::Message& result) {
    if (result.type == "error") {
        std::fprintf(stderr, "dpdb: %s\n", result.str("message").c_str());
        return 2;
    }
    const bool ok = result["ok"].get<bool>();
    const auto text = result.str("message");
    if (!text.empty()) std::fprintf(ok ? stdout : stderr, ok ? "%s\n" : "dpdb: %s\n", text.c_str());
    return ok ? 0 : 2;
}

// A process whose connection ended: how it ended, as far as its hub knows. "running" is there
// only when the hub could look at the process itself (hub/local_process).
std::string ending_of(const wire::Json& p) {
    if (p.contains("signal")) return "crashed: " + p["signal"].get<std::string>();
    // A status, whatever its number: billiard's recycled workers exit with 155 on purpose.
    if (p.contains("status")) return "exited with status " + p["status"].dump();
    const auto running = p.find("running");
    const std::string since = running == p.end() || !running->is_boolean() ? ""
                              : running->get<bool>()                       ? ", running"
                                                                           : ", since ended";
    // Its host never came back (hub/hub_liveness.cpp): what became of it is not known.
    if (const auto reason = p.value("reason", std::string()); reason.rfind("lost: ", 0) == 0) {
        return reason + since;
    }
    if (p.contains("exec") && p["exec"].is_string()) {
        return "exec'd " + p["exec"].get<std::string>() + since;
    }
    if (p.value("disconnected", false)) return "its connection to dpdb closed" + since;
    if (p.value("unverified", false)) {
        return "disconnected without a word (ended, killed, or exec'd: its host is not the hub's)";
    }
    return "vanished without a word (killed: SIGKILL, or the OOM killer)";
}

std::string state_of(const wire::Json& p, const std::map<std::int64_t, wire::Json>& sessions) {
    if (p.value("exited", false)) return ending_of(p);
    // Its last known state, as the hub last heard it.
    if (const auto note = unreachable_note(p); !note.empty()) {
        auto last = p;
        last.erase("unreachable_since");
        return note + "; last " + state_of(last, sessions);
    }
    std::string paused;
    std::set<std::string> threads;
    for (const auto& id : p.value("sessions", wire::Json::array())) {
        const auto it = sessions.find(id.get<std::int64_t>());
        if (it == sessions.end()) continue;
        if (paused.empty()) paused = location(it->second);
        threads.insert(it->second.value("thread", std::string("?")));
    }
    if (paused.empty()) return "running";
    std::string names;
    for (const auto& t : threads) names += (names.empty() ? "" : ", ") + t;
    return "paused at " + paused + " (" + names + ")";
}

// A spec that arms every file it matches (see python/dpdb/_global_breaks.py).
constexpr const char* kEveryMatch = "*/";
// How long `dpdb break` waits for every process to say where the new breakpoint went: while
// processes keep answering (hundreds on one host arm for seconds, each taking its share of the
// cores), until none has answered for kStandingStall (a stopped process, one whose GIL is held),
// at most kStandingLongest.
constexpr auto kStandingStall = std::chrono::milliseconds(2000);
constexpr auto kStandingLongest = std::chrono::seconds(15);
// A process arms in milliseconds: at 50 ms most of a small job's `dpdb break` was this sleep.
constexpr auto kStandingPoll = std::chrono::milliseconds(10);

std::string where_armed(const wire::Json& bp) {
    const int processes = bp.value("processes", 0);
    if (processes == 0) return "pending, 0 processes";
    return std::to_string(processes) + (processes == 1 ? " process" : " processes");
}

// What processes said about a breakpoint they could not arm as written, each note once.
void print_notes(const wire::Json& bp) {
    for (const auto& said : bp.value("notes", wire::Json::array())) {
        const int processes = said.value("processes", 1);
        std::printf(
            "     ! %s%s\n",
            processes == 1 ? "" : ("in " + std::to_string(processes) + " processes: ").c_str(),
            shown(said.value("note", std::string())).c_str());
    }
}

// "; 5 have not answered yet (hostB 5) …": the processes the last list has not reached yet.
std::string not_answered(const wire::Json& data) {
    const int waiting = data.value("waiting", 0);
    if (waiting == 0) return "";
    std::string hosts;
    int listed = 0;
    const auto by_host = data.value("waiting_hosts", wire::Json::object());
    for (const auto& [host, count] : by_host.items()) {
        if (++listed > 5) {
            hosts += ", …";
            break;
        }
        hosts += (hosts.empty() ? "" : ", ") + shown(host) + " " + count.dump();
    }
    return "; " + std::to_string(waiting) + (waiting == 1 ? " has" : " have") +
           " not answered yet" + (hosts.empty() ? "" : " (" + hosts + ")") +
           ": they get it when they do";
}

// After `dpdb break`: where the new breakpoint went, once every process has answered (bounded),
// in one line — armed in how many of how many, pending where its file is not loaded, and who
// has not answered within the bound.
void report_standing(const HubTarget& target, std::int64_t id) {
    const auto start = std::chrono::steady_clock::now();
    auto last_answer = start;
    int waiting = -1;
    wire::Json standing;
    wire::Json data;
    for (;;) {
        const auto result = ask(target, "break_list", wire::Json::object());
        if (result.type != "result") return;
        data = result["data"];
        for (const auto& bp : data["breakpoints"]) {
            if (bp.value("id", std::int64_t{0}) == id) standing = bp;
        }
        const auto now = std::chrono::steady_clock::now();
        const int still = data.value("waiting", 0);
        if (waiting >= 0 && still < waiting) last_answer = now;
        waiting = still;
        if (waiting == 0 || now - last_answer >= kStandingStall ||
            now - start >= kStandingLongest) {
            break;
        }
        std::this_thread::sleep_for(kStandingPoll);
    }
    if (standing.is_null()) return;
    const int armed = standing.value("processes", 0);
    const int pending = standing.value("pending", 0);
    const int ambiguous = standing.value("ambiguous", 0);
    const int total = data.value("total", armed);
    std::string line;
    if (armed == 0 && ambiguous == 0) {
        line = "pending: armed when a process loads its code";
        if (pending > 0) {
            line += " (not loaded in the " + std::to_string(pending) + " that answered)";
        }
    } else {
        line = armed == 0 ? "armed in no process"
                          : "armed in " + where_armed(standing) +
                                (armed != total ? " of " + std::to_string(total) : "");
        if (pending > 0) {
            line += "; pending in " + std::to_string(pending) + " (its file not loaded there)";
        }
        // Armed nowhere there until the spec names one file: the note below lists them.
        if (ambiguous > 0) line += "; ambiguous in " + std::to_string(ambiguous);
    }
    std::printf("  %s%s\n", line.c_str(), not_answered(data).c_str());
    print_notes(standing);
}

// `dpdb stacks -p PID`: from its agent, through a hub that knows it, where it carries one (and
// DPDB_STACKS allows); from its memory otherwise.
wire::Json stacks_of_process(const std::string& hub, pid_t pid) {
    std::string why;
    const auto python = attach::inspect_python(pid, &why);
    if (python && python->has_agent && stacks_from_agent()) {
        try {
            for (const auto& target : locate_hubs(hub)) {
                const auto result = ask(target, "stacks", {{"pids", {pid}}});
                if (result.type != "result") continue;
                for (const auto& p : result["data"]["processes"]) {
                    if (!p.contains("error")) return p;
                }
            }
        } catch (const std::runtime_error&) {
            // No hub, or none answering: the memory says the same.
        }
    }
    return memory_stacks(pid);
}

// The processes asked for, each followed by its Python descendants (a shell or other program
// between them passed over), parents first, each once.
std::vector<pid_t> with_python_descendants(const std::vector<pid_t>& pids) {
    std::vector<pid_t> all;
    std::set<pid_t> seen;
    for (const pid_t pid : pids) {
        if (seen.insert(pid).second) all.push_back(pid);
        for (const pid_t below : attach::descendants(pid)) {
            std::string not_python;
            if (attach::inspect_python(below, &not_python) && seen.insert(below).second) {
                all.push_back(below);
            }
        }
    }
    return all;
}

}  // namespace

int break_command(const std::string& hub, const BreakOptions& options) {
    const auto target = single_hub(hub);
    if (options.list) {
        const auto result = ask(target, "break_list", wire::Json::object());
        if (result.type != "result") return report(result);
        const auto& all = result["data"]["breakpoints"];
        if (all.empty()) {
            std::printf("no global breakpoints\n");
            return 0;
        }
        for (const auto& bp : all) {
            std::string condition = bp.value("condition", std::string());
            std::string log = bp.value("log", std::string());
            // A hit count an IDE set (pdb's ignore count, per process).
            const auto ignore = bp.value("ignore", std::int64_t{0});
            std::printf("%-4lld %s%s%s%s  [%s]\n",
                        static_cast<long long>(bp["id"].get<std::int64_t>()),
                        bp["spec"].get<std::string>().c_str(),
                        condition.empty() ? "" : (" if " + condition).c_str(),
                        log.empty() ? "" : (" log \"" + log + "\"").c_str(),
                        ignore > 0 ? (" ignoring " + std::to_string(ignore) + " hits").c_str() : "",
                        where_armed(bp).c_str());
            print_notes(bp);
        }
        return 0;
    }
    if (options.clear) {
        long long id = 0;
        if (!options.args.empty()) {
            try {
                id = std::stoll(options.args.front());
            } catch (const std::exception&) {
                std::fprintf(stderr, "dpdb: break --clear takes a breakpoint number\n");
                return 2;
            }
        }
        return report(ask(target, "break_clear", {{"bp", id}}));
    }
    if (options.args.empty()) {
        std::fprintf(stderr,
                     "dpdb: break FILE:LINE [if EXPR] [--log MESSAGE] | FUNCTION | --list | "
                     "--clear [ID]\n");
        return 2;
    }
    std::string condition = options.cond;
    if (options.args.size() > 1) {
        if (!condition.empty()) {
            std::fprintf(stderr, "dpdb: give the condition once: `if EXPR` or --cond EXPR\n");
            return 2;
        }
        if (options.args[1] != "if" || options.args.size() < 3) {
            std::fprintf(stderr, "dpdb: a condition is written `if EXPR`\n");
            return 2;
        }
        for (std::size_t i = 2; i < options.args.size(); ++i) {
            condition += (i > 2 ? " " : "") + options.args[i];
        }
    }
    auto spec = options.args.front();
    if (options.every && spec.rfind(kEveryMatch, 0) != 0) spec = kEveryMatch + spec;
    wire::Json fields = {{"spec", spec}, {"condition", condition}};
    if (!options.log.empty()) fields["log"] = options.log;
    const auto added = ask(target, "break_add", std::move(fields));
    const int status = report(added);
    if (status == 0) report_standing(target, added["data"].value("bp", std::int64_t{0}));
    return status;
}

int ps_command(const std::string& hub, bool json) {
    wire::Json all = wire::Json::array();
    std::map<std::int64_t, wire::Json> sessions;
    for (const auto& target : locate_hubs(hub)) {
        const auto listing = list_hub(target, kAnswerTimeoutMs);
        std::set<std::int64_t> live;
        for (auto p : listing["processes"]) {
            live.insert(p.value("pid", std::int64_t{-1}));
            all.push_back(std::move(p));
        }
        for (const auto& s : listing["sessions"]) sessions[s.value("sid", std::int64_t{0})] = s;
        // Newest first: a pid that exec'd twice (python, then a native program) is its last.
        for (auto p : listing.value("exited", wire::Json::array())) {
            if (!live.insert(p.value("pid", std::int64_t{-1})).second) continue;
            p["exited"] = true;
            all.push_back(std::move(p));
        }
    }
    for (auto& p : all) p["state"] = state_of(p, sessions);
    if (json) {
        std::cout << all.dump(2) << "\n";
        return 0;
    }
    // A tree by parent pid; processes whose parent is unknown are roots.
    std::map<std::int64_t, std::vector<const wire::Json*>> children;
    std::set<std::int64_t> known;
    for (const auto& p : all) known.insert(p.value("pid", std::int64_t{-1}));
    std::vector<const wire::Json*> roots;
    for (const auto& p : all) {
        const auto ppid = p.value("ppid", std::int64_t{-1});
        if (known.count(ppid) != 0 && ppid != p.value("pid", std::int64_t{-1})) {
            children[ppid].push_back(&p);
        } else {
            roots.push_back(&p);
        }
    }
    // STATE, the one column of unbounded text (a paused place, how a process ended), is last:
    // a long one then runs on at the end of its row and never pushes the others out of line.
    std::vector<std::vector<std::string>> rows = {{"PID", "HOST", "TAGS", "COMMAND", "STATE"}};
    std::function<void(const wire::Json*, const std::string&, bool, bool)> print;
    print = [&](const wire::Json* p, const std::string& indent, bool last, bool root) {
        const std::string branch = root ? "" : (last ? "└─ " : "├─ ");
        const auto tags = tags_of(*p);
        rows.push_back({indent + branch + std::to_string(p->value("pid", std::int64_t{-1})),
                        p->value("host", std::string()), tags.empty() ? "-" : tags,
                        short_command(*p), (*p)["state"].get<std::string>()});
        const auto& kids = children[p->value("pid", std::int64_t{-1})];
        for (std::size_t i = 0; i < kids.size(); ++i) {
            print(kids[i], indent + (root ? "" : (last ? "   " : "│  ")), i + 1 == kids.size(),
                  false);
        }
    };
    for (const auto* root : roots) print(root, "", true, true);
    std::fputs(table(rows).c_str(), stdout);
    return 0;
}

int stacks_command(const std::string& hub, const std::vector<std::string>& pids,
                   const std::vector<pid_t>& read_pids, bool tree, bool json,
                   bool debugger_frames) {
    if (tree && read_pids.empty()) {
        std::fprintf(stderr, "dpdb: --tree goes with -p PID (the processes below PID)\n");
        return 2;
    }
    wire::Json wanted = wire::Json::array();
    for (const auto& pid : pids) {
        try {
            wanted.push_back(std::stoll(pid));
        } catch (const std::exception&) {
            std::fprintf(stderr, "dpdb: \"%s\" is not a pid\n", pid.c_str());
            return 2;
        }
    }
    if (!read_pids.empty()) stacks_from_agent();  // a bad DPDB_STACKS said before anything
    wire::Json processes = wire::Json::array();
    if (!pids.empty() || read_pids.empty()) {
        for (const auto& target : locate_hubs(hub)) {
            const auto result = ask(target, "stacks", {{"pids", wanted}});
            if (result.type != "result") return report(result);
            for (const auto& p : result["data"]["processes"]) processes.push_back(p);
        }
    }
    for (const pid_t pid : tree ? with_python_descendants(read_pids) : read_pids) {
        processes.push_back(stacks_of_process(hub, pid));
    }
    if (json) {
        std::cout << processes.dump(2) << "\n";
        return 0;
    }
    // A whole large job: the processes that stand in the same places, once (stack_groups).
    if (pids.empty() && processes.size() > kGroupStacksAbove) {
        std::cout << grouped_stacks(processes);
        return 0;
    }
    // A pid asked of several hubs is unknown to all but one: report it once, as unknown, only if
    // no hub knew it.
    std::set<std::int64_t> answered;
    for (const auto& p : processes) {
        if (!p.contains("error")) answered.insert(p.value("pid", std::int64_t{-1}));
    }
    std::set<std::int64_t> reported;
    int failures = 0;
    for (const auto& p : processes) {
        const auto pid = p.value("pid", std::int64_t{-1});
        if (p.contains("error")) {
            if (answered.count(pid) != 0 || !reported.insert(pid).second) continue;
            // A reason that names the process itself (the memory reader's) is not prefixed.
            const auto why = shown(p["error"].get<std::string>());
            const auto who = "pid " + std::to_string(pid);
            std::printf("%s\n\n", why.rfind(who + " ", 0) == 0 || why.rfind(who + ":", 0) == 0
                                      ? why.c_str()
                                      : (who + ": " + why).c_str());
            ++failures;
            continue;
        }
        // Read from its memory: said, with the interpreter whose layout was read.
        const std::string from = p.contains("read_from_memory")
                                     ? ", read from its memory (CPython " +
                                           p["read_from_memory"].get<std::string>() + ")"
                                     : "";
        std::printf("%s%s\n", process_label(p).c_str(), from.c_str());
        const auto& stacks = p["stacks"];
        const char* which = debugger_frames && stacks.contains("text_with_debugger")
                                ? "text_with_debugger"
                                : "text";
        std::printf("%s\n", shown_lines(stacks.value(which, std::string())).c_str());
    }
    return failures == 0 ? 0 : 1;
}

int log_command(const std::string& hub, long long pid) {
    std::string why =
        "no record of an ended pid " + std::to_string(pid) + " (`dpdb ps` shows the processes)";
    for (const auto& target : locate_hubs(hub)) {
        const auto result = ask(target, "log", {{"pid", pid}});
        if (result.type != "result") continue;
        if (!result["ok"].get<bool>()) {
            // A hub that knows the pid (it is still running there) says more than "no record".
            if (result.str("message").find("no record") == std::string::npos) {
                why = result.str("message");
            }
            continue;
        }
        auto record = result["data"]["process"];
        record["exited"] = true;
        std::printf("%s: %s\n", process_label(record).c_str(), shown(state_of(record, {})).c_str());
        if (record.contains("stacks")) {
            std::printf("%s\n", shown_lines(record["stacks"].get<std::string>()).c_str());
        }
        return 0;
    }
    std::fprintf(stderr, "dpdb: %s\n", why.c_str());
    return 2;
}

int pause_command(const std::string& hub, long long pid, bool all_threads) {
    // A thread that waits in C code gets its session at once, over its frames as it waits.
    return report(ask(single_hub(hub), "pause_process",
                      {{"pid", pid}, {"all_threads", all_threads}, {"view", true}}));
}

int detach_process_command(const std::string& hub, long long pid) {
    return report(ask(single_hub(hub), "release_process", {{"pid", pid}}));
}

}  // namespace dpdb::cli
