#include "cli/terminal_lines.hpp"

#include <gtest/gtest.h>

namespace dpdb::cli {
namespace {

using Clock = TerminalLines::Clock;

TEST(TerminalLines, ProgramTextPassesAsItComes) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("result", now);
    EXPECT_EQ(lines.take(false, now), "result");
    lines.program_wrote(" 20\n", now);
    EXPECT_EQ(lines.take(false, now), " 20\n");
}

TEST(TerminalLines, NoticeWaitsForTheOpenLineToEnd) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("result", now);
    EXPECT_EQ(lines.take(false, now), "result");
    lines.add_notice("[dpdb] session 4 paused\n");
    EXPECT_EQ(lines.take(false, now), "");
    lines.program_wrote(" 20\nnext", now);
    EXPECT_EQ(lines.take(false, now), " 20\n[dpdb] session 4 paused\nnext");
}

TEST(TerminalLines, NoticeAtALineStartGoesAtOnce) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("one\n", now);
    lines.add_notice("[dpdb] news\n");
    EXPECT_EQ(lines.take(false, now), "one\n[dpdb] news\n");
}

TEST(TerminalLines, ALineLeftOpenHoldsNoticesOnlySoLong) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("Your name: ", now);
    EXPECT_EQ(lines.take(false, now), "Your name: ");
    lines.add_notice("[dpdb] news\n");
    EXPECT_EQ(lines.take(false, now + TerminalLines::kOpenLineWait / 2), "");
    EXPECT_EQ(lines.take(false, now + TerminalLines::kOpenLineWait), "\n[dpdb] news\n");
    EXPECT_FALSE(lines.has_pending());
}

TEST(TerminalLines, WhileEditingOnlyWholeLinesGoAboveThePrompt) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("a\nb", now);
    EXPECT_EQ(lines.take(true, now), "a\n");
    lines.add_notice("[dpdb] news\n");
    EXPECT_EQ(lines.take(true, now), "[dpdb] news\n");
    lines.program_wrote("c\n", now);
    EXPECT_EQ(lines.take(true, now), "bc\n");
    EXPECT_FALSE(lines.has_pending());
}

TEST(TerminalLines, APromptStartsOnItsOwnLine) {
    TerminalLines lines;
    const auto now = Clock::now();
    lines.program_wrote("result", now);
    EXPECT_EQ(lines.take(false, now), "result");
    EXPECT_EQ(lines.close_open_line(), "\n");
    EXPECT_EQ(lines.close_open_line(), "");
    lines.shown_elsewhere("> file.py(3)f()\n-> x = 1");
    EXPECT_EQ(lines.close_open_line(), "\n");
}

}  // namespace
}  // namespace dpdb::cli
