#include "cli/line_editor.hpp"

#include <histedit.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cwchar>

namespace dpdb::cli {
namespace {

// pdb's own completer delimiters (cmd.Cmd under readline), so words split as they do in pdb.
constexpr const char* kWordDelimiters = " \t\n`~!@#$%^&*()-=+[{]}\\|;:'\",<>/?";

std::string common_prefix(const std::vector<std::string>& words) {
    if (words.empty()) return {};
    std::string prefix = words.front();
    for (const auto& word : words) {
        std::size_t n = 0;
        while (n < prefix.size() && n < word.size() && prefix[n] == word[n]) ++n;
        prefix.resize(n);
    }
    return prefix;
}

}  // namespace

LineEditor::LineEditor(ByteSource source, Completer completer, std::string history_path)
    : source_(std::move(source)),
      completer_(std::move(completer)),
      history_path_(std::move(history_path)) {
    el_ = el_init("dpdb", stdin, stdout, stderr);
    el_set(el_, EL_CLIENTDATA, this);
    el_set(el_, EL_EDITOR, "emacs");
    el_set(el_, EL_PROMPT, &LineEditor::prompt_text);
    el_set(el_, EL_GETCFN, &LineEditor::read_char);
    // Ctrl-C must reach neither the debugged program nor us as a signal: with ISIG off it is a
    // key, bound to clearing the line, as in pdb under readline.
    el_set(el_, EL_SETTY, "-d", "-isig", nullptr);
    el_set(el_, EL_BIND, "^C", "em-kill-line", nullptr);
    el_set(el_, EL_ADDFN, "dpdb-complete", "complete with the remote pdb", &LineEditor::complete);
    el_set(el_, EL_BIND, "^I", "dpdb-complete", nullptr);
    history_ = history_init();
    HistEvent event;
    history(history_, &event, H_SETSIZE, 2000);
    history(history_, &event, H_SETUNIQUE, 1);
    if (!history_path_.empty()) history(history_, &event, H_LOAD, history_path_.c_str());
    el_set(el_, EL_HIST, history, history_);
    el_source(el_, nullptr);  // the user's ~/.editrc, as every libedit program reads it
}

LineEditor::~LineEditor() {
    HistEvent event;
    if (!history_path_.empty()) history(history_, &event, H_SAVE, history_path_.c_str());
    history_end(history_);
    el_end(el_);
}

std::optional<std::string> LineEditor::read_line(const std::string& prompt) {
    prompt_ = prompt;
    editing_ = true;
    take_typed_ahead();
    // libedit draws the prompt first and only then leaves the cooked mode (waiting for the prompt
    // to drain): a Ctrl-D typed as soon as the prompt shows met the cooked mode, which keeps it as
    // an end of file that reads as a NUL once raw, and the line never ended. The edit mode comes
    // first now.
    el_set(el_, EL_PREP_TERM, 1);
    int count = 0;
    const char* line = el_gets(el_, &count);
    editing_ = false;
    if (line == nullptr || count <= 0) return std::nullopt;
    std::string text(line, static_cast<std::size_t>(count));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (!text.empty()) {
        HistEvent event;
        history(history_, &event, H_ENTER, text.c_str());
        if (!history_path_.empty()) history(history_, &event, H_SAVE, history_path_.c_str());
    }
    return text;
}

void LineEditor::print_above(const std::string& text, bool redraw) {
    if (!editing_) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return;
    }
    std::fputs("\r\033[K", stdout);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (redraw) el_set(el_, EL_REFRESH);
}

bool LineEditor::drop_typed_ahead() {
    const bool any = !typed_ahead_.empty();
    typed_ahead_.clear();
    return any;
}

// What was typed before this line's prompt (the next command typed ahead, a Ctrl-D pressed while
// the last line was sent) waits in the cooked mode's lines, where the terminal has already taken
// the Ctrl-D as an end of file. Read now, in that mode, the Ctrl-D comes back as the key it was.
void LineEditor::take_typed_ahead() {
    termios modes{};
    if (::tcgetattr(STDIN_FILENO, &modes) != 0 || (modes.c_lflag & ICANON) == 0) return;
    // Bounded: each read takes one line or one end of file; a terminal buffers a few KB.
    for (int reads = 0; reads < 256; ++reads) {
        pollfd typed{STDIN_FILENO, POLLIN, 0};
        if (::poll(&typed, 1, 0) != 1 || typed.revents != POLLIN) return;  // none, or hung up
        char buffer[4096];
        const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (n < 0) return;
        typed_ahead_.append(buffer, static_cast<std::size_t>(n));
        // A cooked read ends at a line's end, or short of one where Ctrl-D ended it.
        const bool line_end = n > 0 && (buffer[n - 1] == '\n' || n == sizeof buffer);
        if (!line_end) typed_ahead_.push_back(modes.c_cc[VEOF]);
    }
}

std::optional<unsigned char> LineEditor::next_byte() {
    if (typed_ahead_.empty()) return source_();
    const auto byte = static_cast<unsigned char>(typed_ahead_.front());
    typed_ahead_.erase(0, 1);
    return byte;
}

void LineEditor::resize() {
    el_resize(el_);
}

int LineEditor::read_char(editline* el, wchar_t* out) {
    LineEditor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    std::mbstate_t state{};
    for (;;) {
        const auto byte = self->next_byte();
        if (!byte) return 0;
        const char c = static_cast<char>(*byte);
        const std::size_t n = std::mbrtowc(out, &c, 1, &state);
        if (n == static_cast<std::size_t>(-2)) continue;  // more bytes of this character
        if (n == static_cast<std::size_t>(-1)) {
            state = std::mbstate_t{};
            *out = static_cast<wchar_t>(static_cast<unsigned char>(c));
        }
        return 1;
    }
}

const char* LineEditor::prompt_text(editline* el) {
    LineEditor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return self->prompt_.c_str();
}

unsigned char LineEditor::complete(editline* el, int) {
    LineEditor* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return self->complete_here();
}

unsigned char LineEditor::complete_here() {
    const LineInfo* info = el_line(el_);
    const std::string line(info->buffer, info->lastchar);
    const int endidx = static_cast<int>(info->cursor - info->buffer);
    int begidx = endidx;
    while (begidx > 0 && std::strchr(kWordDelimiters, line[begidx - 1]) == nullptr) --begidx;
    const std::string text = line.substr(begidx, endidx - begidx);
    auto matches = completer_(text, line, begidx, endidx);
    matches.erase(std::remove_if(matches.begin(), matches.end(),
                                 [&](const std::string& m) { return m.rfind(text, 0) != 0; }),
                  matches.end());
    if (matches.empty()) return CC_REFRESH_BEEP;
    // Sorted and each once, as readline shows them (pdb gives locals in definition order).
    std::sort(matches.begin(), matches.end());
    matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
    const std::string prefix = common_prefix(matches);
    if (prefix.size() > text.size()) {
        std::string insert = prefix.substr(text.size());
        if (matches.size() == 1 && !insert.empty() && insert.back() != '.' &&
            insert.back() != '/') {
            insert += ' ';
        }
        el_insertstr(el_, insert.c_str());
        return CC_REFRESH;
    }
    if (matches.size() == 1) return CC_REFRESH;
    // Nothing more in common: list the candidates in columns, as readline does.
    std::size_t width = 0;
    for (const auto& m : matches) width = std::max(width, m.size());
    width += 2;
    int columns = 80;
    el_get(el_, EL_GETTC, "co", &columns);
    const std::size_t per_row = std::max<std::size_t>(1, columns / width);
    std::string listing = "\n";
    for (std::size_t i = 0; i < matches.size(); ++i) {
        listing += matches[i];
        listing += (i + 1) % per_row == 0 || i + 1 == matches.size()
                       ? std::string("\n")
                       : std::string(width - matches[i].size(), ' ');
    }
    std::fputs(listing.c_str(), stdout);
    return CC_REDISPLAY;
}

}  // namespace dpdb::cli
