// The pseudo-terminal `dpdb run` gives its program as stdout (and stderr, when that is the same
// terminal): the program still writes to a terminal (isatty, colours, its width), and the client,
// which copies it to the user's terminal, sees where the program's lines end (cli/terminal_lines).
// Named strategy: DPDB_PROGRAM_OUTPUT=direct lets the program write straight to the user's terminal
// as before (notices may then split its lines).
#pragma once

#include <memory>
#include <string>

namespace dpdb::cli {

class ProgramTerminal {
  public:
    // One when stdout is a terminal and the strategy is not "direct"; else nothing.
    static std::unique_ptr<ProgramTerminal> open_if_wanted();
    ~ProgramTerminal();
    ProgramTerminal(const ProgramTerminal&) = delete;
    ProgramTerminal& operator=(const ProgramTerminal&) = delete;

    // In the forked child, before exec: the program's side becomes its stdout (and stderr).
    void become_program_output() const;
    // In the parent once the program runs: only the program (and its children) hold its side, so
    // that reading tells when the last of them closed it.
    void close_program_side();
    // For poll(); -1 once every writer is gone.
    int fd() const { return ours_; }
    // What the program wrote since (never blocks); empty if nothing. After the last writer
    // closed its side, fd() becomes -1.
    std::string read_available();
    // The user's terminal changed size: the program's follows (it gets SIGWINCH from the kernel).
    void copy_window_size() const;

  private:
    ProgramTerminal(int ours, int program, bool stderr_too);

    int ours_ = -1;
    int program_ = -1;
    bool stderr_too_ = false;
};

}  // namespace dpdb::cli
