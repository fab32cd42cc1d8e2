// How processes and sessions read to a person: labels, locations, tables.
#pragma once

#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::cli {

// "pid 1234 rank 0 worker.py" — what identifies a process at a glance.
std::string process_label(const wire::Json& item);
// The program's command line, shortened: "python3 train.py --lr 0.1"
std::string short_command(const wire::Json& item);
// "work.py:12 in compute()"
std::string location(const wire::Json& session);
// "rank=3,role=trainer": the tags, names in lower case.
std::string tag_text(const wire::Json& item);
// Rows as columns two spaces apart; no trailing spaces.
std::string text_table(const std::vector<std::vector<std::string>>& rows);
// Tables as `dpdb ls` prints them.
std::string sessions_table(const wire::Json& sessions);
std::string processes_table(const wire::Json& processes);

}  // namespace dpdb::cli
