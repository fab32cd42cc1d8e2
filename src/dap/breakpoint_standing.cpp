// `dpdb dap`: whether the IDE's breakpoints are verified, from where the hub says they are armed
// (break_list: armed, pending, ambiguous per process, as `dpdb break` reports it). A breakpoint is
// verified once armed in some process; until then it is unverified with the reason, and a
// `breakpoint` event (reason "changed") tells the IDE when that changes, as debugpy does when a
// module loads.
#include <optional>
#include <string>

#include "dap/adapter.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {
namespace {

using wire::Json;

// How long setBreakpoints waits for a process to arm its breakpoints (they do at once where they
// can): past it, the answer says what is known and an event follows.
constexpr auto kAnswersWait = std::chrono::seconds(1);
// Between two questions while a breakpoint is unverified: a file can be imported at any time;
// sooner while an answer waits, as processes answer within milliseconds.
constexpr auto kAskAgain = std::chrono::milliseconds(200);
constexpr auto kAskAgainAnswering = std::chrono::milliseconds(10);
constexpr auto kNoAnswer = std::chrono::seconds(10);

std::string processes(int count) {
    return std::to_string(count) + (count == 1 ? " process" : " processes");
}

// One breakpoint of break_list's answer, as the IDE is shown it.
Json shown(const Json& standing, int total, int waiting) {
    const int armed = standing.value("processes", 0);
    const int ambiguous = standing.value("ambiguous", 0);
    std::string message;
    if (armed > 0) {
        message =
            "armed in " +
            (armed == total ? processes(armed) : std::to_string(armed) + " of " + processes(total));
    } else if (ambiguous > 0) {
        message = "ambiguous in " + processes(ambiguous);
    } else {
        message = "pending: file not loaded in any process yet";
    }
    // What processes said instead of arming it (a line that does not exist, the files an
    // ambiguous name matches): the first, as the IDE has room for one line.
    const auto notes = standing.value("notes", Json::array());
    if (armed == 0 && !notes.empty() && notes[0].is_object()) {
        message += ": " + text(notes[0], "note");
    }
    if (armed == 0 && waiting > 0) {
        message += " (" + processes(waiting) + " not answered yet)";
    }
    return {{"verified", armed > 0}, {"message", message}};
}

}  // namespace

// A setBreakpoints (or setFunctionBreakpoints) whose breakpoints the hub took: answered once the
// processes have said where they are armed, or after kAnswersWait.
void Adapter::answer_when_armed(const Json& request, Json answers) {
    bool any = false;
    for (const auto& answer : answers) {
        if (!answer.contains("id")) continue;
        shown_breakpoints_[number(answer, "id")] = {answer, false};
        any = true;
    }
    if (!any) return respond(request, {{"breakpoints", std::move(answers)}});
    answering_.push_back(
        {request, std::move(answers), std::chrono::steady_clock::now() + kAnswersWait});
    next_standing_ = {};
}

void Adapter::forget_standing(std::int64_t bp) {
    shown_breakpoints_.erase(bp);
}

// Asks the hub again while an answer waits or a breakpoint is unverified, one question at a time.
void Adapter::check_standing(std::chrono::steady_clock::time_point now) {
    if (!channel_ || now < next_standing_ || !standing_unknown()) return;
    next_standing_ = now + kNoAnswer;  // until this answer comes
    ask("break_list", Json::object(), Json(), 0, [this](const wire::Message& m) {
        if (m["ok"].get<bool>()) standing_arrived(m["data"]);
        next_standing_ = std::chrono::steady_clock::now() +
                         (answering_.empty() ? std::chrono::milliseconds(kAskAgain)
                                             : std::chrono::milliseconds(kAskAgainAnswering));
    });
}

// An answer waits, or a breakpoint is armed nowhere yet.
bool Adapter::standing_unknown() const {
    if (!answering_.empty()) return true;
    for (const auto& [bp, standing] : shown_breakpoints_) {
        if (!standing.body.value("verified", false)) return true;
    }
    return false;
}

std::optional<std::chrono::steady_clock::time_point> Adapter::standing_due() const {
    if (!channel_ || !standing_unknown()) return std::nullopt;
    return next_standing_;
}

void Adapter::standing_arrived(const Json& data) {
    const int total = data.value("total", 0);
    const int waiting = data.value("waiting", 0);
    for (const auto& bp : data.value("breakpoints", Json::array())) {
        const auto found = shown_breakpoints_.find(number(bp, "id"));
        if (found == shown_breakpoints_.end()) continue;
        auto& standing = found->second;
        auto body = standing.body;
        body.update(shown(bp, total, waiting));
        const bool changed =
            body.value("verified", false) != standing.body.value("verified", false);
        standing.body = body;
        if (standing.announced && changed) {
            send_event("breakpoint", {{"reason", "changed"}, {"breakpoint", body}});
        }
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto it = answering_.begin(); it != answering_.end();) {
        // Answered at once when there is no process to wait for or every one is armed; else at
        // the deadline. Not when `waiting` reaches 0: a process's answer to the broadcast before
        // (the clear of the source's old breakpoints) counts as its answer to this one.
        bool armed = true;
        for (const auto& answer : it->answers) {
            const auto found = shown_breakpoints_.find(number(answer, "id", -1));
            if (found != shown_breakpoints_.end() && !found->second.body.value("verified", false)) {
                armed = false;
            }
        }
        if (total > 0 && !armed && now < it->deadline) {
            ++it;
            continue;
        }
        for (auto& answer : it->answers) {
            const auto found = shown_breakpoints_.find(number(answer, "id", -1));
            if (found == shown_breakpoints_.end()) continue;
            answer = found->second.body;
            found->second.announced = true;
        }
        respond(it->request, {{"breakpoints", std::move(it->answers)}});
        it = answering_.erase(it);
    }
}

}  // namespace dpdb::dap
