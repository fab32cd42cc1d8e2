#include "cli/stack_groups.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "cli/describe.hpp"
#include "common/printable.hpp"
#include "hub/summary.hpp"  // span(): the same compact ranges as `dpdb ls`

namespace dpdb::cli {
namespace {

constexpr std::size_t kSpanChars = 60;

// A thread's header without what differs from process to process: "  Thread MainThread
// (139872, native 4242) [holds the GIL], most recent call last:" keeps its name and role;
// faulthandler's "Thread 0x00007f3a (most recent call first):" loses its address.
std::string normalized_line(const std::string& line) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 7, "Thread ") != 0) return line;
    std::string out = line;
    auto name = start + 7;
    if (out.compare(name, 2, "0x") == 0) {
        auto end = name + 2;
        while (end < out.size() && std::isxdigit(static_cast<unsigned char>(out[end]))) ++end;
        out.erase(name, end - name + (end < out.size() && out[end] == ' ' ? 1 : 0));
        return out;
    }
    const auto open = out.find(" (", name);
    if (open == std::string::npos || open + 2 >= out.size() ||
        !std::isdigit(static_cast<unsigned char>(out[open + 2]))) {
        return out;
    }
    const auto close = out.find(')', open);
    if (close != std::string::npos) out.erase(open, close - open + 1);
    return out;
}

std::string normalized(const std::string& text) {
    std::string out;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        auto end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        out += normalized_line(text.substr(begin, end - begin));
        if (end < text.size()) out += "\n";
        begin = end + 1;
    }
    return out;
}

std::string value_text(const wire::Json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

// "97 processes, pids 1000-1096 [rank=0-96 role=worker]"
std::string members(const std::vector<const wire::Json*>& group) {
    std::vector<std::string> pids;
    std::map<std::string, std::vector<std::string>> tags;
    for (const auto* p : group) {
        pids.push_back(value_text(p->value("pid", wire::Json())));
        const auto all = p->value("tags", wire::Json::object());  // held: items() refers to it
        for (const auto& [key, value] : all.items()) {
            std::string name = key;
            std::transform(name.begin(), name.end(), name.begin(), ::tolower);
            tags[name].push_back(value_text(value));
        }
    }
    std::string out =
        std::to_string(group.size()) + " processes, pids " + hub::span(pids, kSpanChars);
    std::string spans;
    for (const auto& [name, values] : tags) {
        spans += (spans.empty() ? "" : " ") + name + "=" + hub::span(values, kSpanChars);
    }
    return spans.empty() ? out : out + " [" + spans + "]";
}

template <typename Groups>
std::vector<typename Groups::const_iterator> largest_first(const Groups& groups) {
    std::vector<typename Groups::const_iterator> order;
    for (auto it = groups.begin(); it != groups.end(); ++it) order.push_back(it);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a->second.size() > b->second.size();
    });
    return order;
}

}  // namespace

std::string grouped_stacks(const wire::Json& processes) {
    std::map<std::string, std::vector<const wire::Json*>> by_stacks;
    std::map<std::string, std::vector<const wire::Json*>> by_error;
    for (const auto& p : processes) {
        if (p.contains("error")) {
            by_error[shown(value_text(p["error"]))].push_back(&p);
        } else {
            const auto stacks = p.value("stacks", wire::Json::object());
            by_stacks[shown_lines(normalized(stacks.value("text", std::string())))].push_back(&p);
        }
    }
    std::string out;
    for (const auto& it : largest_first(by_stacks)) {
        const auto& group = it->second;
        if (group.size() == 1) {
            out += process_label(*group.front()) + "\n" +
                   shown_lines(
                       group.front()->value("stacks", wire::Json::object()).value("text", "")) +
                   "\n\n";
        } else {
            out += members(group) + "\n" + it->first + "\n\n";
        }
    }
    for (const auto& it : largest_first(by_error)) {
        const auto& group = it->second;
        if (group.size() == 1) {
            out += "pid " + value_text(group.front()->value("pid", wire::Json())) + ": " +
                   it->first + "\n\n";
        } else {
            out += members(group) + ": " + it->first + "\n\n";
        }
    }
    return out;
}

}  // namespace dpdb::cli
