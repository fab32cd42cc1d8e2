// `dpdb stacks` of a large job: the processes whose threads stand in the same places, shown once
// with the pids and ranks that share them, instead of 10,000 stacks that mostly repeat.
#pragma once

#include <string>

#include "wire/message.hpp"

namespace dpdb::cli {

// The text for the processes of a stacks answer (each with "stacks" or "error"), grouped: one
// block per distinct set of stacks (thread names and frames; thread ids, which differ in every
// process, left out) and one line per distinct error, largest groups first, each saying how many
// processes and which (pids and tags as spans). Processes that stand alone keep their own label.
std::string grouped_stacks(const wire::Json& processes);

}  // namespace dpdb::cli
