# The toolchain of dpdb's wheels (dev/wheels): zig's clang targeting an old glibc, and the static
# libraries that dev/wheels-deps built for it. dev/wheels sets the environment:
#   DPDB_WHEEL_TOOLS   the directory of the zig-cc and zig-c++ wrappers (they name the glibc)
#   DPDB_WHEEL_DEPS    the prefixes of the static libraries and of the header-only ones
set(CMAKE_C_COMPILER "$ENV{DPDB_WHEEL_TOOLS}/zig-cc")
set(CMAKE_CXX_COMPILER "$ENV{DPDB_WHEEL_TOOLS}/zig-c++")
set(CMAKE_PREFIX_PATH "$ENV{DPDB_WHEEL_DEPS}")
# Nothing of the build machine's /usr: its glibc headers are newer than the wheels' glibc, and its
# libraries are the ones the wheels must not need.
set(CMAKE_IGNORE_PREFIX_PATH /usr /usr/local)
set(OPENSSL_USE_STATIC_LIBS ON)
# An extension module exports its PyInit_ alone: the static libraries inside it stay its own, and
# a process that also loads the system's OpenSSL (Python's ssl module does) keeps both apart.
# (zig's linker takes no --exclude-libs.)
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/python-module.map")
