#include "wire/contents.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>

namespace dpdb::wire {
namespace {

enum class Kind {
    String,  // at most `bound` bytes
    Int,     // within [low, high]
    Number,  // finite
    Bool,
    Strings,  // an array of at most `bound` strings
    Ints,     // an array of integers
    Object,   // any object (checked elsewhere, or read by nobody)
};

constexpr std::int64_t kNoLow = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kNoHigh = std::numeric_limits<std::int64_t>::max();
// Linux pids stop at 2^22; other kernels' at 2^31 - 1.
constexpr std::int64_t kMaxPid = 2147483647;
// What dpdb itself writes (a version, a run id, a kernel's identity, a signal's name) is short.
// What the program chose (its arguments, paths, thread names, a logpoint's text) is bounded by
// the frame alone: refusing it would drop a legitimate process.
constexpr std::size_t kShort = 128;
constexpr std::size_t kAny = kMaxFrameBytes;

struct Rule {
    const char* name;
    Kind kind;
    std::size_t bound = kAny;
    std::int64_t low = kNoLow;
    std::int64_t high = kNoHigh;
    bool required = false;
};

Rule required(Rule rule) {
    rule.required = true;
    return rule;
}

[[noreturn]] void refuse(const std::string& where, const char* name, const std::string& what) {
    throw ProtocolError(where + "." + name + " " + what);
}

void check_value(const Json& value, const Rule& rule, const std::string& where) {
    switch (rule.kind) {
        case Kind::String:
            if (!value.is_string()) refuse(where, rule.name, "is not a string");
            if (value.get_ref<const std::string&>().size() > rule.bound) {
                refuse(where, rule.name, "is longer than " + std::to_string(rule.bound) + " bytes");
            }
            return;
        case Kind::Int: {
            if (!value.is_number_integer()) refuse(where, rule.name, "is not an integer");
            // An unsigned value past int64 is not one either.
            if (value.is_number_unsigned() &&
                value.get<std::uint64_t>() > static_cast<std::uint64_t>(kNoHigh)) {
                refuse(where, rule.name, "is out of range");
            }
            const auto number = value.get<std::int64_t>();
            if (number < rule.low || number > rule.high)
                refuse(where, rule.name, "is out of range");
            return;
        }
        case Kind::Number:
            if (!value.is_number() || !std::isfinite(value.get<double>())) {
                refuse(where, rule.name, "is not a finite number");
            }
            return;
        case Kind::Bool:
            if (!value.is_boolean()) refuse(where, rule.name, "is not true or false");
            return;
        case Kind::Strings:
            if (!value.is_array()) refuse(where, rule.name, "is not an array");
            if (value.size() > rule.bound) refuse(where, rule.name, "has too many items");
            for (const auto& item : value) {
                if (!item.is_string())
                    refuse(where, rule.name, "holds a value that is not a string");
            }
            return;
        case Kind::Ints:
            if (!value.is_array()) refuse(where, rule.name, "is not an array");
            for (const auto& item : value) {
                if (!item.is_number_integer() ||
                    (item.is_number_unsigned() && item.get<std::uint64_t>() > kNoHigh)) {
                    refuse(where, rule.name, "holds a value that is not an integer");
                }
            }
            return;
        case Kind::Object:
            if (!value.is_object()) refuse(where, rule.name, "is not an object");
            return;
    }
}

void check_object(const Json& object, const std::string& where, std::initializer_list<Rule> rules) {
    if (!object.is_object()) throw ProtocolError(where + " is not an object");
    for (const auto& rule : rules) {
        const auto it = object.find(rule.name);
        if (it == object.end() || (it->is_null() && !rule.required)) {
            if (rule.required) refuse(where, rule.name, "is missing");
            continue;
        }
        check_value(*it, rule, where);
    }
}

// Tags name a process in listings and are copied into each of its stored logpoint messages:
// a few short names and values.
void check_tags(const Json& tags, const std::string& where) {
    if (!tags.is_object()) refuse(where, "tags", "is not an object");
    if (tags.size() > kMaxTags) refuse(where, "tags", "has more than " + std::to_string(kMaxTags));
    std::size_t bytes = 0;
    for (const auto& [name, value] : tags.items()) {
        if (!value.is_string()) refuse(where, "tags", "holds a value that is not a string");
        bytes += name.size() + value.get_ref<const std::string&>().size();
    }
    if (bytes > kMaxTagsBytes) {
        refuse(where, "tags", "hold more than " + std::to_string(kMaxTagsBytes) + " bytes");
    }
}

// A process as described to the hub, and as the hub keeps one that ended: the fields of the
// record are checked in a live description too, since the record is made from it.
void check_description(const Json& process, const std::string& where) {
    check_object(process, where,
                 {{"pid", Kind::Int, 0, 1, kMaxPid},
                  {"inner_pid", Kind::Int, 0, 1, kMaxPid},
                  {"ppid", Kind::Int, 0, 0, kMaxPid},
                  {"host", Kind::String},
                  {"argv", Kind::Strings},
                  {"python", Kind::String, kShort},
                  {"executable", Kind::String},
                  {"cwd", Kind::String},
                  {"process_name", Kind::String},
                  {"run", Kind::String, kShort},
                  {"started", Kind::String, kShort},
                  {"kernel", Kind::String, kShort},
                  {"since", Kind::Number},
                  {"reason", Kind::String},
                  {"status", Kind::Int},
                  {"signal", Kind::String, kShort},
                  {"stacks", Kind::String},
                  {"ended", Kind::Number},
                  {"exec", Kind::String},
                  {"disconnected", Kind::Bool},
                  {"vanished", Kind::Bool},
                  {"unverified", Kind::Bool},
                  {"running", Kind::Bool}});
    if (const auto tags = process.find("tags"); tags != process.end()) check_tags(*tags, where);
}

}  // namespace

Json without_nulls(Json object) {
    for (auto it = object.begin(); it != object.end();) {
        it = it->is_null() ? object.erase(it) : std::next(it);
    }
    return object;
}

void check_process(const Json& process, const char* what) {
    check_description(process, what);
}

void check_exit_record(const Json& record) {
    check_description(record, "exit record");
}

void check_session_info(const Json& info) {
    check_object(info, "info",
                 {{"tid", Kind::Int, 0, 0},
                  {"native_tid", Kind::Int, 0, 0},
                  {"thread", Kind::String},
                  {"main_thread", Kind::Bool},
                  {"file", Kind::String},
                  {"line", Kind::Int, 0, 0},
                  {"function", Kind::String},
                  {"process_name", Kind::String},
                  {"reason", Kind::String},
                  {"since", Kind::Number}});
}

void check_log_line(const Json& line, const std::string& what) {
    check_object(line, what,
                 {required({"time", Kind::Number}),
                  required({"text", Kind::String}),
                  {"thread", Kind::String},
                  {"tid", Kind::Int, 0, 0},
                  {"bp", Kind::Int},
                  {"dropped", Kind::Int, 0, 0}});
}

void check_stamped_log_line(const Json& line) {
    check_log_line(line, "stored message");
    check_description(line, "stored message");
    check_object(line, "stored message", {{"seq", Kind::Int}});
}

void check_contents(const Message& message) {
    const auto& type = message.type;
    const auto& body = message.body;
    if (type == "hello" || type == "proc_update") {
        if (message.has("proc")) check_process(body["proc"]);
    } else if (type == "session_open" || type == "session_update") {
        check_session_info(body["info"]);
    } else if (type == "break_status") {
        check_value(body["resolved"], {"resolved", Kind::Ints}, type);
        if (message.has("notes")) {
            for (const auto& note : body["notes"]) {
                check_object(note, type + ".notes",
                             {required({"id", Kind::Int}), required({"note", Kind::String})});
            }
        }
    } else if (type == "stacks_reply") {
        check_object(body["stacks"], type + ".stacks",
                     {{"text", Kind::String},
                      {"text_with_debugger", Kind::String},
                      {"note", Kind::String},
                      {"native", Kind::Bool},
                      {"gil", Kind::Object}});
        if (const auto threads = body["stacks"].find("threads"); threads != body["stacks"].end()) {
            if (!threads->is_array()) refuse(type + ".stacks", "threads", "is not an array");
        }
    } else if (type == "exec") {
        check_value(body["argv"], {"argv", Kind::Strings}, type);
        check_value(body["path"], {"path", Kind::String}, type);
    } else if (type == "crash") {
        check_value(body["signal"], {"signal", Kind::String, kShort}, type);
    } else if (type == "log_lines") {
        for (const auto& line : body["lines"]) check_log_line(line, type + ".lines");
    } else if (type == "completions") {
        check_value(body["matches"], {"matches", Kind::Strings}, type);
    } else if (type == "attach") {
        check_value(body["cols"], {"cols", Kind::Int, 0, 0, 100000}, type);
    } else if (type == "stacks" || type == "logs") {
        check_value(body["pids"], {"pids", Kind::Ints}, type);
        if (message.has("limit")) check_value(body["limit"], {"limit", Kind::Int, 0, 0}, type);
    } else if (type == "break_add") {
        if (message.has("ignore")) check_value(body["ignore"], {"ignore", Kind::Int, 0, 0}, type);
    }
}

}  // namespace dpdb::wire
