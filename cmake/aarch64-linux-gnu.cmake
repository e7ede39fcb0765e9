# Cross-compiling for aarch64 (Grace Hopper hosts) with Debian's multiarch
# arm64 packages: libraries and their CMake files under
# /usr/lib/aarch64-linux-gnu, host tools (protoc, grpc_cpp_plugin) native.
# Tests run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), which ctest
# and gtest_discover_tests use by themselves. See scripts/cross-aarch64.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
set(PKG_CONFIG_EXECUTABLE aarch64-linux-gnu-pkg-config CACHE FILEPATH "pkg-config for arm64")
# Programs from the build machine; libraries, headers and packages of arm64.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
