#include "hub/logs.hpp"

#include <string>

#include "common/printable.hpp"
#include "hub/pages.hpp"

namespace dpdb::hub {
namespace {

// A message longer than this is cut: the store keeps 100,000 of them. What the hub copies from
// its sender's description into each is cut too (the tags are bounded by wire/contents), so a
// stored message holds at most about 7 KiB whatever the sender says of itself.
constexpr std::size_t kMaxTextBytes = 4096;
constexpr std::size_t kMaxThreadBytes = 200;
constexpr std::size_t kMaxNameBytes = 256;

// A short text of the sender's description (host, run, name), cut; null where it has none.
wire::Json copied_name(const wire::Json& process, const char* key) {
    const auto it = process.find(key);
    if (it == process.end() || !it->is_string()) return wire::Json();
    return cut_text(it->get<std::string>(), kMaxNameBytes);
}

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
            {"tags", process.value("tags", wire::Json::object())},
        };
        if (const auto pid = process.find("pid"); pid != process.end()) entry["pid"] = *pid;
        // Absent rather than null: what the store reads back is checked as a peer's message is.
        for (const char* key : {"host", "run", "process_name"}) {
            auto name = copied_name(process, key);
            if (name.is_string() && !name.get_ref<const std::string&>().empty()) {
                entry[key] = std::move(name);
            }
        }
        const auto thread = line.value("thread", wire::Json());
        entry["thread"] =
            thread.is_string() ? cut_text(thread.get<std::string>(), kMaxThreadBytes) : "?";
        for (const char* number : {"tid", "bp", "dropped", "unsent"}) {
            const auto value = line.value(number, wire::Json());
            if (value.is_number_integer()) entry[number] = value;
        }
        stamped.push_back(std::move(entry));
    }
    return stamped;
}

wire::Json unsent_at_end_line(std::int64_t unsent, double time, const wire::Json& process) {
    const std::string text = "ended with " + std::to_string(unsent) + " logpoint message" +
                             (unsent == 1 ? "" : "s") + " not sent";
    return stamp_log_lines(
        wire::Json::array(
            {{{"time", time}, {"thread", "dpdb"}, {"tid", 0}, {"unsent", unsent}, {"text", text}}}),
        process)[0];
}

std::vector<wire::Json> log_pages(wire::Json messages) {
    // Every message is far below a frame (its text is cut): nothing to shrink.
    return paginate({{"messages", std::move(messages)}},
                    [](const wire::Json& item) { return item; });
}

}  // namespace dpdb::hub
