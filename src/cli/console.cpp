#include "cli/console.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "cli/describe.hpp"
#include "cli/log_lines.hpp"

namespace dpdb::cli {
namespace {

constexpr int kTickMs = 200;
constexpr auto kCompletionTimeout = std::chrono::seconds(3);
constexpr auto kLastWordsWait = std::chrono::seconds(1);
// `sessions` lists them all up to this many; beyond, where they are and the first of them.
constexpr std::size_t kSessionsShown = 20;

std::atomic<bool> g_terminal_resized{false};
std::atomic<bool> g_interrupted{false};
std::atomic<bool> g_hung_up{false};

void on_sigint(int) {
    interrupt_console();
}

void on_sighup(int) {
    g_hung_up = true;
}

void on_sigwinch(int) {
    g_terminal_resized = true;
}

std::string history_file() {
    std::string dir;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
        dir = std::string(state) + "/dpdb";
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
        dir = std::string(home) + "/.local/state/dpdb";
    } else {
        return "";
    }
    // Best effort: without a history file the prompt still works.
    std::string partial;
    for (std::size_t i = 1; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0700);
    }
    return dir + "/history";
}

std::string trim(const std::string& s) {
    const auto begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) return "";
    const auto end = s.find_last_not_of(" \t");
    return s.substr(begin, end - begin + 1);
}

}  // namespace

void interrupt_console() {
    g_interrupted = true;
}

Console::Console(wire::Channel& channel, ConsoleOptions options)
    : channel_(channel), options_(std::move(options)) {
    interactive_ = ::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO);
    if (interactive_) {
        editor_ = std::make_unique<LineEditor>(
            [this] { return next_byte(); },
            [this](const std::string& text, const std::string& line, int begidx, int endidx) {
                return complete(text, line, begidx, endidx);
            },
            history_file());
    }
    if (interactive_ || options_.program_terminal != nullptr) {
        struct sigaction action {};
        action.sa_handler = on_sigwinch;
        sigaction(SIGWINCH, &action, nullptr);
    }
    if (!options_.sigint_handled_by_caller) {
        struct sigaction action {};
        action.sa_handler = on_sigint;
        sigaction(SIGINT, &action, nullptr);
    }
    if (options_.follow == Follow::Run) {
        // The terminal went away (an SSH connection dropped, a window closed): the run goes on
        // without it, its sessions paused for a `dpdb attach` from elsewhere.
        struct sigaction hangup {};
        hangup.sa_handler = on_sighup;
        sigaction(SIGHUP, &hangup, nullptr);
    }
}

void Console::check_interrupt() {
    if (g_hung_up.exchange(false)) {
        if (attached_ != 0) channel_.send(wire::make("detach", {{"sid", attached_}}));
        attached_ = 0;
        abandon_line_ = true;
        done_ = true;
        hung_up_ = true;
        return;
    }
    if (!g_interrupted.exchange(false)) return;
    if (attached_ != 0) {
        // The prompt is not shown: the debuggee runs a command. Ctrl-C interrupts it there, as
        // it would in pdb.
        channel_.send(wire::make("interrupt", {{"sid", attached_}}));
        return;
    }
    // Under dpdb run the terminal's SIGINT reached the program too, which pauses itself; and the
    // sessions the user detached from are offered again, the way back without another terminal.
    if (options_.follow == Follow::Run) {
        declined_.clear();
        if (attach_requested_ == 0) attach_next_waiting();
        return;
    }
    status_ = 130;
    done_ = true;
}

Console::~Console() = default;

std::optional<wire::Message> Console::receive(int timeout_ms) {
    ProgramTerminal* program = options_.program_terminal;
    if (program == nullptr || program->fd() < 0) return channel_.receive(timeout_ms);
    // What the channel holds already (a TLS record read with an earlier one) comes first.
    if (auto message = channel_.receive(0)) return message;
    pollfd fds[2] = {{channel_.fd(), POLLIN, 0}, {program->fd(), POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) > 0 && fds[1].revents != 0) relay_program_output();
    show_due_lines();
    return channel_.receive(0);
}

void Console::follow_terminal_size() {
    if (!g_terminal_resized.exchange(false)) return;
    if (options_.program_terminal != nullptr) options_.program_terminal->copy_window_size();
    if (!editor_) return;
    editor_->resize();
    // pdb fills the width it was told at attach (pp): attaching again tells the new one.
    if (attached_ != 0) {
        channel_.send(wire::make("attach", {{"sid", attached_}, {"cols", terminal_columns()}}));
    }
}

int Console::terminal_columns() const {
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    if (const char* columns = std::getenv("COLUMNS")) return std::max(20, std::atoi(columns));
    return 80;
}

bool Console::finished() const {
    if (done_) return true;
    if (options_.follow != Follow::Run) return false;
    return !options_.program_running() && sessions_.empty();
}

int Console::run() {
    // Only this run's events when following a run: the hub would otherwise send every console
    // of a job of N `dpdb run`s every process's events.
    channel_.send(options_.follow == Follow::Run && !options_.run_id.empty()
                      ? wire::make("subscribe", {{"run", options_.run_id}})
                      : wire::make("subscribe"));
    // Only the sessions: a job of 10,000 processes would send every process's description. They
    // may come in pages (hub/pages.hpp), every one but the last marked "more".
    channel_.send(wire::make("list", {{"id", 1}, {"sessions_only", true}}));
    bool listed = false;
    while (!listed && !done_) {
        auto message = channel_.receive(-1);
        if (!message) continue;
        if (message->type == "listing") {
            for (const auto& s : (*message)["sessions"]) on_event("session_open", s);
            listed = !message->has("more");
        } else {
            handle(*message);
        }
    }
    if (options_.follow == Follow::Session) {
        if (sessions_.count(options_.session) == 0) {
            std::fprintf(stderr, "dpdb: no session %lld (`dpdb ls` lists the paused sessions)\n",
                         static_cast<long long>(options_.session));
            return 2;
        }
        attach(options_.session);
    } else if (options_.follow == Follow::Next) {
        say("waiting for the next breakpoint anywhere (Ctrl-C to give up)");
    } else if (options_.follow == Follow::Run && interactive_) {
        attach_next_waiting();
    }

    while (!finished()) {
        if (attached_ != 0 && prompt_) {
            const std::string prompt = prompt_label() + *prompt_;
            prompt_.reset();
            abandon_line_ = false;
            drop_typed_for_ended_session();
            std::optional<std::string> line;
            show(lines_.close_open_line());
            if (editor_) {
                line = editor_->read_line(prompt);
            } else {
                std::fputs(prompt.c_str(), stdout);
                std::fflush(stdout);
                stdin_line_.clear();
                for (;;) {
                    const auto byte = next_byte();
                    if (!byte) break;
                    if (*byte == '\n') {
                        line = stdin_line_;
                        break;
                    }
                    stdin_line_.push_back(static_cast<char>(*byte));
                }
            }
            if (abandon_line_ || done_) {
                dropped_partial_line_ = dropped_partial_line_ || (line && !line->empty());
                continue;
            }
            if (!line && prompt_nested_ && !stdin_closed_) {
                if (editor_) std::fputs("\n", stdout);
                channel_.send(
                    wire::make("input", {{"sid", attached_}, {"line", ""}, {"eof", true}}));
                continue;
            }
            if (!line) {
                if (editor_) std::fputs("\n", stdout);
                declined_.insert(attached_);
                channel_.send(wire::make("detach", {{"sid", attached_}}));
                if (!editor_ && options_.follow != Follow::Run) stdin_closed_ = true;
                continue;
            }
            // A prompt that came while the line was edited was for this same line (an agent
            // that repeats it): the next one comes after this line is read.
            prompt_.reset();
            user_line(*line);
        } else if (!pump(kTickMs)) {
            break;
        }
    }
    // The hub passes on what a process sent before it tells of its end: the program's last
    // logpoint messages (sent as it exits) come before its process_exit. Bounded: a hub that
    // never tells does not hold the run.
    const auto deadline = std::chrono::steady_clock::now() + kLastWordsWait;
    while (options_.follow == Follow::Run && !done_ && program_linked_ && !program_gone_ &&
           std::chrono::steady_clock::now() < deadline && pump(kTickMs)) {
    }
    return status_;
}

void Console::drop_typed_for_ended_session() {
    if (ended_under_typing_ == 0 || ended_under_typing_ == attached_) return;
    int typed_ahead = 0;
    if (interactive_ && ::ioctl(STDIN_FILENO, FIONREAD, &typed_ahead) == 0 && typed_ahead > 0) {
        ::tcflush(STDIN_FILENO, TCIFLUSH);
    }
    const bool taken_ahead = editor_ && editor_->drop_typed_ahead();
    if (typed_ahead > 0 || taken_ahead || dropped_partial_line_) {
        say("dropped what was typed for session " + std::to_string(ended_under_typing_) +
            ", which ended before it was sent; it goes to no other session");
    }
    ended_under_typing_ = 0;
    dropped_partial_line_ = false;
}

bool Console::pump(int timeout_ms) {
    check_interrupt();
    follow_terminal_size();
    flush_due_announcements();
    try {
        auto message = receive(timeout_ms);
        while (message) {
            handle(*message);
            // Done (the session ended): what follows is not ours to read, and a hub that goes
            // away right after (a run whose program ended) is no failure.
            if (done_) return true;
            message = channel_.receive(0);
        }
        return true;
    } catch (const std::exception& error) {
        say(std::string("lost the hub: ") + error.what());
        lost_hub_ = true;
        done_ = true;
        abandon_line_ = true;
        status_ = 1;
        return false;
    }
}

std::optional<unsigned char> Console::next_byte() {
    for (;;) {
        if (abandon_line_ || done_) return std::nullopt;
        follow_terminal_size();
        if (stdin_closed_) {
            if (!pump(kTickMs)) return std::nullopt;
            continue;
        }
        // poll() passes over a negative fd: without a program terminal, only the first two count.
        const int program = options_.program_terminal ? options_.program_terminal->fd() : -1;
        pollfd fds[3] = {
            {STDIN_FILENO, POLLIN, 0}, {channel_.fd(), POLLIN, 0}, {program, POLLIN, 0}};
        const int ready = ::poll(fds, 3, kTickMs);
        flush_due_announcements();
        if (fds[2].revents != 0) relay_program_output();
        show_due_lines();
        if (ready < 0) {  // EINTR: SIGWINCH or SIGINT
            check_interrupt();
            continue;
        }
        if (fds[1].revents != 0 && !pump(0)) return std::nullopt;
        if (abandon_line_ || done_) return std::nullopt;
        if (fds[0].revents != 0) {
            unsigned char byte = 0;
            const ssize_t n = ::read(STDIN_FILENO, &byte, 1);
            if (n == 1) return byte;
            stdin_closed_ = n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
            if (stdin_closed_) return std::nullopt;
        }
        if (options_.follow == Follow::Run && ready == 0) options_.program_running();
    }
}

void Console::handle(const wire::Message& message) {
    // What the program wrote before its agent sent this (a warning pdb printed to stderr, then
    // the prompt) is in its terminal already: shown first, the terminal keeps their order.
    if (options_.program_terminal != nullptr && options_.program_terminal->fd() >= 0) {
        relay_program_output();
    }
    const auto& type = message.type;
    if (type == "event") {
        on_event(message.str("kind"), message["data"]);
    } else if (type == "attached") {
        // Attached again to the same session (the terminal changed size): nothing new to say.
        const bool again = message.num("sid") == attached_;
        attached_ = message.num("sid");
        attach_requested_ = 0;
        waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), attached_), waiting_.end());
        const auto& session = message["session"];
        sessions_[attached_] = session;
        std::string header =
            "attached to session " + std::to_string(attached_) + ": " + process_label(session) +
            ", thread " + session.value("thread", std::string("?")) + ", at " + location(session);
        if (!waiting_.empty()) header += " (" + std::to_string(waiting_.size()) + " more waiting)";
        if (!again) say(header);
    } else if (type == "output") {
        if (message.num("sid") != attached_) return;
        // The attached session speaks now, on a line of its own (the program's open line, if any,
        // goes on below it, as it would after a prompt).
        const auto text = message.str("text");
        show(lines_.close_open_line() + text);
        lines_.shown_elsewhere(text);
    } else if (type == "prompt") {
        if (message.num("sid") == attached_) {
            line_sent_ = false;
            prompt_ = message.str("text");
            last_prompt_ = *prompt_;
            prompt_nested_ = message.has("nested") && message["nested"].get<bool>();
        }
    } else if (type == "completions") {
        if (message.num("id") == completion_id_) completion_answer_ = message["matches"];
    } else if (type == "detached") {
        const auto sid = message.num("sid");
        if (sid != attached_) return;
        attached_ = 0;
        prompt_.reset();
        abandon_line_ = true;
        const auto reason = message.str("reason");
        if (reason != "detached" && !line_sent_) ended_under_typing_ = sid;
        line_sent_ = false;
        if (reason == "detached" && switch_to_ != 0) {
            say("session " + std::to_string(sid) + " stays paused");
        } else if (reason == "detached") {
            const std::string elsewhere = "`dpdb attach " + std::to_string(sid) + "`";
            say("detached from session " + std::to_string(sid) + "; it stays paused (" +
                (options_.follow == Follow::Run ? "Ctrl-C here or " + elsewhere + " elsewhere"
                                                : elsewhere) +
                " to come back)");
        } else if (reason != "continued" || options_.follow != Follow::Run) {
            // Under dpdb run the program's going on shows itself, as under pdb; the next
            // session attached says so.
            say("session " + std::to_string(sid) + " " + reason);
        }
        if (switch_to_ != 0) {
            attach(switch_to_);
            switch_to_ = 0;
        } else if (options_.follow != Follow::Run) {
            done_ = true;
        } else if (interactive_) {
            attach_next_waiting();
        }
    } else if (type == "error") {
        say("error: " + message.str("message"));
        if (attach_requested_ != 0) {
            attach_requested_ = 0;
            if (options_.follow == Follow::Session) {
                status_ = 2;
                done_ = true;
            }
        }
    }
}

bool Console::is_mine(const wire::Json& session) const {
    if (options_.follow != Follow::Run || options_.run_id.empty()) return true;
    return session.value("run", std::string()) == options_.run_id;
}

void Console::on_event(const std::string& kind, const wire::Json& data) {
    if (kind == "session_open") {
        const auto sid = data.value("sid", std::int64_t{0});
        if (!is_mine(data)) return;
        sessions_[sid] = data;
        if (data.value("attached", false)) return;
        waiting_.push_back(sid);
        if (attached_ != 0 || attach_requested_ != 0 || !interactive_) {
            announce_pause(sid, data);
            return;
        }
        if (options_.follow == Follow::Next || options_.follow == Follow::Run) attach(sid);
    } else if (kind == "session_update") {
        const auto sid = data.value("sid", std::int64_t{0});
        if (sessions_.count(sid) == 0) return;
        sessions_[sid] = data;
        const bool listed = std::find(waiting_.begin(), waiting_.end(), sid) != waiting_.end();
        if (data.value("attached", false)) {
            if (listed) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), sid));
        } else if (!listed && sid != attached_) {
            waiting_.push_back(sid);
        }
    } else if (kind == "process_crash") {
        if (!is_mine(data)) return;
        const auto pid = data.value("pid", wire::Json()).dump();
        say("pid " + pid + " crashed with " + data.value("signal", std::string("a signal")) +
            "; `dpdb log " + pid + "` shows its stacks");
    } else if (kind == "process_start" || kind == "process_exit") {
        if (data.value("pid", std::int64_t{0}) == options_.program_pid) {
            (kind == "process_start" ? program_linked_ : program_gone_) = true;
        }
    } else if (kind == "log") {
        // A logpoint's message of this run's processes, as it comes (dpdb logs keeps them all);
        // `dpdb attach` is about one session and shows none.
        if (options_.follow == Follow::Run && is_mine(data)) say(log_line_text(data));
    } else if (kind == "session_close") {
        const auto sid = data.value("sid", std::int64_t{0});
        sessions_.erase(sid);
        waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), sid), waiting_.end());
    }
}

void Console::attach(std::int64_t sid) {
    attach_requested_ = sid;
    channel_.send(wire::make("attach", {{"sid", sid}, {"cols", terminal_columns()}}));
}

void Console::attach_next_waiting() {
    for (const auto sid : waiting_) {
        if (declined_.count(sid) == 0) {
            attach(sid);
            return;
        }
    }
}

std::string Console::prompt_label() const {
    std::string label = "[" + std::to_string(attached_);
    const auto it = sessions_.find(attached_);
    if (it != sessions_.end()) label += " pid " + it->second.value("pid", wire::Json()).dump();
    if (!waiting_.empty()) label += " +" + std::to_string(waiting_.size()) + " waiting";
    return label + "] ";
}

void Console::user_line(const std::string& line) {
    const std::string command = trim(line);
    if (command == "detach") {
        declined_.insert(attached_);
        channel_.send(wire::make("detach", {{"sid", attached_}}));
        return;
    }
    if (command == "sessions" || command == "sessions all") {
        std::fputs(sessions_text(command == "sessions all").c_str(), stdout);
        prompt_ = last_prompt_;
        return;
    }
    if (command.rfind("switch", 0) == 0 && (command.size() == 6 || command[6] == ' ')) {
        const std::string target = trim(command.substr(6));
        char* end = nullptr;
        const long long sid = std::strtoll(target.c_str(), &end, 10);
        if (target.empty() || *end != '\0' || sessions_.count(sid) == 0 || sid == attached_) {
            say("switch needs the number of another paused session (`sessions` lists them)");
            prompt_ = last_prompt_;
            return;
        }
        declined_.erase(sid);
        switch_to_ = sid;
        channel_.send(wire::make("detach", {{"sid", attached_}}));
        return;
    }
    channel_.send(wire::make("input", {{"sid", attached_}, {"line", line}}));
    line_sent_ = true;
}

// Every open session while they fit a screen; beyond, where they are paused and the first
// of them (`sessions all` lists every one).
std::string Console::sessions_text(bool all) const {
    wire::Json shown = wire::Json::array();
    std::map<std::string, std::size_t> places;
    for (const auto& [sid, session] : sessions_) {
        if (all || sessions_.size() <= kSessionsShown || shown.size() < kSessionsShown) {
            shown.push_back(session);
        }
        ++places[location(session)];
    }
    if (all || sessions_.size() <= kSessionsShown) return sessions_table(shown);
    std::vector<std::pair<std::size_t, std::string>> crowded;
    for (const auto& [place, count] : places) crowded.emplace_back(count, place);
    std::stable_sort(crowded.begin(), crowded.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::vector<std::string>> rows = {{"PAUSED AT", "SESSIONS"}};
    for (std::size_t i = 0; i < crowded.size() && i < kSessionsShown; ++i) {
        rows.push_back({crowded[i].second, std::to_string(crowded[i].first)});
    }
    std::string text = std::to_string(sessions_.size()) + " sessions\n\n" + table(rows);
    if (crowded.size() > kSessionsShown) {
        text += "… and " + std::to_string(crowded.size() - kSessionsShown) + " more places\n";
    }
    return text + "\n" + sessions_table(shown) + "… `sessions all` lists every one\n";
}

std::vector<std::string> Console::complete(const std::string& text, const std::string& line,
                                           int begidx, int endidx) {
    if (attached_ == 0) return {};
    completion_answer_.reset();
    ++completion_id_;
    channel_.send(wire::make("complete", {{"sid", attached_},
                                          {"id", completion_id_},
                                          {"text", text},
                                          {"line", line},
                                          {"begidx", begidx},
                                          {"endidx", endidx}}));
    const auto deadline = std::chrono::steady_clock::now() + kCompletionTimeout;
    while (!completion_answer_ && !abandon_line_ && !done_ &&
           std::chrono::steady_clock::now() < deadline) {
        if (!pump(50)) break;
    }
    std::vector<std::string> matches;
    if (completion_answer_) {
        for (const auto& m : *completion_answer_) {
            if (m.is_string()) matches.push_back(m.get<std::string>());
        }
    }
    return matches;
}

}  // namespace dpdb::cli
