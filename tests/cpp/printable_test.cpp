#include "common/printable.hpp"

#include <gtest/gtest.h>

namespace dpdb {
namespace {

TEST(Printable, EscapesWhatATerminalWouldAct) {
    EXPECT_EQ(printable("unknown role \x1b]0;title\x07\x1b[2K\r2030 forged\n"),
              "unknown role \\x1b]0;title\\x07\\x1b[2K\\r2030 forged\\n");
    EXPECT_EQ(printable("a\\b\tc\x7f"), "a\\b\\tc\\x7f");
    const std::string once = printable("\x1b[2K x");
    EXPECT_EQ(printable(once), once);
    // C1 controls in UTF-8 (CSI U+009B), invalid UTF-8, a truncated sequence.
    EXPECT_EQ(printable("\xc2\x9b"
                        "2J"),
              "\\xc2\\x9b2J");
    EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");
}

TEST(Printable, KeepsPrintableUnicode) {
    EXPECT_EQ(printable("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x90\x8d"),
              "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x90\x8d");
}

TEST(Printable, CutsToItsBound) {
    EXPECT_EQ(printable(std::string(1 << 20, 'x'), 10), "xxxxxxxxxx... (1048566 more bytes)");
    // A sequence that would cross the bound is cut before it.
    EXPECT_EQ(printable("ab\xc3\xa9", 3), "ab\\xc3... (1 more bytes)");
}

}  // namespace
}  // namespace dpdb
