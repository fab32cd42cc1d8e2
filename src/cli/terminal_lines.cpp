#include "cli/terminal_lines.hpp"

namespace dpdb::cli {

void TerminalLines::program_wrote(const std::string& text, Clock::time_point now) {
    if (text.empty()) return;
    held_ += text;
    last_program_byte_ = now;
}

void TerminalLines::add_notice(const std::string& line) {
    notices_.push_back(line);
}

void TerminalLines::shown_elsewhere(const std::string& text) {
    shown(text);
}

void TerminalLines::shown(const std::string& text) {
    if (!text.empty()) line_open_ = text.back() != '\n';
}

// The program's held text that may be shown: everything, or only its whole lines (while a prompt
// is edited, or before notices that must not land inside a line).
std::string TerminalLines::take_program_text(bool whole_lines_only) {
    std::size_t end = held_.size();
    if (whole_lines_only) {
        const std::size_t newline = held_.rfind('\n');
        end = newline == std::string::npos ? 0 : newline + 1;
    }
    std::string text = held_.substr(0, end);
    held_.erase(0, end);
    shown(text);
    return text;
}

std::string TerminalLines::take(bool editing, Clock::time_point now) {
    // A prompt being edited sits at a line's start: the program's open line waits above it.
    if (editing) line_open_ = false;
    std::string out;
    if (!notices_.empty()) {
        out += take_program_text(true);
        if (line_open_ && now - last_program_byte_ >= kOpenLineWait) out += close_open_line();
        if (!line_open_) {
            for (const auto& notice : notices_) out += notice;
            notices_.clear();
        }
    }
    return out + take_program_text(editing);
}

std::string TerminalLines::close_open_line() {
    if (!line_open_) return "";
    line_open_ = false;
    return "\n";
}

}  // namespace dpdb::cli
