// What `dpdb run` shows on the user's terminal, and when: the program's output as it comes, and
// dpdb's own notices only where a line of the program's ends, so that a notice never lands inside a
// line the program is still writing ("result[dpdb] session 4 paused" then " 20").
//
// Pure bookkeeping: it is told what the program wrote and what dpdb has to say, and answers with
// the text to put on the terminal now. A program that leaves a line open (a progress counter, a
// question without its answer) holds the notices for at most kOpenLineWait; then they go on a line
// of their own, since news nobody sees is worse than a broken line.
#pragma once

#include <chrono>
#include <deque>
#include <string>

namespace dpdb::cli {

class TerminalLines {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto kOpenLineWait = std::chrono::seconds(1);

    // The program wrote this (any bytes, any split).
    void program_wrote(const std::string& text, Clock::time_point now);
    // A notice of dpdb's, a whole line ending in '\n'.
    void add_notice(const std::string& line);
    // Text that reached the terminal by another way (a session's pdb output): only its last byte
    // matters, for whether a line is open.
    void shown_elsewhere(const std::string& text);

    // What to write now. While a prompt is being edited (`editing`) only whole lines are given,
    // since they are printed above the prompt; the rest waits for its line's end or the prompt's.
    std::string take(bool editing, Clock::time_point now);
    // Before a prompt is drawn: the line break that puts it at a line's start, if a line is open.
    std::string close_open_line();
    bool has_pending() const { return !held_.empty() || !notices_.empty(); }

  private:
    std::string take_program_text(bool whole_lines_only);
    void shown(const std::string& text);

    std::string held_;                 // the program's, not shown yet
    std::deque<std::string> notices_;  // dpdb's, not shown yet
    bool line_open_ = false;           // the terminal's last line is one the program has not ended
    Clock::time_point last_program_byte_{};
};

}  // namespace dpdb::cli
