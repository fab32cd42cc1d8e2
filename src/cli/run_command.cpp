// dpdb run: starts a Python program so that it and every Python process below it carry the agent,
// hosts a private hub (or joins DPDB_HUB), and follows the sessions on this terminal.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/console.hpp"
#include "cli/embedded_hub.hpp"
#include "cli/hub_dialer.hpp"
#include "cli/hub_locator.hpp"
#include "cli/installation.hpp"
#include "cli/local_hub.hpp"
#include "cli/program_command.hpp"
#include "cli/program_terminal.hpp"
#include "cli/site_customize.hpp"
#include "common/runtime_dir.hpp"
#include "wire/auth.hpp"

namespace dpdb::cli {
namespace {

void prepend_env_path(const char* name, const std::string& entry) {
    const char* old = std::getenv(name);
    const std::string value = (old != nullptr && *old != '\0') ? entry + ":" + old : entry;
    ::setenv(name, value.c_str(), 1);
}

// The embedded hub's sockets (the listening one, its end of our own connection) are not
// close-on-exec: asio does not ask for it. The program must not inherit them: every process of it
// would hold them, and a copy of the listening socket outliving this client would make the stale
// socket file look like a live hub to `dpdb ls` (which would then wait for an answer in vain).
void keep_from_program(const std::string& hub_socket_path) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return;
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        const int fd = std::atoi(entry->d_name);
        sockaddr_un local{};
        socklen_t size = sizeof(local);
        if (fd == ::dirfd(dir) ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) != 0 ||
            local.sun_family != AF_UNIX || size <= offsetof(sockaddr_un, sun_path)) {
            continue;
        }
        const std::size_t length = strnlen(local.sun_path, size - offsetof(sockaddr_un, sun_path));
        if (hub_socket_path == std::string(local.sun_path, length)) {
            ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
        }
    }
    ::closedir(dir);
}

pid_t start_program(const std::vector<std::string>& argv, ProgramTerminal* terminal) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("cannot fork");
    if (pid == 0) {
        if (terminal != nullptr) terminal->become_program_output();
        std::vector<char*> raw;
        raw.reserve(argv.size() + 1);
        for (const auto& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
        raw.push_back(nullptr);
        std::signal(SIGPIPE, SIG_DFL);  // dpdb ignores it (main.cpp); the program must not
        ::execvp(raw[0], raw.data());
        std::fprintf(stderr, "dpdb: cannot run %s: %s\n", raw[0], std::strerror(errno));
        ::_exit(127);
    }
    if (terminal != nullptr) terminal->close_program_side();
    return pid;
}

// Waits for nothing: reaps the program if it has ended and remembers how.
struct ProgramWatch {
    pid_t pid;
    std::optional<int> status;

    bool running() {
        if (status) return false;
        int raw = 0;
        if (::waitpid(pid, &raw, WNOHANG) == pid) {
            status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
        }
        return !status;
    }
};

// What `dpdb run` does with signals sent to it, as a process supervisor would: SIGTERM, and a
// SIGINT sent by a process (kill, not Ctrl-C at the terminal, which reaches the program by
// itself), go on to the program; dpdb ends when it does. The handler is in place before the
// program starts and stays: a supervisor may send its signal as soon as the program said it is
// ready, and the console must not take it meanwhile.
std::atomic<pid_t> g_program{0};
std::atomic<int> g_signal_before_start{0};

void forward_to_program(int signal, siginfo_t* info, void*) {
    const bool sent = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
    if (signal == SIGINT && !sent) {
        interrupt_console();  // the terminal's: it interrupts a command at the prompt
        return;
    }
    if (const pid_t program = g_program.load(); program > 0) {
        ::kill(program, signal);
    } else {
        g_signal_before_start = signal;  // sent once the program's pid is known
    }
}

// A signal ignored when dpdb run started (a job started in the background by a script, nohup)
// stays ignored, and the program inherits it so, as it would without dpdb.
void forward_signals() {
    struct sigaction action {};
    action.sa_sigaction = forward_to_program;
    action.sa_flags = SA_SIGINFO;  // no SA_RESTART: the console's wait wakes for a Ctrl-C
    sigemptyset(&action.sa_mask);
    for (const int signal : {SIGTERM, SIGINT}) {
        struct sigaction current {};
        if (sigaction(signal, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) == 0 &&
            current.sa_handler == SIG_IGN) {
            continue;
        }
        sigaction(signal, &action, nullptr);
    }
}

void forward_signals_to(pid_t program) {
    g_program = program;
    if (const int early = g_signal_before_start.exchange(0); early != 0) ::kill(program, early);
}

// How long the program's start waits for a joined hub's answer at most: a hub that is up answers
// within milliseconds; one behind a cut network may leave a connect hanging for minutes.
constexpr auto kFirstDialWait = std::chrono::seconds(2);
constexpr int kDialTickMs = 100;

// What the program wrote since, copied to the terminal as it is (no console is showing notices).
void copy_program_output(ProgramTerminal* terminal) {
    if (terminal == nullptr || terminal->fd() < 0) return;
    const std::string text = terminal->read_available();
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t wrote = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
        if (wrote <= 0 && errno != EINTR) return;
        if (wrote > 0) done += static_cast<std::size_t>(wrote);
    }
}

// Until the hub answers (its channel) or the program ends (nothing), copying the program's
// output meanwhile.
std::unique_ptr<wire::Channel> dial_while_running(HubDialer& dialer, ProgramWatch& program,
                                                  ProgramTerminal* terminal) {
    while (program.running()) {
        if (terminal != nullptr && terminal->fd() >= 0) {
            pollfd fd = {terminal->fd(), POLLIN, 0};
            if (::poll(&fd, 1, kDialTickMs) > 0) copy_program_output(terminal);
            if (dialer.wait(std::chrono::milliseconds(0))) return dialer.take_channel();
        } else if (dialer.wait(std::chrono::milliseconds(kDialTickMs))) {
            return dialer.take_channel();
        }
    }
    copy_program_output(terminal);
    return nullptr;
}

}  // namespace

int run_command(const RunOptions& options) {
    if (options.module.empty() && options.args.empty()) {
        std::fprintf(
            stderr, "dpdb run: say which program: dpdb run prog.py [args] or dpdb run -m module\n");
        return 2;
    }
    const std::string python = program_python(options.python);  // before anything to clean up
    // The run's files are named by this pid (unique on this host); the id the hub scopes a run's
    // events by is unique across hosts too: two `dpdb run` on two hosts joined to one hub can
    // have the same pid.
    const std::string pid = std::to_string(::getpid());
    const std::string run_id = pid + "-" + wire::random_hex(8);
    const std::string dir = runtime_dir();

    std::unique_ptr<EmbeddedHub> embedded;
    std::unique_ptr<HubDialer> dialer;
    HubTarget target;
    std::string joined = options.hub;
    if (joined.empty()) {
        if (const char* env = std::getenv("DPDB_HUB"); env != nullptr) joined = env;
    }
    std::string secret_file;  // a joined hub's, when its secret cannot be read yet
    if (!joined.empty()) {
        target.address = HubAddress::parse(joined);  // a bad address is the user's to fix now
        try {
            target.secret = secret_for(target.address);
        } catch (const std::exception&) {
            // A Unix-socket hub not started yet writes its token file when it starts; a hub
            // given no secret at all is the user's to fix now.
            secret_file = hub_secret_file(target.address);
            if (secret_file.empty()) throw;
        }
    } else {
        const std::string program =
            options.module.empty() ? options.args.front() : "-m " + options.module;
        EmbeddedHubConfig config;
        config.socket_path = dir + "/run-" + pid + ".sock";
        config.name = "run " + pid + ": " + program;
        config.log_path = dir + "/run-" + pid + ".log";
        // The program and its descendants hold the agent's key and can read the secret's file
        // (they run as the user): the hub still never takes them for a client (threat model).
        config.network.job_parent = ::getpid();
        embedded = std::make_unique<EmbeddedHub>(std::move(config));
        target.address.path = embedded->socket_path();
        target.secret = embedded->secret();
    }

    const std::string boot_dir = dir + "/run-" + pid + ".d";
    ::mkdir(boot_dir.c_str(), 0700);
    write_private_file(boot_dir + "/sitecustomize.py", kSiteCustomize);

    ::setenv("DPDB_HUB", target.address.to_string().c_str(), 1);
    // The program's processes get the agent key, never the secret: whoever reads a process's
    // environment (a child running as another user can be read by that user) may pose as a
    // debugged process, but not attach to one (wire/auth.hpp).
    if (!target.secret.empty()) {
        ::setenv("DPDB_AGENT_KEY", wire::agent_key(target.secret).c_str(), 1);
        ::unsetenv("DPDB_TOKEN");
        ::unsetenv("DPDB_TOKEN_FILE");
    }
    ::setenv("DPDB_RUN_ID", run_id.c_str(), 1);
    // Ctrl-C pauses the program only in its first process, the child of this one (_ctrl_c.py).
    ::setenv("DPDB_RUN_PID", pid.c_str(), 1);
    ::setenv("PYTHONBREAKPOINT", "dpdb.set_trace", 1);
    if (options.post_mortem) ::setenv("DPDB_POST_MORTEM", "1", 1);
    // Ctrl-C pauses the program rather than interrupting it only when there is a terminal to
    // show the prompt on.
    if (::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO)) {
        ::setenv("DPDB_RUN_INTERACTIVE", "1", 1);
    } else {
        ::unsetenv("DPDB_RUN_INTERACTIVE");
    }
    prepend_env_path("PYTHONPATH", boot_dir);

    set_environment_for_embedders();
    const auto argv = program_command(python, options.module, options.args);

    std::unique_ptr<wire::Channel> channel;
    if (embedded) {
        channel = std::make_unique<wire::Channel>();
        connect_client(*channel, target);
        keep_from_program(embedded->socket_path());
    } else {
        // Started once the environment is the program's: the dialer's thread reads it too.
        dialer = std::make_unique<HubDialer>(target.address, target.secret, secret_file);
        if (!dialer->wait_first_attempt(kFirstDialWait)) {
            // The job never waits on the debugger: a hub that is down, restarting or cut off
            // is dialled on in the background, and the program's agents dial it themselves
            // (reading the secret's file at every attempt when there is no key to give them).
            std::string why = dialer->last_failure();
            if (why.empty()) why = "no answer from the hub at " + joined + " yet";
            std::fprintf(stderr,
                         "dpdb: %s; the program runs, and is debuggable once the hub answers\n",
                         why.c_str());
        }
    }
    const auto terminal = ProgramTerminal::open_if_wanted();
    // Ctrl-C while the program runs is for the program (it shares our process group); at the
    // prompt the line editor takes the terminal's ISIG away, so Ctrl-C only clears the line. The
    // console hears of it only to interrupt a command that an attached session runs.
    forward_signals();
    ProgramWatch program{start_program(argv, terminal.get()), std::nullopt};
    forward_signals_to(program.pid);

    ConsoleOptions console_options;
    console_options.follow = Follow::Run;
    console_options.run_id = run_id;
    console_options.program_running = [&program] { return program.running(); };
    console_options.program_pid = program.pid;
    console_options.program_terminal = terminal.get();
    console_options.sigint_handled_by_caller = true;
    // The console ends early if it lost the hub or its terminal; the program runs on regardless
    // (its sessions wait for a client, or for the hub to come back), and so does the embedded
    // hub. A joined hub is dialled again meanwhile: the console carries on once it answers.
    // The program's exit status is what `dpdb run` returns.
    for (;;) {
        if (!channel) channel = dial_while_running(*dialer, program, terminal.get());
        if (!channel) break;
        Console console(*channel, console_options);
        bool lost = false;
        try {
            lost = console.run() != 0 && program.running();
        } catch (const std::exception& error) {  // the hub went away before the console was on
            std::fprintf(stderr, "dpdb: lost the hub: %s\n", error.what());
            lost = program.running();
        }
        if (!lost || console.hung_up() || !dialer) {
            if (lost) {
                std::fprintf(stderr,
                             "dpdb: the program runs on; its breakpoints wait for the hub\n");
            }
            console.relay_until_program_ends();
            break;
        }
        std::fprintf(stderr,
                     "dpdb: the program runs on; the console carries on once the hub answers\n");
        channel.reset();
        dialer = std::make_unique<HubDialer>(target.address, target.secret, secret_file);
    }
    while (program.running()) ::usleep(50 * 1000);
    remove_run_folder(boot_dir);
    if (embedded) ::unlink((dir + "/run-" + pid + ".log").c_str());
    return *program.status;
}

}  // namespace dpdb::cli
