#include "hub/pages.hpp"

namespace dpdb::hub {
namespace {

constexpr std::size_t kShrunkStringBytes = 1024;

// What a shrunk description keeps: enough to tell the process or session apart and to act on it.
constexpr const char* kKeptKeys[] = {"pid",      "ppid",   "host",     "python",  "run",
                                     "sid",      "thread", "tid",      "file",    "line",
                                     "function", "since",  "attached", "sessions"};

// As wire::encode writes it: invalid UTF-8 replaced, not thrown on.
std::string encoded(const wire::Json& value) {
    return value.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
}

}  // namespace

std::size_t encoded_size(const wire::Json& value) {
    return encoded(value).size();
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

std::string encode_item(const wire::Json& item, const Shrink& shrink, Pages limits) {
    std::string text = item.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
    if (text.size() <= limits.item_bytes) return text;
    text = encoded(shrink ? shrink(item) : wire::Json{{"truncated", true}});
    return text.size() <= limits.item_bytes ? text : encoded(wire::Json{{"truncated", true}});
}

std::vector<std::string> encode_pages(const std::string& head, const EncodedArrays& arrays,
                                      Pages limits) {
    // Each page: its items per array, as positions in `arrays`.
    struct Slice {
        std::size_t begin = 0, end = 0;
    };
    std::vector<std::vector<Slice>> pages(1, std::vector<Slice>(arrays.size()));
    std::size_t used = 0;
    for (std::size_t a = 0; a < arrays.size(); ++a) {
        const auto& items = arrays[a].second;
        pages.back()[a] = {0, 0};
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::size_t size = items[i].size() + 1;
            if (used > 0 && used + size > limits.page_bytes) {
                // A new page: empty slices, this array's from item i.
                pages.emplace_back(arrays.size(), Slice{i, i});
                used = 0;
            }
            pages.back()[a].end = i + 1;
            used += size;
        }
    }
    std::vector<std::string> out;
    out.reserve(pages.size());
    for (std::size_t p = 0; p < pages.size(); ++p) {
        std::string text = "{" + head;
        for (std::size_t a = 0; a < arrays.size(); ++a) {
            text += ",\"" + arrays[a].first + "\":[";
            for (std::size_t i = pages[p][a].begin; i < pages[p][a].end; ++i) {
                if (i > pages[p][a].begin) text += ",";
                text += arrays[a].second[i];
            }
            text += "]";
        }
        if (p + 1 < pages.size()) text += ",\"more\":true";
        text += "}";
        out.push_back(std::move(text));
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
