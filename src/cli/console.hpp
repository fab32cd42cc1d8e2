// The interactive side of the client: follows a hub's sessions, shows the prompt of the attached
// one with line editing, routes the user's lines and completion requests to it, and tells the user
// the moment another process stops.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "cli/line_editor.hpp"
#include "cli/program_terminal.hpp"
#include "cli/terminal_lines.hpp"
#include "wire/channel.hpp"

namespace dpdb::cli {

enum class Follow {
    Run,      // dpdb run: attach to every new session in turn, until the program is done
    Session,  // dpdb attach N: one session, then exit
    Next,     // dpdb attach --next: the next session to open anywhere, then exit
};

struct ConsoleOptions {
    Follow follow = Follow::Session;
    std::int64_t session = 0;  // for Follow::Session
    // Follow::Run: called often; returns false once the console may end (the program is done).
    std::function<bool()> program_running;
    // Follow::Run: only sessions of processes started by this run (they carry this id).
    std::string run_id;
    // Follow::Run: the program's first process. Once it ended, what its agent sent before its
    // connection closed (the last logpoint messages) is shown before the console ends.
    std::int64_t program_pid = 0;
    // Follow::Run: the program's output comes through here (cli/program_terminal), if at all.
    ProgramTerminal* program_terminal = nullptr;
    // The console's maker owns SIGINT and passes the terminal's on with interrupt_console()
    // (dpdb run: its handler is in place before the program starts, and stays).
    bool sigint_handled_by_caller = false;
};

// The terminal's Ctrl-C, for the console to act on at its next turn. Async-signal-safe.
void interrupt_console();

class Console {
  public:
    Console(wire::Channel& channel, ConsoleOptions options);
    ~Console();
    // Runs until done; returns the exit status for the command (0, or 2 for a usage error).
    int run();
    // Whether it ended because its terminal went away.
    bool hung_up() const { return hung_up_; }
    // Whether it ended because the hub went away (`dpdb attach` then waits for it).
    bool lost_hub() const { return lost_hub_; }
    // After run(): copies the program's output to the terminal until the program has ended.
    void relay_until_program_ends();

  private:
    void handle(const wire::Message& message);
    void on_event(const std::string& kind, const wire::Json& data);
    void attach(std::int64_t sid);
    void attach_next_waiting();
    void user_line(const std::string& line);
    bool pump(int timeout_ms);
    // Before the first prompt of another session: discards input typed for one that ended.
    void drop_typed_for_ended_session();
    void check_interrupt();
    std::optional<unsigned char> next_byte();
    std::vector<std::string> complete(const std::string& text, const std::string& line, int begidx,
                                      int endidx);
    void say(const std::string& text);
    // Puts text on the terminal, above the prompt being edited if there is one.
    void show(const std::string& text, bool redraw = true);
    bool editing() const { return editor_ && editor_->editing(); }
    // The program's output (through its pseudo-terminal), and the notices that waited for a line's
    // end (cli/terminal_lines).
    void relay_program_output();
    void show_due_lines();
    // The next message from the hub, within timeout_ms, copying the program's output meanwhile.
    std::optional<wire::Message> receive(int timeout_ms);
    void follow_terminal_size();
    void announce_pause(std::int64_t sid, const wire::Json& session);
    void flush_announcements();
    void flush_due_announcements();
    std::string sessions_text(bool all) const;
    std::string prompt_label() const;
    bool finished() const;
    bool is_mine(const wire::Json& session) const;
    int terminal_columns() const;

    wire::Channel& channel_;
    ConsoleOptions options_;
    std::unique_ptr<LineEditor> editor_;
    bool interactive_ = false;
    std::map<std::int64_t, wire::Json> sessions_;  // every open session the hub told us of
    std::deque<std::int64_t> waiting_;             // paused, unattached, in order of arrival
    std::int64_t attached_ = 0;
    std::int64_t attach_requested_ = 0;
    std::int64_t switch_to_ = 0;         // `switch N`: attach to N once the hub confirms the detach
    std::optional<std::string> prompt_;  // the attached session awaits a line after this prompt
    std::string last_prompt_;
    bool prompt_nested_ = false;
    std::set<std::int64_t> declined_;  // sessions the user detached from: not attached by itself
    bool abandon_line_ = false;
    // A session that ended while the user had no line on its way to it: what was typed for it
    // (a line being edited, keys typed ahead) must never reach the next session.
    std::int64_t ended_under_typing_ = 0;
    bool dropped_partial_line_ = false;
    bool line_sent_ = false;  // a line went to the attached session; its answer is not in yet
    bool done_ = false;
    bool hung_up_ = false;         // the terminal went away (SIGHUP)
    bool lost_hub_ = false;        // the hub went away (lost_hub())
    bool program_linked_ = false;  // the hub told of the program's first process
    bool program_gone_ = false;    // ... and of its end
    int status_ = 0;
    std::int64_t completion_id_ = 0;
    std::optional<wire::Json> completion_answer_;
    std::string stdin_line_;  // non-terminal input, read a line at a time
    bool stdin_closed_ = false;
    std::chrono::steady_clock::time_point announce_window_{};
    int announced_ = 0;    // pause notices in the current window
    int unannounced_ = 0;  // pauses since, told in one line at the window's end
    TerminalLines lines_;
};

}  // namespace dpdb::cli
