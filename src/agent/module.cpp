// The binding: dpdb._agent, a thin face over the Link. Every call that may block releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/set.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <stdlib.h>

#include <thread>
#include <type_traits>

#include "agent/code_watch.hpp"
#include "agent/env_watch.hpp"
#include "agent/exec_watch.hpp"
#include "agent/faults.hpp"
#include "agent/gil_state.hpp"
#include "agent/link.hpp"
#include "agent/log_budget.hpp"
#include "agent/log_queue.hpp"
#include "agent/outbox.hpp"
#include "agent/own_threads.hpp"
#include "agent/signal_actions.hpp"
#include "agent/signal_kick.hpp"

namespace nb = nanobind;
using dpdb::agent::Link;

namespace {

// True from the start of finalisation until the process ends: once Py_FinalizeEx is done the
// "finalizing" mark is gone but so is the interpreter (and this thread's state with it).
bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() || !Py_IsInitialized();
#else
    return _Py_IsFinalizing() || !Py_IsInitialized();
#endif
}

[[noreturn]] void park_forever() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Runs f with the GIL released. A thread that comes back while the interpreter is finalizing
// never takes the GIL again: CPython would end it with pthread_exit, whose unwinding through
// C++ frames (nanobind's catches every exception) crashes the process. The process is exiting
// anyway, so the thread parks. Finalisation may also begin while the thread waits for the GIL:
// then the unwinding starts inside PyEval_RestoreThread, and is stopped here, where the thread
// parks without ever leaving the handler (leaving it would terminate the process).
// An exception from f (a message the wire refuses) takes the GIL back before it goes on to
// nanobind, which turns it into a Python exception: without the GIL that crashed the process.
template <typename F>
auto without_gil(F&& f) {
    PyThreadState* saved = PyEval_SaveThread();
    auto park_if_finalizing = [saved] {
        if (interpreter_finalizing()) park_forever();
        try {
            PyEval_RestoreThread(saved);
        } catch (...) {
            // Only that forced unwind can come out of C code: libstdc++ names it
            // abi::__forced_unwind, libc++abi (the wheels' C++ library) has no name for it.
            park_forever();
        }
    };
    try {
        if constexpr (std::is_void_v<decltype(f())>) {
            f();
            park_if_finalizing();
        } else {
            auto result = f();
            park_if_finalizing();
            return result;
        }
    } catch (...) {
        park_if_finalizing();
        throw;
    }
}

using MaybeEvent = std::optional<std::pair<std::string, std::string>>;

MaybeEvent as_pair(std::optional<dpdb::agent::Event> event) {
    if (!event) return std::nullopt;
    return std::make_pair(std::move(event->type), std::move(event->body));
}

std::chrono::milliseconds to_ms(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(std::max(0.0, seconds) * 1000.0));
}

std::optional<std::chrono::milliseconds> to_limit(std::optional<double> seconds) {
    if (!seconds) return std::nullopt;
    return to_ms(*seconds);
}

}  // namespace

NB_MODULE(_agent, m) {
    m.doc() = "dpdb's agent: the process's link to the dpdb hub";
    // exit() tells the hub how the process ended (os._exit is reported from Python); glibc's
    // on_exit is the one hook that sees the status.
    on_exit([](int status, void*) { Link::instance().send_exit(status); }, nullptr);
    Link& link = Link::instance();
    m.def(
        "start",
        [&link](const std::string& address, const std::string& secret,
                const std::string& secret_file, const std::string& proc_json, double connect_wait) {
            return without_gil([&] {
                return link.start(address, secret, secret_file, proc_json, to_ms(connect_wait));
            });
        },
        nb::arg("address"), nb::arg("secret"), nb::arg("secret_file"), nb::arg("proc_json"),
        nb::arg("connect_wait"));
    m.def("started", [&link] { return link.started(); });
    m.def("forked_without_hooks", [&link] { return link.forked_without_hooks(); });
    m.def("stop", [&link] { without_gil([&] { link.stop(); }); });
    m.def("connected", [&link] { return link.connected(); });
    m.def("wait_connected", [&link](double seconds) {
        return without_gil([&] { return link.wait_connected(to_ms(seconds)); });
    });
    m.def("wait_first_attempt", [&link](double seconds) {
        return without_gil([&] { return link.wait_first_attempt(to_ms(seconds)); });
    });
    m.def("update_process",
          [&link](const std::string& proc_json) { link.update_process(proc_json); });
    m.def("open_session", [&link](const std::string& info_json) {
        return without_gil([&] { return link.open_session(info_json); });
    });
    m.def("update_session", [&link](std::int64_t sid, const std::string& info_json) {
        without_gil([&] { link.update_session(sid, info_json); });
    });
    m.def("close_session", [&link](std::int64_t sid, const std::string& reason) {
        without_gil([&] { link.close_session(sid, reason); });
    });
    m.def("send",
          [&link](const std::string& type, std::int64_t sid, const std::string& fields_json) {
              without_gil([&] { link.send(type, sid, fields_json); });
          });
    m.def(
        "wait",
        [&link](std::int64_t sid, std::optional<double> timeout) {
            return as_pair(without_gil([&] { return link.wait(sid, to_limit(timeout)); }));
        },
        nb::arg("sid"), nb::arg("timeout").none() = nb::none(),
        "The next (type, json) event for a session, or None after `timeout` seconds.");
    m.def(
        "wait_control",
        [&link](std::optional<double> timeout) {
            return as_pair(without_gil([&] { return link.wait_control(to_limit(timeout)); }));
        },
        nb::arg("timeout").none() = nb::none(),
        "The next (type, json) message for the process itself, or None after `timeout` s.");
    m.def(
        "send_process",
        [&link](const std::string& type, const std::string& fields_json,
                std::optional<double> timeout) {
            without_gil([&] {
                const auto limit = to_limit(timeout);
                link.send_process(type, fields_json,
                                  limit ? std::optional(std::chrono::steady_clock::now() + *limit)
                                        : std::nullopt);
            });
        },
        nb::arg("type"), nb::arg("fields_json"), nb::arg("timeout").none() = nb::none(),
        "Sends a message of the process's own; with `timeout`, gives up after that many seconds "
        "(a hub that stopped reading).");
    m.def("post_status", [](const std::string& type, const std::string& fields_json) {
        dpdb::agent::post_status(type, fields_json);
    });
    m.def(
        "outbox_drain",
        [](std::optional<double> timeout) {
            return without_gil([&] { return dpdb::agent::outbox_drain(to_limit(timeout)); });
        },
        nb::arg("timeout").none() = nb::none(),
        "Waits until what was posted is handed to the link; False if `timeout` s passed first.");
    m.def("post_output", [](const std::string& stream, const std::string& text) {
        dpdb::agent::post_output(stream, text);
    });
    m.def("notify_exit", [&link](int status) { without_gil([&] { link.send_exit(status); }); });
    // callback(filename) before code from a file with one of these names runs (see code_watch).
    m.def("watch_code", [](nb::object callback, std::set<std::string> basenames) {
        dpdb::agent::watch_code(callback.ptr(), std::move(basenames));
    });
    // The hub hears of an exec before it happens (see exec_watch).
    m.def("watch_exec", [] { dpdb::agent::watch_exec(); });
    m.def("announce_exec", [](const std::string& path, const std::vector<std::string>& argv) {
        dpdb::agent::announce_exec(path, argv);
    });
    // callback(value) when the program changes PYTHONBREAKPOINT (see env_watch).
    m.def("watch_breakpoint_variable",
          [](nb::object callback) { dpdb::agent::watch_breakpoint_variable(callback.ptr()); });
    m.def("made_files", [] { return dpdb::agent::made_files(); });
    m.def("dump_pipe", [] { return dpdb::agent::dump_pipe(); });
    m.def("enable_dumps", [](int signal) { dpdb::agent::enable_dumps(signal); });
    m.def("install_crash_handlers", [] { dpdb::agent::install_crash_handlers(); });
    m.def("disable_dumps", [] { dpdb::agent::disable_dumps(); });
    m.def("flush_at_ending_signals", [](double wait, double connect_wait) {
        dpdb::agent::flush_at_ending_signals(to_ms(wait), to_ms(connect_wait));
    });
    // A signal's action as the kernel has it (see signal_actions): saved, put back, compared.
    m.def("signal_action", [](int signal) {
        const std::string action = dpdb::agent::signal_action(signal);
        return nb::bytes(action.data(), action.size());
    });
    m.def("restore_signal_action", [](int signal, nb::bytes action) {
        return dpdb::agent::restore_signal_action(signal,
                                                  std::string(action.c_str(), action.size()));
    });
    m.def("signal_action_handler", [](nb::bytes action) {
        return dpdb::agent::signal_action_handler(std::string(action.c_str(), action.size()));
    });
    // KeyboardInterrupt in the thread with this ident at its next bytecode; nothing runs in it
    // now. Returns whether the thread was found.
    m.def("interrupt_thread", [](unsigned long ident) {
        return PyThreadState_SetAsyncExc(ident, PyExc_KeyboardInterrupt) == 1;
    });
    // Called with the GIL held, so that no thread state is freed while the list is read.
    m.def("thread_of_gil_state", [](std::uintptr_t state) -> std::optional<unsigned long> {
        const unsigned long ident = dpdb::agent::ident_of_thread_state(state);
        if (ident == 0) return std::nullopt;
        return ident;
    });
    // Starts a threading.Thread of dpdb's own: named, and deaf to the program's signals (see
    // own_threads.hpp). Its ident is its pthread_t.
    m.def("start_own_thread", [](nb::object thread, const std::string& role) {
        {
            const dpdb::agent::ProgramSignalsBlocked blocked;
            thread.attr("start")();
        }
        const auto ident = nb::cast<unsigned long>(thread.attr("ident"));
        dpdb::agent::name_own_thread(static_cast<pthread_t>(ident), role.c_str());
    });
    m.def("kick_overdue_signal", [] { return dpdb::agent::kick_overdue_signal(); });
    m.def("stacks_started", [](std::int64_t req) { dpdb::agent::stacks_started(req); });
    m.def("stacks_answered", [](std::int64_t req) { dpdb::agent::stacks_answered(req); });
    m.def("log_budget_rate", [](double per_second) { dpdb::agent::log_budget_rate(per_second); });
    m.def("log_admit", [] { return dpdb::agent::log_admit(); });
    m.def("log_queue_capacity", [](std::size_t lines) { dpdb::agent::log_queue_capacity(lines); });
    m.def("log_push", [](double time, const std::string& text, const std::string& thread,
                         std::int64_t tid, std::optional<std::int64_t> bp) {
        dpdb::agent::log_push(time, text, thread, tid, bp);
    });
    m.def("log_flush", [](double wait, double connect_wait) {
        without_gil([&] { dpdb::agent::log_flush(to_ms(wait), to_ms(connect_wait)); });
    });
    m.def("log_set_making", [](bool on) { dpdb::agent::log_set_making(on); });
    m.def("log_making", [] { return dpdb::agent::log_budget_table()->making(); });
    // For the engine: the same budget, without a Python call per hit.
    m.attr("log_budget") =
        nb::capsule(dpdb::agent::log_budget_table(), dpdb::agent::kLogBudgetCapsule);
    m.def("after_fork_in_child",
          [&link](const std::string& proc_json) { link.after_fork_in_child(proc_json); });
}
