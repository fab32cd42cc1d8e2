// The binding: dpdb._agent, a thin face over the Link. Every call that may block releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "agent/link.hpp"

namespace nb = nanobind;
using dpdb::agent::Link;

namespace {

std::chrono::milliseconds to_ms(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(std::max(0.0, seconds) * 1000.0));
}

}  // namespace

NB_MODULE(_agent, m) {
    m.doc() = "dpdb's agent: the process's link to the dpdb hub";
    m.def(
        "start",
        [](const std::string& address, const std::string& secret, const std::string& proc_json,
           double connect_wait) {
            nb::gil_scoped_release release;
            return Link::instance().start(address, secret, proc_json, to_ms(connect_wait));
        },
        nb::arg("address"), nb::arg("secret"), nb::arg("proc_json"), nb::arg("connect_wait"));
    m.def("started", [] { return Link::instance().started(); });
    m.def("connected", [] { return Link::instance().connected(); });
    m.def("wait_connected", [](double seconds) {
        nb::gil_scoped_release release;
        return Link::instance().wait_connected(to_ms(seconds));
    });
    m.def("update_process",
          [](const std::string& proc_json) { Link::instance().update_process(proc_json); });
    m.def("open_session", [](const std::string& info_json) {
        nb::gil_scoped_release release;
        return Link::instance().open_session(info_json);
    });
    m.def("update_session", [](std::int64_t sid, const std::string& info_json) {
        nb::gil_scoped_release release;
        Link::instance().update_session(sid, info_json);
    });
    m.def("close_session", [](std::int64_t sid, const std::string& reason) {
        nb::gil_scoped_release release;
        Link::instance().close_session(sid, reason);
    });
    m.def("send", [](const std::string& type, std::int64_t sid, const std::string& fields_json) {
        nb::gil_scoped_release release;
        Link::instance().send(type, sid, fields_json);
    });
    m.def(
        "wait",
        [](std::int64_t sid,
           std::optional<double> timeout) -> std::optional<std::pair<std::string, std::string>> {
            std::optional<dpdb::agent::Event> event;
            {
                nb::gil_scoped_release release;
                std::optional<std::chrono::milliseconds> limit;
                if (timeout) limit = to_ms(*timeout);
                event = Link::instance().wait(sid, limit);
            }
            if (!event) return std::nullopt;
            return std::make_pair(event->type, event->body);
        },
        nb::arg("sid"), nb::arg("timeout").none() = nb::none(),
        "The next (type, json) event for a session, or None after `timeout` seconds.");
    m.def("after_fork_in_child",
          [](const std::string& proc_json) { Link::instance().after_fork_in_child(proc_json); });
}
