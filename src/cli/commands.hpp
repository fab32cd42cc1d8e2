// One function per `dpdb` subcommand; main.cpp only parses arguments.
#pragma once

#include <string>
#include <vector>

namespace dpdb::cli {

struct RunOptions {
    std::string hub;     // join this hub instead of embedding one
    std::string python;  // interpreter to run the program with
    std::string module;  // -m MODULE
    std::vector<std::string> args;
    bool post_mortem = false;
};

int run_command(const RunOptions& options);
int hub_command(const std::string& socket_path, bool quiet);
int ls_command(const std::string& hub, bool json);
int attach_command(const std::string& hub, const std::string& session, bool next);

}  // namespace dpdb::cli
