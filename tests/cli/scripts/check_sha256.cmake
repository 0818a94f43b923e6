# cmake -DFILE=<path> -DEXPECTED=<hex> -P check_sha256.cmake
# Fails unless FILE's sha256 is EXPECTED: pins the bytes the engine tests load.
file(SHA256 "${FILE}" actual)
if(NOT actual STREQUAL EXPECTED)
  message(FATAL_ERROR "${FILE}: sha256 ${actual}, expected ${EXPECTED}")
endif()
message(STATUS "${FILE}: sha256 ${actual} as pinned")
