#include "hub/summary.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/printable.hpp"
#include "hub/pages.hpp"

namespace dpdb::hub {
namespace {

// A paused session is described in full in the summary unless it is larger than this (a huge
// argv): then shrunk, so that the summary always fits in one frame.
constexpr std::size_t kSummaryItemBytes = std::size_t{16} * 1024;
// Tag values and names as the summary repeats them.
constexpr std::size_t kValueChars = 200;

std::string value_text(const wire::Json& value) {
    return cut_text(value.is_string()
                        ? value.get<std::string>()
                        : value.dump(-1, ' ', false, wire::Json::error_handler_t::replace),
                    kValueChars);
}

std::string string_field(const wire::Json& info, const char* key) {
    const auto it = info.find(key);
    if (it == info.end() || it->is_null()) return "";
    return value_text(*it);
}

bool rank_like(const std::string& name) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return upper.find("RANK") != std::string::npos || upper.find("PROCID") != std::string::npos;
}

// "node007" -> ("node", "007"); "worker" -> ("worker", ""); at most 18 digits (an int64).
std::pair<std::string_view, std::string_view> split_number(std::string_view value) {
    std::size_t start = value.size();
    while (start > 0 && std::isdigit(static_cast<unsigned char>(value[start - 1]))) --start;
    if (start == value.size() || value.size() - start > 18) return {value, {}};
    return {value.substr(0, start), value.substr(start)};
}

std::string padded(std::int64_t number, std::size_t width) {
    std::string text = std::to_string(number);
    if (text.size() < width) text.insert(0, width - text.size(), '0');
    return text;
}

std::string ranges(const std::vector<std::int64_t>& sorted, std::size_t width) {
    std::string out;
    for (auto it = sorted.begin(); it != sorted.end();) {
        const auto first = *it;
        auto last = first;
        for (++it; it != sorted.end() && *it == last + 1; ++it) last = *it;
        if (!out.empty()) out += ",";
        out += padded(first, width);
        if (last != first) out += "-" + padded(last, width);
    }
    return out;
}

// The values of a span as they come: numbers kept as numbers, so that 10,000 ranks or host names
// cost no string each.
class SpanBuilder {
  public:
    void add(std::string_view value) {
        const auto [prefix, digits] = split_number(value);
        if (digits.empty()) {
            names_.emplace(value);
            return;
        }
        // Zero-padded numbers (node007) range with numbers of their width; others are natural
        // (9, 10).
        const std::size_t width = digits.size() > 1 && digits[0] == '0' ? digits.size() : 0;
        std::int64_t number = 0;
        for (const char c : digits) number = number * 10 + (c - '0');
        numbered_[{std::string(prefix), width}].push_back(number);
    }

    // How many distinct values, and the text (see span()).
    std::pair<std::size_t, std::string> finish(std::size_t max_chars) {
        // A natural number as long as a padded width of its prefix (1000 beside 0999) belongs
        // to that width.
        for (auto& [key, numbers] : numbered_) {
            if (key.second != 0) continue;
            auto& natural = numbers;
            for (auto& [other, padded_numbers] : numbered_) {
                if (other.first != key.first || other.second == 0) continue;
                // A copy: C++17 lets no lambda capture a structured binding (clang refuses).
                const auto width = other.second;
                const auto fits = [width](std::int64_t n) {
                    return std::to_string(n).size() == width;
                };
                for (const auto n : natural) {
                    if (fits(n)) padded_numbers.push_back(n);
                }
                natural.erase(std::remove_if(natural.begin(), natural.end(), fits), natural.end());
            }
        }
        std::size_t count = names_.size();
        // (prefix, first number, text): series of one prefix in the order of their numbers.
        std::vector<std::tuple<std::string, std::int64_t, std::string>> pieces;
        for (const auto& name : names_) pieces.emplace_back(name, -1, name);
        for (auto& [key, numbers] : numbered_) {
            if (numbers.empty()) continue;
            std::sort(numbers.begin(), numbers.end());
            numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
            count += numbers.size();
            const auto& prefix = key.first;
            const std::string list = ranges(numbers, key.second);
            const bool bare = prefix.empty() || numbers.size() == 1;
            pieces.emplace_back(prefix, numbers.front(),
                                bare ? prefix + list : prefix + "[" + list + "]");
        }
        std::sort(pieces.begin(), pieces.end());
        std::string out;
        for (const auto& piece : pieces) out += (out.empty() ? "" : ",") + std::get<2>(piece);
        if (out.size() <= max_chars) return {count, out};
        // Cut after a whole value where one ends late enough, and say how many there are.
        std::size_t end = out.rfind(',', max_chars);
        if (end == std::string::npos || end < max_chars / 2) {
            end = max_chars;
            while (end > 0 && (static_cast<unsigned char>(out[end]) & 0xC0) == 0x80) --end;
        }
        return {count, out.substr(0, end) + ",… (" + std::to_string(count) + " values)"};
    }

  private:
    std::map<std::pair<std::string, std::size_t>, std::vector<std::int64_t>> numbered_;
    std::set<std::string, std::less<>> names_;
};

enum State { kRunning, kPaused, kEnding };
const char* const kStateNames[] = {"running", "paused", "ending"};

struct Group {
    std::string host;  // the first process's
    SpanBuilder hosts;
    State state = kRunning;
    std::string tag_key;  // the shared tags, as sorted "key=value" pairs: the order of rows
    wire::Json tags = wire::Json::object();
    std::map<std::string, SpanBuilder, std::less<>> spans;  // identity tag -> its values
    std::size_t processes = 0;
    std::size_t sessions = 0;
};

}  // namespace

std::string span(const std::vector<std::string>& values, std::size_t max_chars) {
    SpanBuilder builder;
    for (const auto& value : values) builder.add(value);
    return builder.finish(max_chars).second;
}

wire::Json summarize(const Registry& registry, const SummaryLimits& limits) {
    // Which tags group: few values across the job, and not a rank. Read from each process's
    // host and tags as text (Process::host, Process::tags), not from its JSON.
    std::map<std::string, std::set<std::string, std::less<>>, std::less<>> tag_values;
    std::unordered_set<std::string_view> all_hosts;
    for (const auto& [connection, process] : registry.processes()) {
        all_hosts.insert(process.host);
        for (const auto& [name, value] : process.tags) {
            auto& seen = tag_values[name];
            if (seen.size() <= limits.grouping_values && seen.find(value) == seen.end()) {
                seen.emplace(value);
            }
        }
    }
    std::set<std::string, std::less<>> grouping;
    for (const auto& [name, seen] : tag_values) {
        if (seen.size() <= limits.grouping_values && !rank_like(name)) grouping.insert(name);
    }

    // Keyed by host (or nothing), shared tags and state, packed in one string.
    const auto group = [&](bool by_host) {
        std::unordered_map<std::string, Group> groups;
        std::string key, tag_key;
        std::vector<bool> groups_by;  // per tag of the process: whether it groups
        for (const auto& [connection, process] : registry.processes()) {
            const auto paused = registry.session_count(connection);
            const State state = paused > 0                   ? kPaused
                                : process.ending.is_object() ? kEnding
                                                             : kRunning;
            tag_key.clear();
            groups_by.assign(process.tags.size(), false);
            for (std::size_t i = 0; i < process.tags.size(); ++i) {
                const auto& [name, value] = process.tags[i];
                if (grouping.count(name) == 0) continue;
                groups_by[i] = true;
                tag_key.append(name).append("=").append(value).push_back('\x1f');
            }
            key.assign(by_host ? process.host : std::string());
            key.push_back('\x1e');
            key.append(tag_key).push_back(static_cast<char>('0' + state));
            auto& g = groups[key];
            if (g.processes == 0) {
                g.host = process.host;
                g.state = state;
                g.tag_key = tag_key;
                for (std::size_t i = 0; i < process.tags.size(); ++i) {
                    if (groups_by[i]) {
                        g.tags[cut_text(process.tags[i].first, kValueChars)] =
                            cut_text(process.tags[i].second, kValueChars);
                    }
                }
            }
            if (!by_host) g.hosts.add(process.host);
            for (std::size_t i = 0; i < process.tags.size(); ++i) {
                if (groups_by[i]) continue;
                const auto& [name, value] = process.tags[i];
                auto it = g.spans.find(name);
                if (it == g.spans.end()) {
                    it = g.spans.emplace(cut_text(name, kValueChars), SpanBuilder()).first;
                }
                it->second.add(value);
            }
            ++g.processes;
            g.sessions += paused;
        }
        return groups;
    };
    // Rows per host while they are few; else each row spans its hosts.
    bool by_host = all_hosts.size() <= limits.groups;
    auto groups = group(by_host);
    if (by_host && groups.size() > limits.groups) {
        by_host = false;
        groups = group(false);
    }

    // The largest groups when there are too many, shown by host, tags and state.
    std::vector<Group*> shown;
    shown.reserve(groups.size());
    for (auto& entry : groups) shown.push_back(&entry.second);
    if (shown.size() > limits.groups) {
        std::stable_sort(shown.begin(), shown.end(), [](const Group* a, const Group* b) {
            return a->processes > b->processes;
        });
        shown.resize(limits.groups);
    }
    std::sort(shown.begin(), shown.end(), [by_host](const Group* a, const Group* b) {
        const auto ka = std::make_tuple(by_host ? a->host : std::string(), a->tag_key, a->state);
        const auto kb = std::make_tuple(by_host ? b->host : std::string(), b->tag_key, b->state);
        return ka < kb;
    });
    wire::Json group_rows = wire::Json::array();
    for (auto* g : shown) {
        wire::Json spans = wire::Json::object();
        for (auto& [name, values] : g->spans) spans[name] = values.finish(limits.span_chars).second;
        std::string host = g->host;
        std::size_t hosts = 1;
        if (!by_host) std::tie(hosts, host) = g->hosts.finish(limits.span_chars);
        group_rows.push_back({{"host", cut_text(host, kValueChars)},
                              {"hosts", hosts},
                              {"state", kStateNames[g->state]},
                              {"tags", std::move(g->tags)},
                              {"spans", std::move(spans)},
                              {"processes", g->processes},
                              {"sessions", g->sessions}});
    }

    // Where the sessions are paused, most crowded first; and the oldest sessions in full.
    struct Place {
        std::size_t sessions = 0;
        std::size_t attached = 0;
    };
    std::map<std::tuple<std::string, std::int64_t, std::string>, Place> places;
    std::size_t attached = 0;
    wire::Json paused = wire::Json::array();
    for (const auto& [id, session] : registry.sessions()) {
        const auto line = session.info.find("line");
        auto& place = places[{
            string_field(session.info, "file"),
            line != session.info.end() && line->is_number_integer() ? line->get<std::int64_t>() : 0,
            string_field(session.info, "function")}];
        ++place.sessions;
        if (session.client != 0) {
            ++place.attached;
            ++attached;
        }
        if (paused.size() < limits.paused) {
            wire::Json described = registry.describe(session);
            if (encoded_size(described) > kSummaryItemBytes) {
                described = shrink_description(described);
            }
            paused.push_back(std::move(described));
        }
    }
    std::vector<std::pair<const std::tuple<std::string, std::int64_t, std::string>*, Place>>
        crowded;
    crowded.reserve(places.size());
    for (const auto& [key, place] : places) crowded.emplace_back(&key, place);
    std::stable_sort(crowded.begin(), crowded.end(), [](const auto& a, const auto& b) {
        return a.second.sessions > b.second.sessions;
    });
    if (crowded.size() > limits.places) crowded.resize(limits.places);
    wire::Json place_rows = wire::Json::array();
    for (const auto& [key, place] : crowded) {
        place_rows.push_back({{"file", std::get<0>(*key)},
                              {"line", std::get<1>(*key)},
                              {"function", std::get<2>(*key)},
                              {"sessions", place.sessions},
                              {"attached", place.attached}});
    }

    return {{"processes", registry.processes().size()},
            {"sessions", registry.sessions().size()},
            {"attached", attached},
            {"hosts", all_hosts.size()},
            {"group_count", groups.size()},
            {"groups", std::move(group_rows)},
            {"places", std::move(place_rows)},
            {"paused", std::move(paused)}};
}

wire::Json summarize_breakpoints(const Registry& registry, wire::Json breakpoints,
                                 std::size_t notes) {
    using wire::Json;
    std::map<std::int64_t, int> armed;
    std::map<std::int64_t, int> noted;      // processes that said something of it instead
    std::map<std::int64_t, int> ambiguous;  // ... that its file matches several files there
    std::map<std::int64_t, std::map<std::string, int>> said_by;
    int waiting = 0;
    int answered = 0;
    std::map<std::string, int> waiting_by_host;
    for (const auto& [connection, process] : registry.processes()) {
        if (!process.breakpoints_reported) {
            ++waiting;
            ++waiting_by_host[process.host];
            continue;
        }
        ++answered;
        for (const auto& id : process.resolved_breakpoints) {
            if (id.is_number_integer()) ++armed[id.get<std::int64_t>()];
        }
        std::set<std::int64_t> noted_here;
        for (const auto& note : process.breakpoint_notes) {
            if (!note.is_object() || !note.value("id", Json()).is_number_integer()) continue;
            const auto& text = note.value("note", Json());
            const auto id = note["id"].get<std::int64_t>();
            if (text.is_string()) ++said_by[id][text];
            if (noted_here.insert(id).second) ++noted[id];
            if (note.value("ambiguous", false) == true) ++ambiguous[id];
        }
    }
    Json listed = Json::array();
    for (auto& bp : breakpoints) {
        const auto id = bp["id"].get<std::int64_t>();
        bp["processes"] = armed[id];
        // Answered, and neither armed it nor said why not: its file is not loaded there yet.
        bp["pending"] = std::max(0, answered - armed[id] - noted[id]);
        bp["ambiguous"] = ambiguous[id];
        Json said = Json::array();
        for (const auto& [text, count] : said_by[id]) {
            if (said.size() == notes) break;
            said.push_back({{"note", text}, {"processes", count}});
        }
        bp["notes"] = std::move(said);
        listed.push_back(std::move(bp));
    }
    Json hosts = Json::object();
    for (const auto& [host, count] : waiting_by_host) hosts[host.empty() ? "?" : host] = count;
    return {{"breakpoints", std::move(listed)},
            {"waiting", waiting},
            {"waiting_hosts", std::move(hosts)},
            {"total", static_cast<int>(registry.processes().size())}};
}

}  // namespace dpdb::hub
