// One function per `dpdb` subcommand; main.cpp only parses arguments.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dpdb::cli {

struct RunOptions {
    std::string hub;     // join this hub instead of embedding one
    std::string python;  // interpreter to run the program with
    std::string module;  // -m MODULE
    std::vector<std::string> args;
    bool post_mortem = false;
};

int run_command(const RunOptions& options);
struct HubCommandOptions {
    std::string socket_path;  // default: hub.sock in the runtime directory
    std::string listen;       // HOST:PORT for TCP
    std::string tls_cert;     // default: a self-signed pair made at first start
    std::string tls_key;
    bool insecure = false;  // plain TCP
    std::string state_dir;  // secret, certificate, store; default ~/.local/state/dpdb/hub
    bool quiet = false;
    bool stop = false;  // stop the hub on socket_path (else hub's, else the local one) instead
    std::string hub;    // --hub or DPDB_HUB: the hub --stop stops when socket_path is not given
    long long idle_exit = 0;  // seconds with no process after which it exits; 0: never
};

int hub_command(const HubCommandOptions& options);

struct AttachProcessOptions {
    int pid = 0;
    bool tree = false;          // and every Python process below it
    bool all_threads = false;   // the pause gives every thread a session, not the main one only
    std::optional<bool> pause;  // default: pause and prompt when on a terminal, not --tree
    long long timeout = 60;     // seconds to wait for the process to let go of the GIL
};

int attach_process_command(const std::string& hub, const AttachProcessOptions& options);

struct LsOptions {
    bool json = false;  // everything, machine-readable
    bool all = false;   // every process and session, however many
};

int ls_command(const std::string& hub, const LsOptions& options);

struct BreakOptions {
    std::vector<std::string> args;  // FILE:LINE [if EXPR...] | FUNCTION | [ID] with --clear
    bool list = false;
    bool clear = false;
    bool every = false;  // arm every file the spec matches, on purpose
    std::string log;     // a logpoint: this message instead of a stop
    std::string cond;    // --cond EXPR, the same as `if EXPR`
};

int break_command(const std::string& hub, const BreakOptions& options);
int ps_command(const std::string& hub, bool json);
// `pids` asked of the hubs (all processes without any); `read_pids` (-p) from their agents or,
// without one, from their memory (cli/memory_stacks), with their Python descendants if `tree`.
int stacks_command(const std::string& hub, const std::vector<std::string>& pids,
                   const std::vector<pid_t>& read_pids, bool tree, bool json, bool debugger_frames);
int log_command(const std::string& hub, long long pid);

struct LogsOptions {
    std::vector<std::string> pids;  // none: every process
    bool follow = false;
    bool json = false;         // one JSON object per line
    std::string trace_events;  // write Chrome trace-event JSON to this file instead
};

int logs_command(const std::string& hub, const LogsOptions& options);
int pause_command(const std::string& hub, long long pid, bool all_threads);
int detach_process_command(const std::string& hub, long long pid);
int attach_command(const std::string& hub, const std::string& session, bool next);
// The Debug Adapter Protocol on stdio, or on a loopback TCP port (listen = HOST:PORT).
int dap_command(const std::string& hub, const std::string& listen);
// `dpdb web`: the job in a browser (src/web), on a port (0: any free one); over TLS off loopback
// or if `tls`.
int web_command(const std::string& hub, const std::string& listen, bool tls);

}  // namespace dpdb::cli
