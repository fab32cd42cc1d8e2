// Line editing, history and completion for the client's pdb prompt, on libedit. The editor never
// reads the terminal itself: it asks a ByteSource, so the client can keep serving the hub (events,
// output, a session that goes away) while the user types.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

struct editline;
struct history;

namespace dpdb::cli {

class LineEditor {
  public:
    // Returns the next byte typed, or nothing to abandon the line being edited.
    using ByteSource = std::function<std::optional<unsigned char>()>;
    // Completions for the word text (line[begidx:endidx]) of line, as pdb's complete() gives them.
    using Completer = std::function<std::vector<std::string>(
        const std::string& text, const std::string& line, int begidx, int endidx)>;

    LineEditor(ByteSource source, Completer completer, std::string history_path);
    ~LineEditor();
    LineEditor(const LineEditor&) = delete;
    LineEditor& operator=(const LineEditor&) = delete;

    // Edits one line after `prompt`. Nothing on end of input (Ctrl-D on an empty line) or when the
    // byte source abandoned the line.
    std::optional<std::string> read_line(const std::string& prompt);
    // Prints a line above the prompt being edited, then (unless told not to: a line given up)
    // redraws the prompt and what was typed.
    void print_above(const std::string& text, bool redraw = true);
    // Changes the prompt of the line being edited (shown at the next redraw).
    void set_prompt(const std::string& prompt) { prompt_ = prompt; }
    // Call after the terminal changed size.
    void resize();
    bool editing() const { return editing_; }
    // Forgets what was typed ahead of the line to come (its session ended); true if anything was.
    bool drop_typed_ahead();

  private:
    static int read_char(editline* el, wchar_t* out);
    static unsigned char complete(editline* el, int key);
    static const char* prompt_text(editline* el);
    unsigned char complete_here();
    void take_typed_ahead();
    std::optional<unsigned char> next_byte();

    ByteSource source_;
    Completer completer_;
    std::string history_path_;
    std::string prompt_;
    // Bytes typed while the terminal was in its cooked mode, read before they could be mangled.
    std::string typed_ahead_;
    editline* el_ = nullptr;
    history* history_ = nullptr;
    bool editing_ = false;
};

}  // namespace dpdb::cli
