// dpdb attach -p PID [--tree]: makes a Python process that runs already debuggable, as if it had
// been started under `dpdb run`. The agent is loaded into it by the native injector (attach/),
// from the dpdb installation that runs this command; a request folder tells it where the hub is.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "attach/injector.hpp"
#include "attach/python_process.hpp"
#include "attach/remote_exec.hpp"
#include "attach/system_call.hpp"
#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/describe.hpp"
#include "cli/installation.hpp"
#include "cli/local_hub.hpp"
#include "cli/memory_stacks.hpp"
#include "cli/site_customize.hpp"
#include "common/read_file.hpp"
#include "common/runtime_dir.hpp"
#include "wire/auth.hpp"

namespace dpdb::cli {
namespace {

constexpr const char* kInjectLibrary = "libdpdb_inject.so";
constexpr const char* kInjectStart = "dpdb_inject_start";
constexpr auto kReplyPoll = std::chrono::milliseconds(20);
constexpr auto kGilNotice = std::chrono::seconds(1);
// A pause that has neither landed nor opened a view by then (the agent opens one 0.2 s after the
// pause, if the main thread runs no Python meanwhile) waits for a thread that runs C code.
constexpr auto kSessionNotice = std::chrono::milliseconds(1500);
// The innermost frames of a waiting main thread shown with that notice.
constexpr std::size_t kWaitingFramesShown = 6;
// With every thread paused, how long after the main thread's session the others' may take to
// reach the hub (a waiting one's view opens 0.2 s after the pause; one that runs Python stops at
// its next line): the prompt says how many there are, not how many had arrived.
constexpr auto kOthersWait = std::chrono::seconds(3);
constexpr int kListTimeoutMs = 5000;

// Ctrl-C while the attach waits (for the process to start the agent, or to pause): the attach is
// undone instead of leaving the process half attached, or a pause armed with nobody to prompt.
volatile std::sig_atomic_t g_interrupted = 0;

void note_interrupt(int) {
    g_interrupted = 1;
}

// SIGINT noted, for as long as the attach waits; the console has its own handling.
class InterruptNoted {
  public:
    InterruptNoted() {
        struct sigaction action {};
        action.sa_handler = note_interrupt;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGINT, &action, &previous_);
    }
    ~InterruptNoted() { ::sigaction(SIGINT, &previous_, nullptr); }
    InterruptNoted(const InterruptNoted&) = delete;
    InterruptNoted& operator=(const InterruptNoted&) = delete;

  private:
    struct sigaction previous_ {};
};

// Run by the thread the loader starts in the attached process, with the GIL: loads dpdb from the
// package folder named in the request (the process's own environment may have no dpdb), and
// answers in reply.json. MAIN_THREAD is the main thread's ident (None where the interpreter
// runs the script itself, 3.14's sys.remote_exec, whose threading module knows it).
constexpr const char* kStartScript = R"(# Written by `dpdb attach`.
def _dpdb_attach(request, main_thread):
    import importlib.util, json, os, sys
    had_threading = "threading" in sys.modules
    taken = os.path.join(request, "taken.json")
    try:
        # Taken, atomically: an attach that gives up takes it away the same way first.
        os.rename(os.path.join(request, "request.json"), taken)
    except OSError:
        return
    try:
        with open(taken) as f:
            order = json.load(f)
        if "dpdb" not in sys.modules:
            package = order["package"]
            spec = importlib.util.spec_from_file_location(
                "dpdb", os.path.join(package, "__init__.py"),
                submodule_search_locations=[package])
            module = importlib.util.module_from_spec(spec)
            sys.modules["dpdb"] = module
            spec.loader.exec_module(module)
        if not had_threading:
            from dpdb import _main_thread
            _main_thread.adopt(main_thread)
        from dpdb import _attach
        answer = _attach.start(order)
    except BaseException as error:
        answer = {"error": "%s: %s" % (type(error).__name__, error)}
    reply = os.path.join(request, "reply.json")
    with open(reply + ".tmp", "w") as f:
        json.dump(answer, f)
    os.rename(reply + ".tmp", reply)

_dpdb_attach(REQUEST, MAIN_THREAD)
)";

std::string folder_of(const std::string& path) {
    return path.substr(0, path.rfind('/'));
}

bool has_agent_for(const std::string& package, const std::string& version) {
    const std::string tag = "_agent.cpython-" + version.substr(0, 1) + version.substr(2) + "-";
    DIR* dir = ::opendir(package.c_str());
    if (dir == nullptr) return false;
    bool found = false;
    while (const dirent* entry = ::readdir(dir)) {
        if (std::string(entry->d_name).rfind(tag, 0) == 0) found = true;
    }
    ::closedir(dir);
    return found && ::access((package + "/" + kInjectLibrary).c_str(), R_OK) == 0;
}

// dpdb's package folder with an agent for `version`: this installation's (a venv's or a
// prefix's lib/pythonX.Y/site-packages beside our bin/), or one in the target's own prefix.
std::string agent_package(const attach::PythonProcess& target) {
    const std::string tail = "/lib/python" + target.version + "/site-packages/dpdb";
    const std::string ours = folder_of(folder_of(this_executable()));
    const std::string theirs = folder_of(folder_of(target.executable));
    for (const auto& prefix : {ours, theirs}) {
        if (has_agent_for(prefix + tail, target.version)) return prefix + tail;
    }
    throw attach::AttachError("pid " + std::to_string(target.pid) + " runs Python " +
                              target.version + ", and this dpdb (" + this_executable() +
                              ") has no agent for it: run the dpdb attach of an installation "
                              "of dpdb for Python " +
                              target.version);
}

// The request folder: private to the user, removed when the attach ends either way.
struct RequestFolder {
    std::string path;

    RequestFolder() {
        std::string pattern = runtime_dir() + "/attach-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("cannot make a request folder in " + runtime_dir());
        }
        path = pattern;
    }
    ~RequestFolder() {
        for (const char* name : {"request.json", "taken.json", "cancelled.json", "start.py",
                                 "remote_start.py", "reply.json", "reply.json.tmp"}) {
            ::unlink((path + "/" + name).c_str());
        }
        ::rmdir(path.c_str());
    }
    RequestFolder(const RequestFolder&) = delete;
    RequestFolder& operator=(const RequestFolder&) = delete;

    // Takes the request back before the process takes it; false if it was first.
    bool cancel() const {
        return ::rename((path + "/request.json").c_str(), (path + "/cancelled.json").c_str()) == 0;
    }

    std::string reply() const { return read_whole_file(path + "/reply.json"); }
};

// The folder children of a --tree attach import dpdb from.
std::string tree_site(const std::string& package) {
    const std::string site = runtime_dir() + "/attach-site";
    ::mkdir(site.c_str(), 0700);
    const std::string link = site + "/dpdb";
    ::unlink(link.c_str());
    if (::symlink(package.c_str(), link.c_str()) != 0) {
        throw std::runtime_error("cannot link " + link + " to " + package);
    }
    write_private_file(site + "/sitecustomize.py", kSiteCustomize);
    return site;
}

// Loads the agent into one process and waits for its answer. Returns false (said why) if it
// could not.
bool attach_one(const attach::PythonProcess& target, const HubTarget& hub, bool tree,
                std::chrono::seconds timeout) {
    if (target.has_agent) {
        // Connected to this hub, it is debugged again if `q` or dpdb detach -p let it go;
        // connected to another (its own DPDB_HUB), that hub is where it is debugged.
        const auto again =
            ask_hub(hub, "debug_process", {{"pid", target.pid}}, "result", kListTimeoutMs);
        if (again.type == "result" && again["ok"].get<bool>()) {
            std::printf("pid %d carries the dpdb agent already; %s\n", target.pid,
                        again.str("message").c_str());
            return true;
        }
        std::fprintf(stderr,
                     "dpdb: pid %d carries the dpdb agent already, linked to another hub than "
                     "%s (see its DPDB_HUB): debug it there\n",
                     target.pid, hub.address.to_string().c_str());
        return false;
    }
    const std::string package = agent_package(target);
    RequestFolder request;
    wire::Json order = {{"hub", hub.address.to_string()},
                        {"key", wire::agent_key(hub.secret)},
                        {"package", package},
                        {"site", tree ? tree_site(package) : ""}};
    write_private_file(request.path + "/request.json", order.dump());
    if (attach::route_for(target) == attach::Route::remote_exec) {
        // The interpreter runs the file as it is: the request's place goes into it.
        const std::string script = request.path + "/remote_start.py";
        write_private_file(script, "REQUEST = " + wire::Json(request.path).dump() +
                                       "\nMAIN_THREAD = None\n" + kStartScript);
        attach::remote_exec(target, script);
    } else {
        write_private_file(request.path + "/start.py", kStartScript);
        attach::inject_library(target.pid, package + "/" + kInjectLibrary, kInjectStart,
                               request.path);
    }

    const auto started = std::chrono::steady_clock::now();
    bool told = false;
    for (;;) {
        const auto text = request.reply();
        if (!text.empty()) {
            const auto reply = wire::Json::parse(text, nullptr, false);
            if (reply.is_object() && reply.value("ok", false)) return true;
            const auto why = reply.is_object() ? reply.value("error", text) : text;
            std::fprintf(stderr, "dpdb: pid %d: %s\n", target.pid, why.c_str());
            return false;
        }
        if (!attach::running(target.pid)) {
            std::fprintf(stderr, "dpdb: pid %d exited during the attach\n", target.pid);
            return false;
        }
        const auto waited = std::chrono::steady_clock::now() - started;
        if (!told && waited > kGilNotice) {
            told = true;
            std::fprintf(stderr,
                         "dpdb: waiting for pid %d to run Python code again (a thread holds the "
                         "GIL in C code); up to %llds\n",
                         target.pid, static_cast<long long>(timeout.count()));
        }
        if (g_interrupted && request.cancel()) {
            std::fprintf(stderr, "dpdb: attach interrupted; nothing was started in pid %d\n",
                         target.pid);
            return false;
        }
        // Given up only if the process has not taken the request (it may, at this very moment).
        if (waited > timeout && request.cancel()) {
            std::fprintf(stderr,
                         "dpdb: pid %d did not run Python code within %llds; nothing was "
                         "started in it (dpdb's loader stays idle there)\n",
                         target.pid, static_cast<long long>(timeout.count()));
            return false;
        }
        std::this_thread::sleep_for(kReplyPoll);
    }
}

// What the main thread of `pid` waits in, said once: when the view of it as it waits opens (the
// session's reason is "waiting"), or, if no session comes at once (a thread holds the GIL in C),
// with its innermost frames read from its memory.
class WaitNotice {
  public:
    explicit WaitNotice(pid_t pid) : pid_(pid) {}

    void for_view() {
        if (told_) return;
        told_ = true;
        std::fprintf(stderr,
                     "dpdb: pid %d's main thread %s: its session shows it as it waits; it stops "
                     "at its next Python line once that ends\n",
                     pid_, call().c_str());
    }

    void for_no_session() {
        if (told_) return;
        told_ = true;
        std::fprintf(stderr,
                     "dpdb: pid %d's main thread %s: it stops at its next Python line once that "
                     "ends (Ctrl-C leaves it as it was)\n",
                     pid_, call().c_str());
        // Where in the program, read from outside: no session can show it before the wait ends.
        const std::string stack = main_thread_stack(pid_, kWaitingFramesShown);
        if (!stack.empty()) {
            std::fprintf(stderr, "  where it waits (read from its memory):\n%s", stack.c_str());
        }
    }

  private:
    std::string call() const {
        const auto waits_in = attach::waiting_in(pid_, pid_);
        return waits_in.empty() ? "runs C code" : "waits in C code, in " + waits_in;
    }

    pid_t pid_;
    bool told_ = false;
};

// The session of `pid`'s main thread once it has one (after a pause, or the view of a main thread
// that waits in C code); 0 if it exited first, -1 if Ctrl-C ended the wait. With every thread
// paused (`asked` of them), `others` gets how many of its other threads have a session then,
// waited for a little (kOthersWait) once the main thread has its own.
std::int64_t wait_for_session(const HubTarget& hub, pid_t pid, std::size_t asked,
                              std::size_t* others) {
    const auto started = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> main_since;
    WaitNotice notice(pid);
    for (;;) {
        const auto listing = list_hub(hub, kListTimeoutMs);
        std::int64_t main_thread = 0;
        std::size_t of_pid = 0;
        for (const auto& s : listing["sessions"]) {
            if (s.value("pid", std::int64_t{0}) != pid) continue;
            ++of_pid;
            const bool main = s.value("main_thread", false) ||
                              s.value("native_tid", std::int64_t{0}) == pid;  // (a shrunk one)
            if (!main) continue;
            if (s.value("reason", std::string()) == "waiting") notice.for_view();
            main_thread = s.value("sid", std::int64_t{0});
        }
        const auto now = std::chrono::steady_clock::now();
        if (main_thread != 0 && !main_since) main_since = now;
        if (main_thread != 0 && (of_pid >= asked || now - *main_since > kOthersWait)) {
            *others = of_pid - 1;
            return main_thread;
        }
        if (!attach::running(pid)) return 0;
        if (g_interrupted) return -1;
        if (std::chrono::steady_clock::now() - started > kSessionNotice) notice.for_no_session();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// After Ctrl-C: the processes this attach made debuggable run on without the debugger, their
// pause (if one was asked) taken back with everything else.
int undo_attach(const HubTarget& hub, const std::vector<pid_t>& attached) {
    for (const pid_t pid : attached) {
        const auto released =
            ask_hub(hub, "release_process", {{"pid", pid}}, "result", kListTimeoutMs);
        if (released.type == "result" && released["ok"].get<bool>()) {
            std::fprintf(stderr, "dpdb: attach interrupted: pid %d runs on without the debugger\n",
                         pid);
        } else {
            std::fprintf(stderr,
                         "dpdb: attach interrupted, and pid %d could not be released (%s): `dpdb "
                         "detach -p %d` does it\n",
                         pid,
                         released.type == "result" ? released.str("message").c_str() : "no answer",
                         pid);
        }
    }
    return 130;
}

}  // namespace

int attach_process_command(const std::string& hub_address, const AttachProcessOptions& options) {
    std::string why;
    const auto top = attach::inspect_python(options.pid, &why);
    if (!top) {
        std::fprintf(stderr, "dpdb: %s\n", why.c_str());
        return 1;
    }
    std::vector<attach::PythonProcess> targets = {*top};
    if (options.tree) {
        for (const pid_t below : attach::descendants(options.pid)) {
            std::string skipped;
            if (auto python = attach::inspect_python(below, &skipped)) targets.push_back(*python);
        }
    }
    // What is refused without a hub is refused before one is started.
    try {
        attach::route_for(*top);
        if (!top->has_agent) agent_package(*top);
    } catch (const attach::AttachError& error) {
        std::fprintf(stderr, "dpdb: cannot attach to pid %d: %s\n", top->pid, error.what());
        return 1;
    }
    const HubTarget hub = hub_for_attach(hub_address);
    if (hub.address.kind == HubAddress::Kind::Unix) {
        for (const auto& target : targets) {
            if (target.uid != ::geteuid()) {
                std::fprintf(stderr,
                             "dpdb: pid %d runs as uid %u, and could not reach your hub's "
                             "socket: run dpdb attach as that user\n",
                             target.pid, target.uid);
                return 1;
            }
        }
    }
    const InterruptNoted interrupts;
    std::vector<pid_t> attached;
    for (const auto& target : targets) {
        if (g_interrupted) return undo_attach(hub, attached);
        try {
            if (attach_one(target, hub, options.tree, std::chrono::seconds(options.timeout))) {
                attached.push_back(target.pid);
            } else if (target.pid == options.pid) {
                return g_interrupted ? 130 : 1;
            }
        } catch (const attach::AttachError& error) {
            std::fprintf(stderr, "dpdb: cannot attach to pid %d: %s\n", target.pid, error.what());
            if (target.pid == options.pid) return 1;
        }
    }
    if (g_interrupted) return undo_attach(hub, attached);
    const bool pause =
        options.pause.value_or(options.all_threads || (::isatty(STDIN_FILENO) && !options.tree));
    if (!pause) {
        std::printf(
            "%d process%s now debuggable through the hub at %s: `dpdb break FILE:LINE`, `dpdb "
            "pause %d`, `dpdb stacks`, and breakpoint() in its code\n",
            static_cast<int>(attached.size()), attached.size() == 1 ? " is" : "es are",
            hub.address.to_string().c_str(), options.pid);
        return 0;
    }
    const auto paused =
        ask_hub(hub, "pause_process",
                {{"pid", options.pid}, {"all_threads", options.all_threads}, {"view", true}},
                "result", kListTimeoutMs);
    if (paused.type != "result" || !paused["ok"].get<bool>()) {
        std::fprintf(stderr, "dpdb: cannot pause pid %d: %s\n", options.pid,
                     paused.type == "result" ? paused.str("message").c_str() : "no answer");
        return 1;
    }
    std::size_t others = 0;
    // An older agent does not say how many threads it asked: then only the main thread's session
    // is waited for.
    const auto asked = paused.has("data") && paused["data"].is_object()
                           ? paused["data"].value("threads", std::size_t{1})
                           : std::size_t{1};
    const auto session = wait_for_session(hub, options.pid, asked, &others);
    if (session < 0) return undo_attach(hub, {options.pid});
    if (session == 0) {
        std::fprintf(stderr, "dpdb: pid %d exited before it paused\n", options.pid);
        return 1;
    }
    if (others > 0) {
        std::fprintf(stderr,
                     "dpdb: %zu other thread%s of pid %d paused too: `sessions` lists them, "
                     "`switch N` goes to one, `dpdb detach -p %d` lets them all go\n",
                     others, others == 1 ? "" : "s", options.pid, options.pid);
    }
    wire::Channel channel;
    connect_client(channel, hub);
    ConsoleOptions follow;
    follow.follow = Follow::Session;
    follow.session = session;
    Console console(channel, follow);
    return console.run();
}

}  // namespace dpdb::cli
