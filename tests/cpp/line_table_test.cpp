// The line-table decoders of attach/line_table against the tables real interpreters made for one
// function (a multi-line expression, a comprehension, a branch), and the line each of them gives
// every instruction (co_lines(); dis.findlinestarts() on 3.9).
#include "attach/line_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dpdb::attach {
namespace {

std::string from_hex(const std::string& hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    return bytes;
}

// The function every table below is of, defined on line 2 of its file:
//   def sample(a):
//       x = a + 1
//
//       if x > 2:
//           y = [i
//                for i in range(x)]
//       else:
//           y = None
//       return (x,
//               y)
constexpr int kFirstLine = 2;

// The line of each 2-byte instruction word, from offset 0; -1 where the interpreter gives none.
template <typename Decoder>
void expect_lines(Decoder decode, const std::string& hex, const std::vector<int>& lines) {
    const std::string table = from_hex(hex);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(decode(table, kFirstLine, static_cast<int>(i * 2)), lines[i])
            << "offset " << i * 2;
    }
}

TEST(LineTable, Lnotab39) {
    expect_lines(lnotab_line, "000108020801060106ff08030401020102ff",
                 {3, 3, 3, 3, 5, 5, 5, 5, 6, 6, 6, 7, 7, 7, 6, 6, 6, 6, 9, 9, 10, 11, 10, 10});
}

TEST(LineTable, Linetable310) {
    expect_lines(
        linetable_line, "080108020601060106ff0204020104ff04ff0201020104ff",
        {3, 3, 3, 3, 5, 5, 5, 5, 6, 6, 6, 7, 7, 7, 6, 6, 6, 10, 11, 10, 10, 9, 9, 10, 11, 10, 10});
}

TEST(LineTable, LocationTable311) {
    expect_lines(
        location_table_line,
        "8000d80809884189058041e00708883182758075f002010d20f000010d20dd161b984191689468f003010d20f1"
        "00010d20f400010d2088018801f006000d118801d80c0dd80c0df003010c0ff00001050f",
        {2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 7, 7, 7,  7,  7,  7,
         7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 9, 9, 10, 11, 10, 10});
}

TEST(LineTable, LocationTable312) {
    expect_lines(
        location_table_line,
        "8000d80809884189058041e0070888318275e4161b98419368f603010d20d81112f203000e0ff000010d208801"
        "f000010d20f008000d0ed80c0df003010c0ff00001050ff003000d118801d80c0dd80c0df003010c0ff0000105"
        "0ff9f209010d20",
        {2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5,  7,  7,  7,  7, 7, 7,  7,  7,  7,  7,  6,  6, 6, 6,
         6, 6, 6, 7, 6, 6, 6, 6, 6, 6, 10, 11, 10, 10, 9, 9, 10, 11, 10, 10, -1, -1, 6, 6, 6});
}

TEST(LineTable, LocationTable313) {
    expect_lines(
        location_table_line,
        "8000d80809884189058041e0070888318375e4161b98419468f303010d20d9161e9011f303000e0fd9161ef003"
        "00090af000010d20f008000d0ed80c0df003010c0ff00001050ff003000d118801d80c0dd80c0df003010c0ff0"
        "0001050ff9f209010d20",
        {2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5,  7,  7,  7,  7, 7, 7,  7,  7,  7,  7,  7,  6, 6, 6, 6,
         7, 7, 7, 6, 6, 6, 6, 7, 7, 6, 6, 10, 11, 10, 10, 9, 9, 10, 11, 10, 10, -1, -1, 6, 6, 6});
}

TEST(LineTable, BeforeTheFirstInstructionIsTheFirstLine) {
    // A frame that has not started (f_lasti -1): the code's first line, as the interpreter says.
    EXPECT_EQ(lnotab_line("", kFirstLine, -1), kFirstLine);
    EXPECT_EQ(linetable_line(from_hex("0801"), kFirstLine, -1), kFirstLine);
    EXPECT_EQ(location_table_line(from_hex("8000"), kFirstLine, -1), kFirstLine);
}

TEST(LineTable, PastTheEndOrCutShortGivesNoLine) {
    EXPECT_EQ(linetable_line(from_hex("0801"), kFirstLine, 8), -1);
    EXPECT_EQ(location_table_line(from_hex("8000d808"), kFirstLine, 400), -1);
    // A long-form entry whose varints are cut off (a table read while it changed): no crash.
    EXPECT_EQ(location_table_line(from_hex("f0"), kFirstLine, 0), kFirstLine);
    EXPECT_EQ(linetable_line(from_hex("08"), kFirstLine, 0), -1);
}

}  // namespace
}  // namespace dpdb::attach
