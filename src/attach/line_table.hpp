// The line a code object's instruction belongs to, from the table CPython keeps beside the
// bytecode: the same answer as the interpreter's own PyCode_Addr2Line, computed from bytes read
// out of another process. The table's format changed twice: lnotab (3.9), co_linetable (3.10),
// the location table (3.11 on).
#pragma once

#include <string_view>

namespace dpdb::attach {

// Each takes the table's bytes, the code's first line and the instruction's byte offset in the
// bytecode; -1 where the table gives that instruction no line (or the offset is past its end).

// 3.9's co_lnotab: (bytecode increment, signed line increment) pairs.
int lnotab_line(std::string_view table, int first_line, int offset);

// 3.10's co_linetable: (bytes covered, signed line delta, -128 for none) pairs.
int linetable_line(std::string_view table, int first_line, int offset);

// 3.11+'s co_linetable (Objects/locations.md): entries of code units with a line delta and columns.
int location_table_line(std::string_view table, int first_line, int offset);

}  // namespace dpdb::attach
