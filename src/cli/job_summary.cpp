#include "cli/job_summary.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "cli/describe.hpp"

namespace dpdb::cli {
namespace {

// The paused sessions shown in full, all hubs together.
constexpr std::size_t kPausedShown = 20;

std::int64_t count(const wire::Json& body, const char* key) {
    const auto it = body.find(key);
    return it != body.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string text(const wire::Json& item, const char* key) {
    const auto it = item.find(key);
    if (it == item.end() || it->is_null()) return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

// "role=worker world_size=8 rank=0-7": the tags the group shares, then the spans of the tags
// that tell its processes apart (a span has commas of its own: spaces between tags).
std::string group_tags(const wire::Json& group) {
    std::string out;
    for (const char* part : {"tags", "spans"}) {
        const auto it = group.find(part);
        if (it == group.end() || !it->is_object()) continue;
        for (const auto& [key, value] : it->items()) {
            std::string name = key;
            std::transform(name.begin(), name.end(), name.begin(), ::tolower);
            out += (out.empty() ? "" : " ") + name + "=" +
                   (value.is_string() ? value.get<std::string>() : value.dump());
        }
    }
    return out;
}

std::string plural(std::int64_t n, const std::string& one, const std::string& many = "") {
    return std::to_string(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

}  // namespace

std::string job_summary(const std::vector<HubSummary>& summaries) {
    std::int64_t processes = 0, sessions = 0, attached = 0, hosts = 0, groups = 0;
    std::int64_t grouped = 0, shown_groups = 0;
    const bool several = summaries.size() > 1;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"HOST", "STATE", "PROCESSES", "SESSIONS", "TAGS"});
    if (several) rows.front().insert(rows.front().begin(), "HUB");
    using Place = std::tuple<std::string, std::int64_t, std::string>;
    std::map<Place, std::pair<std::int64_t, std::int64_t>> places;  // sessions, attached
    wire::Json paused = wire::Json::array();
    for (const auto& [hub, body] : summaries) {
        processes += count(body, "processes");
        sessions += count(body, "sessions");
        attached += count(body, "attached");
        hosts += count(body, "hosts");
        groups += count(body, "group_count");
        for (const auto& g : body.value("groups", wire::Json::array())) {
            const auto n = count(g, "processes");
            const auto spread = count(g, "hosts");
            grouped += n;
            ++shown_groups;
            std::string host = text(g, "host");
            // A span cut short already says how many.
            if (spread > 1 && host.find("… (") == std::string::npos) {
                host += " (" + std::to_string(spread) + " hosts)";
            }
            const auto paused_here = count(g, "sessions");
            std::vector<std::string> row = {host, text(g, "state"), std::to_string(n),
                                            paused_here == 0 ? "-" : std::to_string(paused_here),
                                            group_tags(g)};
            if (several) row.insert(row.begin(), hub);
            rows.push_back(std::move(row));
        }
        for (const auto& p : body.value("places", wire::Json::array())) {
            auto& place = places[{text(p, "file"), count(p, "line"), text(p, "function")}];
            place.first += count(p, "sessions");
            place.second += count(p, "attached");
        }
        for (auto s : body.value("paused", wire::Json::array())) {
            if (paused.size() >= kPausedShown) break;
            if (several) s["hub"] = hub;
            paused.push_back(std::move(s));
        }
    }

    std::string out =
        plural(processes, "process", "processes") + " on " + plural(hosts, "host") + ", " +
        plural(sessions, "paused session") + " (" + std::to_string(attached) +
        " attached)\ngrouped by host, tags and state; `dpdb ls --all` lists each one\n\n";
    out += table(rows);
    if (groups > shown_groups) {
        out += "… " + plural(groups - shown_groups, "more group") + " (" +
               plural(processes - grouped, "process", "processes") + ")\n";
    }
    if (sessions == 0) return out;

    std::vector<std::pair<Place, std::pair<std::int64_t, std::int64_t>>> crowded(places.begin(),
                                                                                 places.end());
    std::stable_sort(crowded.begin(), crowded.end(),
                     [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    std::vector<std::vector<std::string>> where = {{"PAUSED AT", "SESSIONS", "ATTACHED"}};
    std::int64_t placed = 0;
    for (const auto& [place, counts] : crowded) {
        const wire::Json session = {{"file", std::get<0>(place)},
                                    {"line", std::get<1>(place)},
                                    {"function", std::get<2>(place)}};
        where.push_back(
            {location(session), std::to_string(counts.first), std::to_string(counts.second)});
        placed += counts.first;
    }
    out += "\n" + table(where);
    if (sessions > placed) {
        out += "… " + plural(sessions - placed, "more session") + " paused elsewhere\n";
    }
    out += "\n" + sessions_table(paused);
    if (sessions > static_cast<std::int64_t>(paused.size())) {
        out += "… " +
               plural(sessions - static_cast<std::int64_t>(paused.size()), "more paused session") +
               " (`dpdb ls --all` lists every one; `dpdb attach N` attaches)\n";
    }
    return out;
}

}  // namespace dpdb::cli
