#include "cli/program_terminal.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dpdb::cli {
namespace {

bool same_terminal(int a, int b) {
    struct stat first {};
    struct stat second {};
    return ::isatty(a) && ::isatty(b) && ::fstat(a, &first) == 0 && ::fstat(b, &second) == 0 &&
           first.st_rdev == second.st_rdev;
}

}  // namespace

std::unique_ptr<ProgramTerminal> ProgramTerminal::open_if_wanted() {
    const char* strategy = std::getenv("DPDB_PROGRAM_OUTPUT");
    if (strategy != nullptr && std::strcmp(strategy, "direct") == 0) return nullptr;
    if (!::isatty(STDOUT_FILENO)) return nullptr;
    termios modes{};
    const bool have_modes = ::tcgetattr(STDOUT_FILENO, &modes) == 0;
    winsize size{};
    const bool have_size = ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0;
    // posix_openpt, not openpty: it is in libc itself on every glibc a wheel may meet.
    const int ours = ::posix_openpt(O_RDWR | O_NOCTTY);
    const char* name = ours >= 0 && ::grantpt(ours) == 0 && ::unlockpt(ours) == 0
                           ? ::ptsname(ours)  // NOLINT(concurrency-mt-unsafe): one thread yet
                           : nullptr;
    const int program = name != nullptr ? ::open(name, O_RDWR | O_NOCTTY) : -1;
    if (program < 0) {
        if (ours >= 0) ::close(ours);
        return nullptr;  // no pseudo-terminal to be had: the program writes straight through
    }
    if (have_modes) ::tcsetattr(program, TCSANOW, &modes);
    if (have_size) ::ioctl(program, TIOCSWINSZ, &size);
    // The bytes pass as written; the user's terminal turns '\n' into a line's end itself.
    termios program_modes{};
    if (::tcgetattr(program, &program_modes) == 0) {
        program_modes.c_oflag &= ~OPOST;
        ::tcsetattr(program, TCSANOW, &program_modes);
    }
    ::fcntl(ours, F_SETFD, FD_CLOEXEC);
    ::fcntl(ours, F_SETFL, ::fcntl(ours, F_GETFL) | O_NONBLOCK);
    return std::unique_ptr<ProgramTerminal>(
        new ProgramTerminal(ours, program, same_terminal(STDOUT_FILENO, STDERR_FILENO)));
}

ProgramTerminal::ProgramTerminal(int ours, int program, bool stderr_too)
    : ours_(ours), program_(program), stderr_too_(stderr_too) {}

ProgramTerminal::~ProgramTerminal() {
    if (ours_ >= 0) ::close(ours_);
    if (program_ >= 0) ::close(program_);
}

void ProgramTerminal::become_program_output() const {
    ::dup2(program_, STDOUT_FILENO);
    if (stderr_too_) ::dup2(program_, STDERR_FILENO);
    ::close(program_);
    ::close(ours_);
}

void ProgramTerminal::close_program_side() {
    if (program_ >= 0) ::close(program_);
    program_ = -1;
}

std::string ProgramTerminal::read_available() {
    std::string text;
    char buffer[65536];
    while (ours_ >= 0) {
        const ssize_t n = ::read(ours_, buffer, sizeof buffer);
        if (n > 0) {
            text.append(buffer, static_cast<std::size_t>(n));
            if (text.size() >= (1U << 20)) break;  // the rest at the next call: others wait too
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        // EIO: the last writer closed its side (Linux says so instead of end of file).
        ::close(ours_);
        ours_ = -1;
    }
    return text;
}

void ProgramTerminal::copy_window_size() const {
    winsize size{};
    if (ours_ >= 0 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) {
        ::ioctl(ours_, TIOCSWINSZ, &size);
    }
}

}  // namespace dpdb::cli
