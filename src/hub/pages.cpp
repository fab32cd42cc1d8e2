#include "hub/pages.hpp"

namespace dpdb::hub {
namespace {

constexpr std::size_t kShrunkStringBytes = 1024;

// What a shrunk description keeps: enough to tell the process or session apart and to act on it.
constexpr const char* kKeptKeys[] = {"pid",      "ppid",   "host",     "python",  "run",
                                     "sid",      "thread", "tid",      "file",    "line",
                                     "function", "since",  "attached", "sessions"};

}  // namespace

std::size_t encoded_size(const wire::Json& value) {
    // As wire::encode writes it: invalid UTF-8 replaced, not thrown on.
    return value.dump(-1, ' ', false, wire::Json::error_handler_t::replace).size();
}

wire::Json shrink_description(const wire::Json& item) {
    if (!item.is_object()) return wire::Json{{"truncated", true}};
    wire::Json out = wire::Json::object();
    for (const char* key : kKeptKeys) {
        const auto it = item.find(key);
        if (it == item.end()) continue;
        if (it->is_string() && it->get_ref<const std::string&>().size() > kShrunkStringBytes) {
            out[key] = it->get_ref<const std::string&>().substr(0, kShrunkStringBytes);
        } else if (!it->is_structured() || std::string_view(key) == "sessions") {
            out[key] = *it;
        }
    }
    out["truncated"] = true;
    return out;
}

wire::Json shrink_stacks(const wire::Json& item) {
    wire::Json out = shrink_description(item);
    if (!item.is_object()) return out;
    if (const auto error = item.find("error"); error != item.end() && error->is_string()) {
        out["error"] = error->get<std::string>().substr(0, kShrunkStringBytes);
    }
    const auto stacks = item.find("stacks");
    if (stacks != item.end() && stacks->is_object()) {
        const std::string text = stacks->value("text", std::string());
        const std::size_t kept = kMaxItemBytes / 2;
        out["stacks"] = {{"text", text.size() <= kept ? text
                                                      : text.substr(0, kept) + "\n… (" +
                                                            std::to_string(text.size() - kept) +
                                                            " more bytes cut)"}};
    }
    return out;
}

std::vector<wire::Json> paginate(std::vector<std::pair<std::string, wire::Json>> arrays,
                                 const Shrink& shrink, Pages limits) {
    wire::Json empty = wire::Json::object();
    for (const auto& [name, items] : arrays) empty[name] = wire::Json::array();
    std::vector<wire::Json> pages{empty};
    std::size_t used = 0;
    for (auto& [name, items] : arrays) {
        for (auto& item : items) {
            std::size_t size = encoded_size(item);
            if (size > limits.item_bytes) {
                item = shrink ? shrink(item) : wire::Json{{"truncated", true}};
                size = encoded_size(item);
                if (size > limits.item_bytes) {
                    item = wire::Json{{"truncated", true}};
                    size = encoded_size(item);
                }
            }
            // A separating comma per item; a page already holding something starts anew when
            // this item would take it past its size.
            if (used > 0 && used + size + 1 > limits.page_bytes) {
                pages.push_back(empty);
                used = 0;
            }
            pages.back()[name].push_back(std::move(item));
            used += size + 1;
        }
    }
    return pages;
}

}  // namespace dpdb::hub
