// What the console puts on the terminal, and when: dpdb's notices (a few pause notices a second,
// then one that counts the rest), the program's output copied from its pseudo-terminal, both
// placed by cli/terminal_lines so that a notice never lands inside a program's line.
#include <poll.h>

#include <chrono>
#include <cstdio>

#include "cli/console.hpp"
#include "cli/describe.hpp"

namespace dpdb::cli {
namespace {

// Pause notices: at most this many per window, then one line that counts the others.
constexpr int kAnnouncedPerWindow = 5;
constexpr auto kAnnounceWindow = std::chrono::seconds(1);
constexpr int kRelayTickMs = 200;

}  // namespace

void Console::say(const std::string& text) {
    const std::string line = "[dpdb] " + text + "\n";
    // The label counts the waiting sessions, which may just have changed.
    if (editing() && attached_ != 0) editor_->set_prompt(prompt_label() + last_prompt_);
    if (options_.program_terminal == nullptr) {
        // A line given up (its session ended) is not drawn again under the news.
        show(line, !abandon_line_);
        return;
    }
    lines_.add_notice(line);
    show(lines_.take(editing(), std::chrono::steady_clock::now()), !abandon_line_);
}

void Console::show(const std::string& text, bool redraw) {
    if (text.empty()) return;
    if (editor_) {
        editor_->print_above(text, redraw);
    } else {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    }
}

void Console::relay_program_output() {
    const auto now = std::chrono::steady_clock::now();
    lines_.program_wrote(options_.program_terminal->read_available(), now);
    show(lines_.take(editing(), now), !abandon_line_);
}

void Console::show_due_lines() {
    if (lines_.has_pending()) {
        show(lines_.take(editing(), std::chrono::steady_clock::now()), !abandon_line_);
    }
}

void Console::relay_until_program_ends() {
    ProgramTerminal* program = options_.program_terminal;
    if (program == nullptr) return;
    while (program->fd() >= 0 && options_.program_running()) {
        pollfd fd = {program->fd(), POLLIN, 0};
        if (::poll(&fd, 1, kRelayTickMs) > 0) relay_program_output();
        show_due_lines();
    }
    // What the program wrote last; a child it left running may write on, to a terminal gone.
    if (program->fd() >= 0) relay_program_output();
    show(lines_.take(false, std::chrono::steady_clock::now() + TerminalLines::kOpenLineWait));
}

// A job of thousands of processes that reach a breakpoint together would print a line for each:
// a few lines a second, then one that counts the rest (`sessions` lists them).
void Console::announce_pause(std::int64_t sid, const wire::Json& session) {
    const auto now = std::chrono::steady_clock::now();
    if (now - announce_window_ >= kAnnounceWindow) {
        flush_announcements();
        announce_window_ = now;
        announced_ = 0;
    }
    if (announced_ < kAnnouncedPerWindow) {
        ++announced_;
        // Without a terminal there is no prompt to type `switch` at: another terminal attaches.
        const std::string id = std::to_string(sid);
        const std::string how = interactive_
                                    ? "`sessions` lists them, `switch " + id + "` goes there"
                                    : "`dpdb ls` lists them, `dpdb attach " + id + "` goes there";
        say("session " + id + " paused: " + process_label(session) + " at " + location(session) +
            " (" + std::to_string(waiting_.size()) + " waiting; " + how + ")");
        return;
    }
    ++unannounced_;
}

void Console::flush_due_announcements() {
    if (unannounced_ > 0 &&
        std::chrono::steady_clock::now() - announce_window_ >= kAnnounceWindow) {
        flush_announcements();
        announced_ = 0;
    }
}

void Console::flush_announcements() {
    if (unannounced_ == 0) return;
    say(std::to_string(unannounced_) + " more session(s) paused (" +
        std::to_string(waiting_.size()) + " waiting; " +
        (interactive_ ? "`sessions`" : "`dpdb ls`") + " lists them)");
    unannounced_ = 0;
}

}  // namespace dpdb::cli
