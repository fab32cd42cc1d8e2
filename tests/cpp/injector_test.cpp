// The native injector against real processes: children of this test, forked and left running.
#include "attach/injector.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "attach/python_process.hpp"
#include "attach/symbols.hpp"
#include "attach/tracee.hpp"

namespace dpdb::attach {
namespace {

// A child that counts in a loop, or sleeps in a system call, until killed; whatever is done to
// it must leave the counting right.
class Child {
  public:
    explicit Child(bool sleeping) {
        int fds[2];
        EXPECT_EQ(::pipe(fds), 0);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(fds[0]);
            unsigned long counted = 0;
            for (;;) {
                if (sleeping) ::usleep(100000);
                if (++counted % 1000 == 0 || sleeping) {
                    // The child's own check: counting still works after whatever was done.
                    if (::write(fds[1], &counted, sizeof counted) != sizeof counted) ::_exit(3);
                }
            }
        }
        ::close(fds[1]);
        reader_ = fds[0];
    }
    ~Child() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        ::close(reader_);
    }
    pid_t pid() const { return pid_; }
    // The child's next report, which must go up.
    unsigned long report() {
        unsigned long counted = 0;
        EXPECT_EQ(::read(reader_, &counted, sizeof counted), static_cast<ssize_t>(sizeof counted));
        return counted;
    }

  private:
    pid_t pid_ = 0;
    int reader_ = -1;
};

TEST(Symbols, FindsWhatTheDynamicLinkerFinds) {
    Child child(true);
    const auto files = mapped_files(child.pid());
    const MappedFile* libc = find_mapped(files, "libc.so");
    ASSERT_NE(libc, nullptr);
    // A forked child has libc where its parent has it.
    const auto address = symbol_address(child.pid(), *libc, "getpid");
    ASSERT_TRUE(address);
    EXPECT_EQ(*address, reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_DEFAULT, "getpid")));
    EXPECT_FALSE(symbol_address(child.pid(), *libc, "no_such_symbol_anywhere"));
}

TEST(Tracee, CallsAFunctionInABusyThreadAndGivesItBack) {
    Child child(false);
    const auto before = child.report();
    const auto getpid = reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_DEFAULT, "getpid"));
    {
        Tracee thread(child.pid(), child.pid());
        thread.stop();
        EXPECT_EQ(static_cast<pid_t>(thread.call(getpid, 0, 0, std::chrono::milliseconds(2000))),
                  child.pid());
    }
    EXPECT_GT(child.report(), before);
}

TEST(Tracee, CallsAFunctionInAThreadInASystemCallWhichRestarts) {
    Child child(true);
    child.report();
    const auto getppid = reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_DEFAULT, "getppid"));
    {
        Tracee thread(child.pid(), child.pid());
        thread.stop();
        EXPECT_TRUE(thread.in_system_call());
        EXPECT_EQ(static_cast<pid_t>(thread.call(getppid, 0, 0, std::chrono::milliseconds(2000))),
                  ::getpid());
    }
    // The interrupted sleep went on, and so did the loop.
    const auto next = child.report();
    EXPECT_GT(child.report(), next);
}

TEST(Injector, LoadsALibraryAndItsStartReportsWhatItFinds) {
    Child child(true);
    child.report();
    char folder[] = "/tmp/dpdb-injector-test-XXXXXX";
    ASSERT_NE(::mkdtemp(folder), nullptr);
    inject_library(child.pid(), DPDB_INJECT_LIBRARY, "dpdb_inject_start", folder);
    // Not a Python process: the loader's thread says so, and the process runs on.
    const std::string reply = std::string(folder) + "/reply.json";
    for (int i = 0; i < 1000 && ::access(reply.c_str(), R_OK) != 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream in(reply);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("exports no CPython API"), std::string::npos) << text;
    const auto next = child.report();
    EXPECT_GT(child.report(), next);
    ::unlink(reply.c_str());
    ::rmdir(folder);
}

TEST(Injector, RefusesWhatIsNotPython) {
    Child child(true);
    std::string why;
    EXPECT_FALSE(inspect_python(child.pid(), &why));
    EXPECT_NE(why.find("is not a CPython process"), std::string::npos) << why;
    EXPECT_TRUE(running(child.pid()));
}

TEST(Injector, SaysWhenTheProcessIsGone) {
    std::string why;
    EXPECT_FALSE(inspect_python(999999999, &why));
    EXPECT_THROW(inject_library(999999999, DPDB_INJECT_LIBRARY, "dpdb_inject_start", "/tmp"),
                 AttachError);
}

}  // namespace
}  // namespace dpdb::attach
