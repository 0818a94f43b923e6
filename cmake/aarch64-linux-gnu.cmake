# Cross-compiling genrepro's libtorch-free build for aarch64 with Debian's cross compiler and the
# :arm64 multiarch -dev packages (scripts/setup.sh --cross-aarch64 installs them); its programs run
# under qemu-aarch64 (tests/ci/aarch64.cmake). Header-only dependencies (nlohmann_json, CLI11)
# are the host's: they are architecture-independent.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries only from the arm64 multiarch directory; programs (pkg-config, git) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# Run with the arm64 multiarch glibc (/lib/ld-linux-aarch64.so.1), not the cross toolchain's copy:
# see tests/ci/aarch64.cmake.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
