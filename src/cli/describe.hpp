// How processes and sessions read to a person: labels, locations, tables.
#pragma once

#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::cli {

// "pid 1234 rank 0 worker.py" — what identifies a process at a glance.
std::string process_label(const wire::Json& item);
// "rank=0,role=trainer": a process's tags.
std::string tags_of(const wire::Json& item);
// The program's command line, shortened, after the name its launcher gave the process:
// "python3 train.py --lr 0.1", "gw0: python3 -u -c import sys;exec(eval(sys.stdin.re…"
std::string short_command(const wire::Json& item);
// "work.py:12 in compute()"
std::string location(const wire::Json& session);
// Rows in columns two spaces apart, each as wide as its widest cell (in characters).
std::string table(const std::vector<std::vector<std::string>>& rows);
// Tables as `dpdb ls` prints them.
// "unreachable since HH:MM:SS" for a process (or a session of one) the hub cannot reach, or "".
std::string unreachable_note(const wire::Json& item);
std::string host_cell(const wire::Json& item);

std::string sessions_table(const wire::Json& sessions);
std::string processes_table(const wire::Json& processes);

}  // namespace dpdb::cli
