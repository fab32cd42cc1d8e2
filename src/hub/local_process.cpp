#include "hub/local_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/read_file.hpp"
#include "hub/wall_clock.hpp"

namespace dpdb::hub {
namespace {

std::string read_file(const std::string& path) {
    return read_whole_file(path);
}

std::string read_link(const std::string& path) {
    char target[PATH_MAX];
    const auto size = ::readlink(path.c_str(), target, sizeof target - 1);
    return size > 0 ? std::string(target, static_cast<std::size_t>(size)) : "";
}

std::string real_path(const std::string& path) {
    char resolved[PATH_MAX];
    return ::realpath(path.c_str(), resolved) != nullptr ? resolved : path;
}

// Field 22 of /proc/PID/stat (clock ticks after boot), and its state: what tells one process
// from another that took its pid. The command name (field 2) may hold spaces and parentheses:
// the fields are counted from the last ')'.
struct Stat {
    char state = '?';
    std::int64_t parent = 0;
    std::string started;
};

std::optional<Stat> stat_of(std::int64_t pid) {
    const auto text = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = text.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(text.substr(close + 1));
    Stat stat;
    std::string field;
    for (int number = 3; fields >> field && number <= 22; ++number) {
        if (number == 3) stat.state = field.empty() ? '?' : field[0];
        if (number == 4) stat.parent = std::strtoll(field.c_str(), nullptr, 10);
        if (number == 22) stat.started = field;
    }
    if (stat.started.empty()) return std::nullopt;
    return stat;
}

std::string text_of(const wire::Json& process, const char* key) {
    const auto it = process.find(key);
    if (it == process.end()) return "";
    return it->is_string() ? it->get<std::string>() : it->is_number() ? it->dump() : "";
}

}  // namespace

const std::string& kernel_identity() {
    static const std::string identity = [] {
        auto boot = read_file("/proc/sys/kernel/random/boot_id");
        while (!boot.empty() && (boot.back() == '\n' || boot.back() == ' ')) boot.pop_back();
        const auto pids = read_link("/proc/self/ns/pid");
        return boot.empty() || pids.empty() ? std::string() : boot + ":" + pids;
    }();
    return identity;
}

std::optional<LocalView> look_at(const wire::Json& process) {
    const auto kernel = text_of(process, "kernel");
    const auto started = text_of(process, "started");
    const auto pid = process.value("pid", std::int64_t{0});
    if (kernel.empty() || started.empty() || pid <= 0 || kernel != kernel_identity()) {
        return std::nullopt;
    }
    LocalView view;
    const auto stat = stat_of(pid);
    // A zombie has ended: only its parent has not collected its status yet.
    view.running = stat && stat->started == started && stat->state != 'Z';
    if (view.running) {
        view.exe = read_link("/proc/" + std::to_string(pid) + "/exe");
        // A process on its way out has released its memory, and its executable with it, before
        // its descriptors close (a SIGKILL): no executable, and not for lack of permission.
        if (view.exe.empty() && errno == ENOENT) view.running = false;
        view.argv = command_line_of(pid);
    }
    return view;
}

std::optional<std::string> agree_on_pid(wire::Json& process, std::int64_t peer_pid) {
    const auto claimed_it = process.find("pid");
    if (peer_pid <= 0 || claimed_it == process.end() || !claimed_it->is_number_integer()) {
        return std::nullopt;
    }
    const auto claimed = claimed_it->get<std::int64_t>();
    if (claimed == peer_pid) return std::nullopt;
    const auto peer_namespace = read_link("/proc/" + std::to_string(peer_pid) + "/ns/pid");
    const auto own_namespace = read_link("/proc/self/ns/pid");
    if (!peer_namespace.empty() && peer_namespace != own_namespace) {
        process["inner_pid"] = claimed;
        process["pid"] = peer_pid;
        if (const auto stat = stat_of(peer_pid)) {
            process["started"] = stat->started;
            process["kernel"] = kernel_identity();
        }
        return std::nullopt;
    }
    if (::kill(static_cast<pid_t>(claimed), 0) == 0 || errno == EPERM) {
        return "it claims pid " + std::to_string(claimed) + ", another process; it is pid " +
               std::to_string(peer_pid);
    }
    return std::nullopt;
}

bool descends_from(std::int64_t pid, std::int64_t ancestor) {
    // Bounded: a chain of parents is short, and a process that exits on the way ends it.
    for (int depth = 0; depth < 256 && pid > 1; ++depth) {
        const auto stat = stat_of(pid);
        if (!stat) return false;
        if (stat->parent == ancestor) return true;
        pid = stat->parent;
    }
    return false;
}

void explain_silent_end(wire::Json& record) {
    const auto view = look_at(record);
    if (!view) {
        record["vanished"] = true;
        record["unverified"] = true;
        return;
    }
    if (!view->running) {
        record["vanished"] = true;
        return;
    }
    // The kernel closes close-on-exec descriptors (the agent's socket) once the new program is
    // in place: its executable is already the new one, its command line may not be yet.
    const auto before = text_of(record, "executable");
    if (!view->exe.empty() && (before.empty() || real_path(before) != view->exe)) {
        record["exec"] = view->exe;
        if (!view->argv.empty()) record["argv"] = view->argv;
        return;
    }
    record["disconnected"] = true;
}

void refresh_outlived(wire::Json& record) {
    if (!record.contains("exec") && !record.value("disconnected", false)) return;
    const auto view = look_at(record);
    if (!view) return;
    record["running"] = view->running;
    if (!view->running) return;
    // A child of subprocess closes its descriptors (the agent's socket) before the exec: while
    // it still runs Python, the path its agent announced stands. One whose announcement did not
    // get through (its handshake was slower than the wait before an exec) was taken for merely
    // disconnected: it is exec'd once it runs another executable.
    if (view->exe.empty() || view->exe == real_path(text_of(record, "executable"))) return;
    record.erase("disconnected");
    record["exec"] = view->exe;
    if (!view->argv.empty()) record["argv"] = view->argv;
}

wire::Json exit_record(const wire::Json& info, const wire::Json& ending,
                       const std::string& reason) {
    wire::Json record = info;
    record["reason"] = reason;
    if (ending.is_object()) {
        record.update(ending);
        refresh_outlived(record);  // an exec'd program by its real path, if seen
    } else {
        explain_silent_end(record);  // no word before the connection dropped
    }
    record["ended"] = now_seconds();
    return record;
}

}  // namespace dpdb::hub
