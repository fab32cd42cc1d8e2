// What the hub can see of an agent's process for itself, through /proc, when both run on one
// kernel and in one pid namespace: whether it still runs (the same process, by its start time,
// not another that took its pid) and what it runs now. Elsewhere the hub cannot know, and says
// so rather than guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "wire/message.hpp"

namespace dpdb::hub {

// The kernel and pid namespace this hub sees pids in ("BOOT_ID:pid:[INODE]"), as agents report
// theirs ("kernel" in a process's description); empty if /proc does not say.
const std::string& kernel_identity();

struct LocalView {
    bool running = false;  // false: ended, or its pid is another process's now
    std::string exe;       // what it runs now (running only; empty if unreadable)
    wire::Json argv;       // its command line now (running only; empty while an exec sets it up)
};

// The process a description names (pid, started, kernel), as the hub sees it; nothing when the
// hub cannot see it (another host or namespace, an agent that did not say when it started).
std::optional<LocalView> look_at(const wire::Json& process);

// An exit record whose agent closed its connection without a word: what became of the process,
// as far as the hub can tell. `exec` (with the new argv) when it runs another program now,
// `disconnected` when it runs on with its connection closed, `vanished` when it is gone, and
// also `unverified` when the hub could not look.
void explain_silent_end(wire::Json& record);

// At listing time, a record of a process that outlived its connection (exec'd, or disconnected)
// gets `running` (true or false) and what it runs now, where the hub can see it: a disconnected
// one that runs another executable since is exec'd.
void refresh_outlived(wire::Json& record);

// An agent on the private socket, whose process the kernel names (`peer_pid`, SO_PEERCRED, in
// the hub's pid namespace), made to agree with what it says of itself: where it lives in another
// pid namespace (a container seen from the host) it is listed under the pid the hub sees, with
// the pid it knows itself by beside it (`inner_pid`), and the hub's own view of when it started;
// where it claims the pid of another process of the hub's namespace it is refused (the reason
// is returned). A claimed pid that names no process at all impersonates nobody and stands.
std::optional<std::string> agree_on_pid(wire::Json& process, std::int64_t peer_pid);

// Whether `pid` is a child, a grandchild, ... of `ancestor`, by /proc's parents as they are now
// (a process that was orphaned hangs below init, not below its first parent).
bool descends_from(std::int64_t pid, std::int64_t ancestor);

// The record kept of a process whose connection closed for `reason`: its description, with how
// it ended where its agent said so (`ending`: status, signal, exec), else what the hub can tell
// (explain_silent_end), and when.
wire::Json exit_record(const wire::Json& info, const wire::Json& ending, const std::string& reason);

}  // namespace dpdb::hub
