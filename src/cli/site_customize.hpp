// The sitecustomize that loads the dpdb agent into every Python process started with its folder
// on PYTHONPATH: written by `dpdb run` for its program, and by `dpdb attach --tree` for what an
// attached process starts later.
#pragma once

namespace dpdb::cli {

inline constexpr const char* kSiteCustomize =
    R"(# Written by dpdb: loads the dpdb agent into every Python process started below.
try:
    import dpdb._bootstrap as _dpdb_bootstrap
except ImportError as _dpdb_error:
    import sys as _sys
    _sys.stderr.write("dpdb: not debugging this process (%s): %s\n" % (_sys.executable, _dpdb_error))
else:
    _dpdb_bootstrap.start(__file__)
)";

}  // namespace dpdb::cli
