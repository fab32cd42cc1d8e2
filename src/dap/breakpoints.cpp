// `dpdb dap`: the IDE's breakpoints (setBreakpoints, setFunctionBreakpoints,
// setExceptionBreakpoints) as the hub's global breakpoints, armed in every process of the job and
// in those that start later.
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "dap/adapter.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {
namespace {

using wire::Json;

const char* const kFunctions = "<function breakpoints>";
const char* const kExceptions = "<exception breakpoints>";

// DAP's exception filters, as the hub's exception breakpoints (python/dpdb/_exceptions.py).
const std::map<std::string, std::string> kExceptionSpecs = {{"raised", "raised exceptions"},
                                                            {"uncaught", "uncaught exceptions"}};

// A hitCondition as pdb's ignore count (hits passed before the breakpoint stops, and it stops at
// every later one): "N" and ">= N" stop from the Nth hit on, "> N" after the Nth. Other forms
// (== N, % N) have no ignore count: nullopt.
std::optional<std::int64_t> ignore_count(const std::string& hit) {
    std::size_t at = 0;
    const auto blanks = [&] {
        while (at < hit.size() && std::isspace(static_cast<unsigned char>(hit[at]))) ++at;
    };
    blanks();
    std::int64_t after = -1;  // the ignore count is N + after: N - 1 for "N" and ">= N"
    if (hit.compare(at, 2, ">=") == 0) {
        at += 2;
    } else if (hit.compare(at, 1, ">") == 0) {
        at += 1;
        after = 0;
    }
    blanks();
    const auto digits = at;
    std::int64_t n = 0;
    while (at < hit.size() && std::isdigit(static_cast<unsigned char>(hit[at])) &&
           n < 1'000'000'000) {
        n = n * 10 + (hit[at++] - '0');
    }
    if (at == digits) return std::nullopt;
    blanks();
    if (at != hit.size() || n + after < 0) return std::nullopt;
    return n + after;
}

}  // namespace

void Adapter::source_breakpoints(const Json& request) {
    const auto& args = arguments(request);
    const auto source = args.value("source", Json::object());
    const std::string path = source.is_object() ? text(source, "path") : "";
    if (path.empty()) return fail(request, "setBreakpoints needs source.path");
    Json specs = Json::array();
    for (const auto& bp : args.value("breakpoints", Json::array())) {
        specs.push_back({{"spec", to_remote(path) + ":" + std::to_string(number(bp, "line"))},
                         {"line", number(bp, "line")},
                         {"condition", text(bp, "condition")},
                         {"hitCondition", text(bp, "hitCondition")},
                         {"logMessage", text(bp, "logMessage")}});
    }
    set_breakpoints(request, path, std::move(specs));
}

void Adapter::function_breakpoints(const Json& request) {
    Json specs = Json::array();
    for (const auto& bp : arguments(request).value("breakpoints", Json::array())) {
        specs.push_back({{"spec", text(bp, "name")},
                         {"condition", text(bp, "condition")},
                         {"hitCondition", text(bp, "hitCondition")}});
    }
    set_breakpoints(request, kFunctions, std::move(specs));
}

// The filters the IDE ticked (filters, or filterOptions' filterId), in the order it gave them.
void Adapter::exception_breakpoints(const Json& request) {
    const auto& args = arguments(request);
    Json specs = Json::array();
    const auto add = [&](const Json& filter) {
        const auto name = filter.is_string() ? filter.get<std::string>() : std::string();
        const auto found = kExceptionSpecs.find(name);
        specs.push_back({{"spec", found == kExceptionSpecs.end() ? "" : found->second},
                         {"refusal", "no exception filter \"" + name + "\" (raised, uncaught)"}});
    };
    for (const auto& filter : args.value("filters", Json::array())) add(filter);
    for (const auto& option : args.value("filterOptions", Json::array())) {
        if (option.is_object()) add(option.value("filterId", Json()));
    }
    set_breakpoints(request, kExceptions, std::move(specs));
}

// The IDE's breakpoints of one source (or its function breakpoints) become the hub's global
// breakpoints: the ones this adapter set there before are cleared, the new ones added, so every
// process of the job, and those that start later, gets them.
void Adapter::set_breakpoints(const Json& request, const std::string& key, Json specs) {
    for (const auto bp : breakpoints_[key]) {
        ask("break_clear", {{"bp", bp}}, request, 0, [](auto&) {});
        forget_standing(bp);
    }
    breakpoints_[key].clear();
    auto answers = std::make_shared<Json>(Json::array());
    auto left = std::make_shared<std::size_t>(specs.size());
    const auto finish = [this, request, key, answers] {
        if (key == kExceptions) return respond(request, {{"breakpoints", *answers}});
        answer_when_armed(request, *answers);
    };
    if (specs.empty()) return respond(request, {{"breakpoints", Json::array()}});
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const auto& spec = specs[i];
        Json shown = {{"verified", false}};
        if (spec.contains("line")) shown["line"] = spec["line"];
        std::string refusal;
        const auto hit = text(spec, "hitCondition");
        const auto ignore = hit.empty() ? std::optional<std::int64_t>(0) : ignore_count(hit);
        if (!ignore) {
            refusal = "hit count \"" + hit +
                      "\": dpdb counts hits as pdb's ignore does, per process: N or >= N "
                      "(stop from the Nth hit on), > N";
        }
        if (!hit.empty() && key == kFunctions) {
            // The engine does not count a function breakpoint's hits as bdb does yet
            // (docs/architecture.md): refused rather than wrong.
            refusal = "hit counts on function breakpoints are not supported yet";
        }
        if (text(spec, "spec").empty()) refusal = text(spec, "refusal", "no function name");
        answers->push_back(shown);
        if (!refusal.empty()) {
            (*answers)[i]["message"] = refusal;
            if (--*left == 0) finish();
            continue;
        }
        if (only_pid_ != 0) {
            // A child session: the job's session holds the IDE's breakpoints, in every process.
            (*answers)[i]["verified"] = true;
            (*answers)[i]["message"] = "set for the whole job by its session";
            if (--*left == 0) finish();
            continue;
        }
        // A log message is a dpdb logpoint: its {expression} fields are formatted in the process
        // (as DAP's are), and the messages come back as hub events, shown as output.
        Json fields = {{"spec", text(spec, "spec")}, {"condition", text(spec, "condition")}};
        if (*ignore > 0) fields["ignore"] = *ignore;
        if (!text(spec, "logMessage").empty()) fields["log"] = text(spec, "logMessage");
        ask("break_add", std::move(fields), request, 0,
            [this, key, answers, left, i, finish](auto& m) {
                auto& shown = (*answers)[i];
                shown["message"] = m.str("message");
                if (m["ok"].template get<bool>()) {
                    const auto bp = number(m["data"], "bp");
                    breakpoints_[key].push_back(bp);
                    shown["id"] = bp;
                    // Exception filters are armed in every process as it runs; the others are
                    // verified where the processes say they are armed.
                    if (key == kExceptions) shown["verified"] = true;
                }
                if (--*left == 0) finish();
            });
    }
}

}  // namespace dpdb::dap
