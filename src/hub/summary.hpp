// The summary of a job, as `dpdb ls` shows a large one: processes grouped by host, tags and state,
// where the paused sessions stand, and the first of them. Computed by the hub, so that a job of
// 10,000 processes is summed up in one small message instead of shipping every description.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hub/registry.hpp"
#include "wire/message.hpp"

namespace dpdb::hub {

struct SummaryLimits {
    std::size_t groups = 40;  // group rows; beyond, the largest are kept
    std::size_t places = 20;  // places where sessions are paused; beyond, the most crowded
    std::size_t paused = 20;  // sessions described in full, the oldest first
    // A tag groups processes when the job gives it at most this many values and its name is not
    // a rank's (RANK, LOCAL_RANK, SLURM_PROCID, ...): those tell processes apart, so each group
    // shows the span of their values instead.
    std::size_t grouping_values = 8;
    std::size_t span_chars = 48;  // a span of values is cut to about this, with the count
};

// The body of a `summary` message, without its id: processes, sessions, attached, hosts,
// group_count (before the limit), groups [{host, hosts, state, tags, spans, processes,
// sessions}], places [{file, line, function, sessions, attached}], paused [session
// descriptions]. With more groups than the limit when grouped by host, hosts are spanned within
// each group of state and tags instead (`host` is then the span, `hosts` how many).
wire::Json summarize(const Registry& registry, const SummaryLimits& limits = {});

// The body of a `break_list` result: each of `breakpoints` (the store's) with the number of
// processes that armed it ("processes"), that answered without arming it or saying why
// ("pending": its file is not loaded there), whose spec matches several files there
// ("ambiguous"), and what processes said about it (each note once,
// with how many said it, at most `notes` of them); "waiting": processes that have not answered
// the latest list yet, "waiting_hosts" the same by host, "total": processes in all.
wire::Json summarize_breakpoints(const Registry& registry, wire::Json breakpoints,
                                 std::size_t notes = 5);

// Values written compactly: integers as ranges ("0-99,128"), names with a number at the end as
// ranges under their prefix ("node[01-16]"), others listed; cut after about max_chars with the
// number of values ("0-4,6,8,… (5000 values)").
std::string span(const std::vector<std::string>& values, std::size_t max_chars);

}  // namespace dpdb::hub
