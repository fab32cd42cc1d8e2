// What the hub sees of a process on its own host: this test's own process, a child it ends,
// and descriptions it cannot check.
#include "hub/local_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace dpdb::hub {
namespace {

std::string started_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int number = 3; number <= 22; ++number) fields >> field;
    return field;
}

wire::Json described(pid_t pid) {
    return {{"pid", pid},
            {"started", started_of(pid)},
            {"kernel", kernel_identity()},
            {"executable", "/no/such/python"}};
}

TEST(LocalProcess, SeesItsOwnHostsProcessAndWhatItRuns) {
    ASSERT_FALSE(kernel_identity().empty());
    const auto view = look_at(described(::getpid()));
    ASSERT_TRUE(view);
    EXPECT_TRUE(view->running);
    char exe[4096] = {};
    ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
    EXPECT_EQ(view->exe, exe);
    EXPECT_FALSE(view->argv.empty());
}

TEST(LocalProcess, AnotherStartTimeIsAnotherProcess) {
    auto process = described(::getpid());
    process["started"] = "1";
    const auto view = look_at(process);
    ASSERT_TRUE(view);
    EXPECT_FALSE(view->running);
}

TEST(LocalProcess, CannotSeeAnotherKernelOrAnUndatedProcess) {
    auto process = described(::getpid());
    process["kernel"] = "another-boot:pid:[1]";
    EXPECT_FALSE(look_at(process));
    process = described(::getpid());
    process.erase("started");
    EXPECT_FALSE(look_at(process));

    wire::Json record = process;
    explain_silent_end(record);
    EXPECT_TRUE(record.value("vanished", false));
    EXPECT_TRUE(record.value("unverified", false));
}

TEST(LocalProcess, ASilentEndIsAnExecAVanishingOrAClosedConnection) {
    // Running another executable than the one described: exec'd.
    auto record = described(::getpid());
    explain_silent_end(record);
    EXPECT_TRUE(record.contains("exec"));
    EXPECT_FALSE(record.contains("vanished"));

    // Running the same one: only its connection closed.
    char exe[4096] = {};
    ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
    record = described(::getpid());
    record["executable"] = exe;
    explain_silent_end(record);
    EXPECT_TRUE(record.value("disconnected", false));
    refresh_outlived(record);
    EXPECT_TRUE(record.value("running", false));
    EXPECT_FALSE(record.contains("exec"));

    // Disconnected while it ran Python, then exec'd (subprocess closes the agent's socket before
    // its exec): another executable since, so exec'd.
    record = described(::getpid());
    record["disconnected"] = true;
    refresh_outlived(record);
    EXPECT_EQ(record.value("exec", std::string()), exe);
    EXPECT_FALSE(record.contains("disconnected"));

    // Ended (a zombie not collected yet, then collected): vanished, and no longer running.
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    record = described(child);
    auto outlived = record;
    outlived["exec"] = "/bin/true";
    ::kill(child, SIGKILL);
    siginfo_t info;
    ASSERT_EQ(::waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);  // a zombie now
    explain_silent_end(record);
    EXPECT_TRUE(record.value("vanished", false));
    EXPECT_FALSE(record.contains("unverified"));
    ::waitpid(child, nullptr, 0);
    refresh_outlived(outlived);
    EXPECT_FALSE(outlived.value("running", true));
    EXPECT_EQ(outlived["exec"], "/bin/true");
}

}  // namespace
}  // namespace dpdb::hub
