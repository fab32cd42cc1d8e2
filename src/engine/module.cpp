// dpdb._engine_native: the Python face of the C++ breakpoint engine. python/dpdb/_engine.py owns
// the policy (strategy switch, the Pdb mixin); this module only moves state in and events out.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "engine/condition.hpp"
#include "engine/condition_fast.hpp"
#include "engine/engine.hpp"

namespace nb = nanobind;
using namespace dpdb::engine;

namespace {

void check(int rc) {
    if (rc < 0) throw nb::python_error();
}

}  // namespace

NB_MODULE(_engine_native, m) {
    // Patched code holds the checker in co_consts: pickle (cloudpickle of a function by value)
    // finds it by reference under this module and its own name.
    if (PyObject* checker = backend_checker()) {
        m.attr("dpdb_check_breakpoint") = nb::handle(checker);
    } else if (PyErr_Occurred()) {
        throw nb::python_error();
    }
    m.def("backend", []() { return std::string(backend_name()); });
    m.def(
        "user_code", [](nb::handle code) { return nb::borrow(backend_user_code(code.ptr())); },
        "The user's code behind a code object the engine made (3.11's swap mode gives functions "
        "patched copies while breakpoints are armed): what a pickler of code should send.");
    m.def(
        "init", [](nb::handle canonic) { check(engine_init(canonic.ptr())); },
        "Set up the engine once per process; `canonic` maps co_filename to bdb's canonic form.");
    m.def(
        "attach", [](nb::handle dbg) { check(engine_attach(dbg.ptr())); },
        "Bind the calling thread to `dbg` and arm the engine for it.");
    m.def(
        "update", [](nb::handle dbg) { check(engine_update(dbg.ptr())); },
        "Re-read the stepping state of `dbg` after bdb changed it.");
    m.def(
        "detach", [](nb::handle dbg) { check(engine_detach(dbg.ptr())); },
        "Forget `dbg`; with no debugger left the engine traces nothing.");
    m.def(
        "refresh", []() { check(engine_refresh()); },
        "Re-read bdb.Breakpoint.bplist after breakpoints were added or removed.");
    m.def(
        "allow",
        [](bool gate, bool patch, bool swap, bool scan, bool superinstructions, bool conditions,
           bool fast_conditions, bool guard) {
            backend_allow(
                Mechanisms{gate, patch, swap, scan, superinstructions, conditions, guard});
            conditions_allow(conditions);
            fast_conditions_allow(fast_conditions);
        },
        nb::kw_only(), nb::arg("gate"), nb::arg("patch"), nb::arg("swap"), nb::arg("scan"),
        nb::arg("superinstructions"), nb::arg("conditions"), nb::arg("fast_conditions") = true,
        nb::arg("guard") = true,
        "What the strategy lets the engine use. 3.9-3.11: the PEP 523 gate in front of the C "
        "tracer, behind it the breakpoint checks compiled into the bytecode, and (3.11) swap "
        "mode: functions given the patched code, with no evaluator installed while that is safe. "
        "3.12: scan mode: code of breakpoint files found by heap scans, a code watcher and an "
        "audit hook instead of a global PY_START; superinstructions: the superinstructions that "
        "sys.monitoring took out of a code object put back once its events are off. conditions: "
        "breakpoint conditions evaluated in the frame by the engine, bdb hearing of a line only "
        "when one is true or raises. fast_conditions: simple conditions answered in C without a "
        "Python call, and the hits of a false one counted in C until bdb looks. guard (3.9-3.11): "
        "the compiled-in check skipped, without a call, while the line's conditions are known "
        "false.");
    m.def(
        "flush_hits", []() { conditions_flush_hits(); },
        "Writes to bdb's Breakpoints the hits of false conditions the engine counted in C: "
        "before anything reads `hits`.");
    m.def(
        "take_verdict",
        [](nb::handle frame, int line) { return nb::steal(take_verdict(frame.ptr(), line)); },
        "What bdb.effective(file, line, frame) returns for the line event the engine is "
        "delivering, whose conditions it evaluated already; else None.");
    m.def("stats", []() {
        State& st = state();
        nb::dict d;
        d["armed"] = st.armed;
        d["forwarded"] = st.forwarded;
        d["patched"] = st.patched;
        d["trapped"] = st.trapped;
        d["sessions"] = st.by_debugger.size();
        d["files"] = st.breaks.size();
        d["swap"] = st.swap;
        d["swapped"] = st.swapped;
        d["swap_scans"] = st.swap_scans;
        d["swap_blocker"] = st.swap_blocker;
        d["scan"] = st.scan;
        d["scans"] = st.scans;
        d["scan_codes"] = st.scan_codes;
        d["scan_blocker"] = st.scan_blocker;
        d["superinstructions"] = st.superinstructions;
        d["conditions_false"] = st.conditions_false;
        d["conditions_in_c"] = st.conditions_in_c;
        d["conditions_guarded"] = st.conditions_guarded;
        d["logpoints_dropped"] = st.logpoints_dropped;
        return d;
    });
}
