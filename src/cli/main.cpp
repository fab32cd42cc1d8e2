#include <CLI/CLI.hpp>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/installation.hpp"

namespace {

// `dpdb run [OPTIONS] -m MODULE ARGS...`: as with `python -m`, everything after the module is the
// module's, options that dpdb has too included. CLI11 would read those (prefix_command stops only
// at a positional), so they are set aside before parsing. Returns how much of argv to parse.
int set_aside_module_args(int argc, char** argv, std::vector<std::string>& module_args) {
    int i = 1;
    while (i < argc && argv[i][0] == '-') i += std::string(argv[i]) == "--hub" ? 2 : 1;
    if (i >= argc || std::string(argv[i]) != "run") return argc;
    for (++i; i < argc; ++i) {
        const std::string arg = argv[i];
        int cut = 0;
        if (arg == "-m") {
            cut = i + 2;
        } else if (arg.size() > 2 && arg.rfind("-m", 0) == 0) {
            cut = i + 1;  // -mMODULE
        } else if (arg == "--python" || arg == "--hub") {
            ++i;
            continue;
        } else if (arg.empty() || arg[0] != '-') {
            return argc;  // the script: prefix_command leaves it and what follows to the program
        } else {
            continue;
        }
        if (cut >= argc) return argc;
        module_args.assign(argv + cut, argv + argc);
        return cut;
    }
    return argc;
}

// The word where a command should be, if it names none of them (`dpdb foo`), for which CLI11
// would only say that a subcommand is required.
std::string unknown_command(CLI::App& app, int argc, char** argv) {
    int i = 1;
    while (i < argc && argv[i][0] == '-') i += std::string(argv[i]) == "--hub" ? 2 : 1;
    if (i >= argc) return "";
    for (const auto* command : app.get_subcommands({})) {
        if (command->get_name() == argv[i]) return "";
    }
    return argv[i];
}

std::string command_names(CLI::App& app) {
    std::string names;
    for (const auto* command : app.get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + command->get_name();
    }
    return names;
}

}  // namespace

int main(int argc, char** argv) {
    std::setlocale(LC_CTYPE, "");
    // A hub that hangs up (it refuses connections, it stopped) must end a command with a line
    // saying so, not kill it with SIGPIPE in the middle of a TLS write. The program that `dpdb
    // run` starts gets the default back.
    std::signal(SIGPIPE, SIG_IGN);
    // Named, so that every Usage: line says `dpdb`, not the path it was run by.
    CLI::App app{"dpdb: a debugger for Python programs that run as many processes", "dpdb"};
    app.require_subcommand(1);
    app.set_version_flag(
        "--version", [] { return dpdb::cli::version_text(); },
        "the version, the interpreter dpdb runs programs with (which, and why) and its engine "
        "strategy");
    app.fallthrough();  // --hub may follow the subcommand: `dpdb ls --hub ADDR`
    std::string hub;
    app.add_option("--hub", hub, "hub address (unix:/path or tcp://host:port); default DPDB_HUB")
        ->envname("DPDB_HUB");

    dpdb::cli::RunOptions run;
    auto* run_cmd =
        app.add_subcommand("run", "run a Python program with every process of it under dpdb");
    run_cmd->add_option("--python", run.python,
                        "interpreter (default: DPDB_PYTHON, else the one dpdb was installed for)");
    run_cmd->add_option("--hub", run.hub,
                        "join this hub (unix:/path or tcp://host:port) instead of embedding one; "
                        "default DPDB_HUB");
    run_cmd->add_option("-m", run.module, "run library module as a script");
    run_cmd->add_flag("--post-mortem", run.post_mortem,
                      "open a post-mortem session on an uncaught exception in any process, "
                      "and where a framework or a process pool catches one");
    // Everything from the program on is the program's: `dpdb run prog.py --port 1` must not
    // read --port.
    run_cmd->prefix_command();
    // Not inherited from the app's fallthrough: the program and its arguments would fall through
    // to `dpdb` itself, which rejects them.
    run_cmd->fallthrough(false);
    run_cmd->footer(
        "Usage: dpdb run [OPTIONS] prog.py [ARGS...]  |  dpdb run [OPTIONS] -m MODULE [ARGS...]");

    dpdb::cli::HubCommandOptions hub_options;
    auto* hub_cmd = app.add_subcommand("hub", "run a standalone hub");
    hub_cmd->add_option("--socket", hub_options.socket_path,
                        "Unix socket path (default: hub.sock in the runtime dir)");
    hub_cmd->add_option("--listen", hub_options.listen, "also listen on TCP HOST:PORT (TLS)");
    hub_cmd->add_option("--tls-cert", hub_options.tls_cert,
                        "PEM certificate (default: self-signed, made at first start)");
    hub_cmd->add_option("--tls-key", hub_options.tls_key, "PEM private key for --tls-cert");
    hub_cmd->add_flag("--insecure", hub_options.insecure, "plain TCP without TLS");
    hub_cmd->add_option("--state-dir", hub_options.state_dir,
                        "secret, certificate and store (default: ~/.local/state/dpdb/hub)");
    hub_cmd->add_flag("-q,--quiet", hub_options.quiet, "print only the addresses");
    hub_cmd
        ->add_option("--idle-exit", hub_options.idle_exit,
                     "exit after this many seconds with no process connected (default: never; "
                     "the hub dpdb attach -p starts: DPDB_LOCAL_HUB_IDLE, 600)")
        ->check(CLI::PositiveNumber);
    hub_cmd->add_flag("--stop", hub_options.stop,
                      "stop the hub on --socket, else the Unix socket DPDB_HUB names, else your "
                      "local hub, whoever started it (`dpdb hub` or `dpdb attach -p`)");

    dpdb::cli::LsOptions ls_options;
    auto* ls_cmd = app.add_subcommand(
        "ls", "list processes and paused sessions (a summary when there are more than 50)");
    ls_cmd->add_flag("-a,--all", ls_options.all, "every process and session, however many");
    ls_cmd->add_flag("--json", ls_options.json, "machine-readable output: everything");

    std::string session;
    bool next = false;
    auto* attach_cmd = app.add_subcommand("attach", "attach to a paused session");
    attach_cmd->add_option("session", session, "session number (default: the only one)");
    attach_cmd->add_flag("--next", next, "wait for the next breakpoint anywhere");
    dpdb::cli::AttachProcessOptions attach_process;
    attach_cmd->add_option("-p,--pid", attach_process.pid,
                           "a Python process that runs already: load the agent into it");
    attach_cmd->add_flag("--tree", attach_process.tree,
                         "with -p: and every Python process below it, and those it starts later");
    bool pause_after = false;
    bool no_pause = false;
    attach_cmd->add_flag("--pause", pause_after, "with -p: stop it and open a prompt");
    attach_cmd->add_flag("--no-pause", no_pause, "with -p: leave it running");
    attach_cmd->add_flag("--all-threads", attach_process.all_threads,
                         "with -p: a session for every thread (`sessions`, `switch N`)");
    attach_cmd->add_option("--timeout", attach_process.timeout,
                           "with -p: seconds to wait for it to let go of the GIL (default 60)");

    dpdb::cli::BreakOptions break_options;
    auto* break_cmd = app.add_subcommand(
        "break", "global breakpoints, armed in every process of the hub, now and later");
    break_cmd->add_option("spec", break_options.args,
                          "FILE:LINE [if EXPR], FUNCTION, 'uncaught exceptions' or 'raised "
                          "exceptions'; with --clear, the breakpoint's ID");
    break_cmd->add_flag("--list", break_options.list, "list them, with how many processes match");
    break_cmd->add_flag("--clear", break_options.clear,
                        "clear breakpoint ID (dpdb break --clear ID), or all without an ID");
    break_cmd->add_flag("--every", break_options.every,
                        "arm every file FILE matches (written */FILE), not just one");
    break_cmd->add_option("--log", break_options.log,
                          "a logpoint: send this message ({expr} parts are evaluated in the "
                          "frame, as in an f-string) instead of stopping");
    break_cmd->add_option("--cond", break_options.cond, "only when this expression is true");
    bool ps_json = false;
    auto* ps_cmd = app.add_subcommand("ps", "the process tree: state, tags, exits and crashes");
    ps_cmd->add_flag("--json", ps_json, "machine-readable output");
    std::vector<std::string> stack_pids;
    bool stacks_all = false;
    bool stacks_json = false;
    auto* stacks_cmd =
        app.add_subcommand("stacks", "Python stacks of every thread, stopping nothing");
    stacks_cmd->add_option("pids", stack_pids, "process ids (default: all)");
    std::vector<pid_t> read_pids;
    stacks_cmd->add_option("-p,--pid", read_pids,
                           "a process's stacks even without dpdb in it: read from its memory "
                           "where it carries no agent (DPDB_STACKS=memory: always)");
    bool stacks_tree = false;
    stacks_cmd->add_flag("--tree", stacks_tree,
                         "with -p: the Python processes below it too (children, theirs...)");
    stacks_cmd->add_flag("--all", stacks_all, "every process (the default)");
    stacks_cmd->add_flag("--json", stacks_json, "machine-readable output");
    bool debugger_frames = false;
    stacks_cmd->add_flag("--debugger-frames", debugger_frames,
                         "also the frames of dpdb, pdb and bdb above a paused thread's code");
    long long log_pid = 0;
    auto* log_cmd = app.add_subcommand("log", "how an ended process ended, with its last stacks");
    log_cmd->add_option("pid", log_pid, "process id")->required();
    dpdb::cli::LogsOptions logs_options;
    auto* logs_cmd = app.add_subcommand(
        "logs", "logpoint messages of every process, in time order (dpdb break --log)");
    logs_cmd->add_option("pids", logs_options.pids, "process ids (default: all)");
    logs_cmd->add_flag("-f,--follow", logs_options.follow, "then print new ones as they come");
    logs_cmd->add_flag("--json", logs_options.json, "one JSON object per line");
    logs_cmd->add_option("--trace-events", logs_options.trace_events,
                         "write Chrome trace-event JSON (Perfetto, chrome://tracing) to this file");
    long long detach_pid = 0;
    auto* detach_cmd = app.add_subcommand(
        "detach", "stop debugging a process: breakpoints out, paused threads resumed");
    detach_cmd->add_option("-p,--pid", detach_pid, "process id")->required();

    long long pause_pid = 0;
    bool all_threads = false;
    auto* pause_cmd = app.add_subcommand("pause", "stop a process at its next Python line");
    pause_cmd->add_option("pid", pause_pid, "process id")->required();
    pause_cmd->add_flag("--all-threads", all_threads, "a session for every thread");

    std::string dap_listen;
    auto* dap_cmd = app.add_subcommand(
        "dap",
        "a Debug Adapter Protocol server for IDEs (VS Code, nvim-dap): see docs/ide.md in "
        "dpdb's source");
    dap_cmd->add_option("--listen", dap_listen,
                        "serve on 127.0.0.1:PORT instead of stdio (0: any free port)");

    std::string web_listen;
    auto* web_cmd = app.add_subcommand(
        "web", "the job in a browser: prints a URL to open (see docs/web.md in dpdb's source)");
    web_cmd->add_option("--listen", web_listen,
                        "serve on HOST:PORT (default 127.0.0.1, any free port); off loopback "
                        "over TLS");
    bool web_tls = false;
    web_cmd->add_flag("--tls", web_tls, "serve over TLS on loopback too");

    if (const auto unknown = unknown_command(app, argc, argv); !unknown.empty()) {
        std::fprintf(stderr, "dpdb: no command \"%s\"; the commands are %s (`dpdb --help`)\n",
                     unknown.c_str(), command_names(app).c_str());
        return 2;
    }
    std::vector<std::string> module_args;
    const int parsed = set_aside_module_args(argc, argv, module_args);
    try {
        app.parse(parsed, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? 0 : 2;
    }
    try {
        if (*run_cmd) {
            if (run.hub.empty()) run.hub = hub;
            for (const auto& extra : run_cmd->remaining()) run.args.push_back(extra);
            run.args.insert(run.args.end(), module_args.begin(), module_args.end());
            return dpdb::cli::run_command(run);
        }
        if (*hub_cmd) {
            hub_options.hub = hub;
            return dpdb::cli::hub_command(hub_options);
        }
        if (*ls_cmd) return dpdb::cli::ls_command(hub, ls_options);
        if (*attach_cmd && attach_process.all_threads && (attach_process.pid == 0 || no_pause)) {
            std::fprintf(stderr,
                         "dpdb: --all-threads pauses a process: it needs -p PID, and not "
                         "--no-pause\n");
            return 2;
        }
        if (*attach_cmd && attach_process.pid != 0) {
            if (pause_after || no_pause) attach_process.pause = pause_after;
            return dpdb::cli::attach_process_command(hub, attach_process);
        }
        if (*attach_cmd) return dpdb::cli::attach_command(hub, session, next);
        if (*break_cmd) return dpdb::cli::break_command(hub, break_options);
        if (*ps_cmd) return dpdb::cli::ps_command(hub, ps_json);
        if (*stacks_cmd)
            return dpdb::cli::stacks_command(hub, stack_pids, read_pids, stacks_tree, stacks_json,
                                             debugger_frames);
        if (*log_cmd) return dpdb::cli::log_command(hub, log_pid);
        if (*logs_cmd) return dpdb::cli::logs_command(hub, logs_options);
        if (*detach_cmd) return dpdb::cli::detach_process_command(hub, detach_pid);
        if (*pause_cmd) return dpdb::cli::pause_command(hub, pause_pid, all_threads);
        if (*dap_cmd) return dpdb::cli::dap_command(hub, dap_listen);
        if (*web_cmd) return dpdb::cli::web_command(hub, web_listen, web_tls);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "dpdb: %s\n", error.what());
        return 2;
    }
    return 2;
}
