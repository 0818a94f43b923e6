# Test helpers. Labels: unit (seconds, no model), engine (needs the tiny fixture model),
# cli (the command line: in-process cases, tests/cli_inprocess, and a few genrepro processes),
# reference (compares against /usr/bin/python3 + torch or node), golden (the regression gate
# against golden/), slow (kept out of quick runs).
include(GoogleTest)
find_package(GTest REQUIRED)

set(GENREPRO_TINY_MODEL "${CMAKE_BINARY_DIR}/fixtures/tiny")
# One broken copy of the tiny model per failure case (tests/cli/scripts/make_broken_models.py,
# ctest fixture broken_models).
set(GENREPRO_BROKEN_MODELS "${CMAKE_BINARY_DIR}/broken-models")

# Test binaries that load libtorch run as this many ctest entries (gtest's own sharding), not one
# process per test: starting libtorch costs about a second, a test mostly milliseconds.
set(GENREPRO_TORCH_TEST_SHARDS 4)
# At most half the cores' worth of shards per binary: each shard pays the binary's start-up (0.6 s
# of libtorch loading) and its per-process set-up again, and on two cores, where ctest -j2 always
# has other entries to run beside a binary, one entry per binary measured 7 CPU-s less for the CLI
# binary and 4 for the engine binary than 3 and 4 shards.
cmake_host_system_information(RESULT _genrepro_cores QUERY NUMBER_OF_LOGICAL_CORES)
math(EXPR _genrepro_half_cores "${_genrepro_cores} / 2")
if(_genrepro_half_cores LESS 1)
  set(_genrepro_half_cores 1)
endif()
set(GENREPRO_TEST_SHARDS_MAX ${_genrepro_half_cores} CACHE STRING
    "At most this many ctest entries per sharded gtest binary (default: half the cores)")

# genrepro_gtest(NAME <target> SOURCES <files...> LIBS <libs...> LABELS <labels...> [NEEDS_MODEL] [BATCHED]
#                [SHARDS <n>] [FILTER <gtest filter>] [FIXTURES <ctest fixtures...>] [ENV <NAME=value...>])
# BATCHED: register <n> entries <target>.shard<i>of<n> (n: SHARDS, else GENREPRO_TORCH_TEST_SHARDS)
# instead of one per test; FILTER limits what the shards run (--gtest_filter).
# FIXTURES: ctest fixtures the tests need besides the tiny model (NEEDS_MODEL). ENV: environment
# of the shards (BATCHED only), e.g. where a fixture wrote its output.
function(genrepro_gtest)
  cmake_parse_arguments(T "NEEDS_MODEL;BATCHED" "NAME;SHARDS;FILTER" "SOURCES;LIBS;LABELS;FIXTURES;ENV" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${T_NAME} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  target_compile_definitions(${T_NAME} PRIVATE
    GENREPRO_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    GENREPRO_TEST_TOKENIZER_DIR="${GENREPRO_TOKENIZER_DIR}"
    GENREPRO_TEST_MODEL_DIR="${GENREPRO_TINY_MODEL}"
    GENREPRO_TEST_BROKEN_MODELS_DIR="${GENREPRO_BROKEN_MODELS}"
    GENREPRO_TEST_PYTHON="${GENREPRO_PYTHON}"
    GENREPRO_TEST_BINARY="$<TARGET_FILE:genrepro>")
  set(fixtures ${T_FIXTURES})
  if(T_NEEDS_MODEL)
    list(APPEND fixtures tiny_model)
  endif()
  if(NOT T_BATCHED)
    set(props LABELS "${T_LABELS}")
    if(fixtures)
      list(LENGTH fixtures n)
      if(n GREATER 1)
        message(FATAL_ERROR "genrepro_gtest(${T_NAME}): one fixture at most without BATCHED")
      endif()
      list(APPEND props FIXTURES_REQUIRED ${fixtures})
    endif()
    gtest_discover_tests(${T_NAME} PROPERTIES ${props} DISCOVERY_TIMEOUT 60)
    return()
  endif()
  if(NOT T_SHARDS)
    set(T_SHARDS ${GENREPRO_TORCH_TEST_SHARDS})
  endif()
  if(T_SHARDS GREATER GENREPRO_TEST_SHARDS_MAX)
    set(T_SHARDS ${GENREPRO_TEST_SHARDS_MAX})
  endif()
  set(filter)
  if(T_FILTER)
    set(filter "--gtest_filter=${T_FILTER}")
  endif()
  math(EXPR last "${T_SHARDS} - 1")
  foreach(i RANGE ${last})
    math(EXPR shown "${i} + 1")
    set(test ${T_NAME}.shard${shown}of${T_SHARDS})
    add_test(NAME ${test} COMMAND ${T_NAME} --gtest_brief=1 ${filter})
    # COST: on a tree that ctest has not run yet (no Testing/Temporary/CTestCostData.txt, whose
    # measured times replace it afterwards) the shards, seconds each, start before the
    # millisecond entries instead of in declaration order, so none of them is the run's tail.
    set_tests_properties(${test} PROPERTIES LABELS "${T_LABELS}" FIXTURES_REQUIRED "${fixtures}" TIMEOUT 300 COST 5
      ENVIRONMENT "GTEST_TOTAL_SHARDS=${T_SHARDS};GTEST_SHARD_INDEX=${i};${T_ENV}")
    if(NOT T_ENV)
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "GTEST_TOTAL_SHARDS=${T_SHARDS};GTEST_SHARD_INDEX=${i}")
    endif()
  endforeach()
endfunction()

# genrepro_cli_test(NAME <name> EXIT <code> [STDOUT <regex>] [STDERR <regex>] [ONE_LINE_STDERR]
#                   [LABELS ...] [NEEDS_MODEL] [FIXTURES ...] [WORKING_DIRECTORY <dir>]
#                   [BINARY <path>] [ABSENT <path>] COMMAND <args...>)
# Runs `genrepro <args...>` as a process and checks the exit code exactly (CTest alone cannot tell
# 1 from 2), the stdout/stderr regexes, and, with ONE_LINE_STDERR, that the error is a single line.
# BINARY runs another copy of genrepro instead of the build's; ABSENT names a path that is removed
# before the command and must not exist after it. Only what a process shows belongs here; message
# checks run in-process (tests/cli_inprocess).
function(genrepro_cli_test)
  cmake_parse_arguments(T "ONE_LINE_STDERR;NEEDS_MODEL" "NAME;EXIT;STDOUT;STDERR;WORKING_DIRECTORY;BINARY;ABSENT" "LABELS;COMMAND;FIXTURES" ${ARGN})
  if(NOT T_BINARY)
    set(T_BINARY $<TARGET_FILE:genrepro>)
  endif()
  set(check_args --exit "${T_EXIT}")
  if(DEFINED T_STDOUT)
    list(APPEND check_args --stdout "${T_STDOUT}")
  endif()
  if(DEFINED T_STDERR)
    list(APPEND check_args --stderr "${T_STDERR}")
  endif()
  if(T_ONE_LINE_STDERR)
    list(APPEND check_args --one-line-stderr)
  endif()
  if(T_ABSENT)
    list(APPEND check_args --absent "${T_ABSENT}")
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  endif()
  add_test(NAME ${T_NAME}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/check_command.py ${check_args}
            -- ${T_BINARY} ${T_COMMAND}
    WORKING_DIRECTORY ${T_WORKING_DIRECTORY})
  set(labels cli ${T_LABELS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${labels}" TIMEOUT 300
    ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache;HF_HUB_CACHE=${CMAKE_BINARY_DIR}/no-hf-cache")
  set(fixtures ${T_FIXTURES})
  if(T_NEEDS_MODEL)
    list(APPEND fixtures tiny_model)
  endif()
  if(fixtures)
    set_tests_properties(${T_NAME} PROPERTIES FIXTURES_REQUIRED "${fixtures}")
  endif()
endfunction()

# libllama of @node-llama-cpp/linux-x64@3.22.1 (scripts/setup.sh --tests): the llama.cpp reference
# tests (tests/reference/frameworks.cmake, tests/reference/engines.cmake) skip without it.
set(GENREPRO_LLAMA_LIB "${GENREPRO_DEPS_DIR}/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.5.0.so"
    CACHE FILEPATH "libllama of @node-llama-cpp/linux-x64@3.22.1, for the llama.cpp reference tests")

# genrepro_side_build(<name> <binary dir> <cmake args...>): the libtorch-free genrepro built beside
# this build from the same sources, in its own tree (only the `genrepro` target), with these cache
# arguments on top of -DGENREPRO_LIBTORCH=OFF, this build's type, deps and compiler launcher.
# BUILD_ALWAYS: the side build's own ninja decides what changed in the shared sources.
function(genrepro_side_build name dir)
  include(ExternalProject)
  set(args -DGENREPRO_LIBTORCH=OFF -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DGENREPRO_DEPS_DIR=${GENREPRO_DEPS_DIR} ${ARGN})
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  ExternalProject_Add(${name}
    SOURCE_DIR ${CMAKE_SOURCE_DIR}
    BINARY_DIR ${dir}
    CMAKE_ARGS ${args}
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${dir} --target genrepro
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON)
endfunction()
