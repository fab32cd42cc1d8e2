#include "hub/logs.hpp"

#include <string>

#include "common/printable.hpp"
#include "hub/pages.hpp"

namespace dpdb::hub {
namespace {

// A message longer than this is cut: the store keeps 100,000 of them.
constexpr std::size_t kMaxTextBytes = 4096;
constexpr std::size_t kMaxThreadBytes = 200;

}  // namespace

wire::Json stamp_log_lines(const wire::Json& lines, const wire::Json& process) {
    wire::Json stamped = wire::Json::array();
    for (const auto& line : lines) {
        if (!line.is_object() || !line.contains("time") || !line["time"].is_number() ||
            !line.contains("text") || !line["text"].is_string()) {
            continue;
        }
        wire::Json entry = {
            {"time", line["time"].get<double>()},
            {"text", cut_text(line["text"].get<std::string>(), kMaxTextBytes)},
            {"pid", process.value("pid", wire::Json())},
            {"host", process.value("host", wire::Json())},
            {"tags", process.value("tags", wire::Json::object())},
            {"run", process.value("run", wire::Json())},
        };
        const auto name = process.value("process_name", wire::Json());
        if (name.is_string() && !name.get<std::string>().empty()) entry["process_name"] = name;
        const auto thread = line.value("thread", wire::Json());
        entry["thread"] =
            thread.is_string() ? cut_text(thread.get<std::string>(), kMaxThreadBytes) : "?";
        for (const char* number : {"tid", "bp", "dropped"}) {
            const auto value = line.value(number, wire::Json());
            if (value.is_number_integer()) entry[number] = value;
        }
        stamped.push_back(std::move(entry));
    }
    return stamped;
}

std::vector<wire::Json> log_pages(wire::Json messages) {
    // Every message is far below a frame (its text is cut): nothing to shrink.
    return paginate({{"messages", std::move(messages)}},
                    [](const wire::Json& item) { return item; });
}

}  // namespace dpdb::hub
