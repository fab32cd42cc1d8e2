#include "cli/describe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "common/printable.hpp"

namespace dpdb::cli {
namespace {

std::string basename(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Every field shown here came from a peer: escaped, so that a terminal runs no sequence of its.
std::string text(const wire::Json& item, const char* key) {
    const auto it = item.find(key);
    if (it == item.end() || it->is_null()) return "";
    return shown(it->is_string() ? it->get<std::string>() : it->dump());
}

std::string short_argv(const wire::Json& item) {
    const auto it = item.find("argv");
    if (it == item.end() || !it->is_array()) return "";
    std::string out;
    // The interpreter and the script by their names: `python3 /long/path/to/service.py` cut to
    // 40 characters would lose the name that tells the processes apart.
    bool script_seen = false;
    std::string previous;
    for (const auto& arg : *it) {
        if (!arg.is_string()) continue;
        auto word = shown(arg.get<std::string>());
        const bool script = !out.empty() && !script_seen && !word.empty() && word[0] != '-' &&
                            previous != "-m" && previous != "-c";
        if (out.empty() || script) word = basename(word);
        script_seen = script_seen || script || previous == "-m" || previous == "-c";
        previous = arg.get<std::string>();
        out += (out.empty() ? "" : " ") + word;
        if (out.size() > 40) return out.substr(0, 39) + "…";
    }
    return out;
}

std::string age(const wire::Json& item) {
    const auto it = item.find("since");
    if (it == item.end() || !it->is_number()) return "";
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const long seconds = std::max(0L, static_cast<long>(now - it->get<double>()));
    if (seconds < 120) return std::to_string(seconds) + "s";
    if (seconds < 7200) return std::to_string(seconds / 60) + "m";
    return std::to_string(seconds / 3600) + "h";
}

}  // namespace

std::string unreachable_note(const wire::Json& item) {
    const auto it = item.find("unreachable_since");
    if (it == item.end() || !it->is_number()) return "";
    const auto when = static_cast<std::time_t>(it->get<double>());
    std::tm local{};
    ::localtime_r(&when, &local);
    char clock[16];
    std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
    return std::string("unreachable since ") + clock;
}

// Columns on a terminal: a UTF-8 character (a tree's "└─") takes one, whatever its bytes.
std::size_t display_width(const std::string& text) {
    std::size_t width = 0;
    for (const unsigned char c : text) width += (c & 0xC0) != 0x80 ? 1 : 0;
    return width;
}

std::string table(const std::vector<std::vector<std::string>>& given) {
    // Cells hold what peers sent: escaped here whatever built them (escaping is idempotent).
    std::vector<std::vector<std::string>> rows = given;
    for (auto& row : rows) {
        for (auto& cell : row) cell = shown(cell);
    }
    std::vector<std::size_t> widths;
    for (const auto& row : rows) {
        widths.resize(std::max(widths.size(), row.size()));
        for (std::size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], display_width(row[i]));
        }
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size()) line += std::string(widths[i] - display_width(row[i]) + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string tags_of(const wire::Json& item) {
    const auto it = item.find("tags");
    if (it == item.end() || !it->is_object()) return "";
    std::string out;
    for (const auto& [key, value] : it->items()) {
        if (!out.empty()) out += ",";
        std::string lower = key;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        out +=
            shown(lower) + "=" + shown(value.is_string() ? value.get<std::string>() : value.dump());
    }
    return out;
}

std::string process_label(const wire::Json& item) {
    std::string label = "pid " + text(item, "pid");
    // A process in a container, as the hub's side sees it: the pid it knows itself by beside.
    if (const auto inner = text(item, "inner_pid"); !inner.empty()) {
        label += " (" + inner + " in its pid namespace)";
    }
    if (const auto t = tags_of(item); !t.empty()) label += " [" + t + "]";
    const auto name = text(item, "process_name");
    if (!name.empty() && name != "MainProcess") {
        label += " " + name;
    } else if (const auto argv = short_argv(item); !argv.empty()) {
        label += " " + argv;
    }
    return label;
}

std::string short_command(const wire::Json& item) {
    const auto name = text(item, "process_name");
    if (name.empty() || name == "MainProcess") return short_argv(item);
    return name + ": " + short_argv(item);
}

std::string location(const wire::Json& session) {
    return basename(text(session, "file")) + ":" + text(session, "line") + " in " +
           text(session, "function") + "()";
}

// The host, and whether the hub can reach the process there (hub/hub_liveness.cpp).
std::string host_cell(const wire::Json& item) {
    const auto note = unreachable_note(item);
    return text(item, "host") + (note.empty() ? "" : " (" + note + ")");
}

std::string sessions_table(const wire::Json& sessions) {
    std::vector<std::vector<std::string>> rows = {
        {"SESSION", "PID", "HOST", "TAGS", "THREAD", "WHERE", "PAUSED", "ATTACHED"}};
    for (const auto& s : sessions) {
        rows.push_back({text(s, "sid"), text(s, "pid"), host_cell(s), tags_of(s),
                        text(s, "thread") + " (" + text(s, "tid") + ")", location(s), age(s),
                        s.value("attached", false) ? "yes" : "no"});
    }
    return table(rows);
}

std::string processes_table(const wire::Json& processes) {
    std::vector<std::vector<std::string>> rows = {
        {"PID", "PPID", "HOST", "PYTHON", "TAGS", "SESSIONS", "COMMAND"}};
    for (const auto& p : processes) {
        std::string paused;
        for (const auto& id : p.value("sessions", wire::Json::array())) {
            paused += (paused.empty() ? "" : ",") + id.dump();
        }
        rows.push_back({text(p, "pid"), text(p, "ppid"), host_cell(p), text(p, "python"),
                        tags_of(p), paused.empty() ? "-" : paused, short_argv(p)});
    }
    return table(rows);
}

}  // namespace dpdb::cli
