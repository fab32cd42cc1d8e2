// The per-user runtime directory where hubs leave their socket, secret and description, so that
// `dpdb ls` and `dpdb attach` in another terminal of the same user find them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dpdb {

// ${XDG_RUNTIME_DIR:-/tmp}/dpdb-UID, created 0700; throws if it exists with another owner or
// with access for anyone else.
std::string runtime_dir();

// Writes a file only its owner may read (0600), replacing it atomically.
void write_private_file(const std::string& path, const std::string& content);

// Reads a secret file; throws if it is readable by others than its owner.
std::string read_private_file(const std::string& path);

// The secret that goes with a hub socket: the file SOCKET.token beside it.
std::string token_path_for_socket(const std::string& socket_path);

// The hub sockets in the runtime directory, newest first.
std::vector<std::string> discovered_hub_sockets();

// Removes a run's folder (run-PID.d): its sitecustomize.py and the bytecode that Python caches of
// it (__pycache__, unless PYTHONDONTWRITEBYTECODE), and nothing else anyone put there.
void remove_run_folder(const std::string& path);

// Removes what runs that ended without cleaning up (killed) left in the runtime directory: their
// folders and logs (run-PID.d, run-PID.log) when process PID is gone. Their sockets are removed
// by whoever finds them dead (a connection refused).
void remove_leftovers_of_dead_runs();

}  // namespace dpdb
