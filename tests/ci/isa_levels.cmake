# Strict numerics at three x86-64 ISA levels, each its own build of the libtorch-free genrepro:
#   baseline  -march=x86-64 (Debian's g++ default): strict.libtorch_free's build
#   haswell   -march=haswell (AVX2, FMA, BMI2): strict.march_haswell
#   native    -march=native (this machine's own, e.g. znver3 or an AVX-512 Xeon): strict.march_native
# At a level with FMA the compiler may contract a * b + c into one fused operation in every file not
# compiled with -ffp-contract=off, and vectorise what it likes at its own width: the strict and
# sampling layers forbid both, and these builds check that nothing else that decides a recorded
# number depends on it. Each build's strict evidence of the article experiments must equal the
# committed strict digest byte for byte (tests/ci/scripts/libtorch_free.py). A level this CPU
# cannot execute is skipped with the reason; -DGENREPRO_TEST_ISA_LEVELS=OFF leaves both builds out.
option(GENREPRO_TEST_ISA_LEVELS "Build the libtorch-free genrepro at -march=haswell and -march=native and test both" ON)

set(isa_cpu_flags "")
if(EXISTS /proc/cpuinfo)
  file(STRINGS /proc/cpuinfo isa_flag_lines REGEX "^flags" LIMIT_COUNT 1)
  string(REGEX REPLACE "^flags[ \t]*:" "" isa_cpu_flags "${isa_flag_lines}")
  separate_arguments(isa_cpu_flags)
endif()
set(isa_x86 FALSE)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(isa_x86 TRUE)
endif()

foreach(level haswell native)
  set(dir ${CMAKE_BINARY_DIR}/march-${level})
  set(skip "")
  if(NOT GENREPRO_TEST_ISA_LEVELS)
    set(skip "configure with -DGENREPRO_TEST_ISA_LEVELS=ON")
  elseif(NOT isa_x86)
    set(skip "x86-64 ISA levels: this machine is ${CMAKE_SYSTEM_PROCESSOR}")
  elseif(level STREQUAL haswell)
    foreach(f avx avx2 fma bmi1 bmi2 movbe f16c)
      if(NOT f IN_LIST isa_cpu_flags)
        set(skip "this CPU has no ${f}, which -march=haswell code may use")
        break()
      endif()
    endforeach()
  endif()
  if(skip STREQUAL "")
    genrepro_side_build(genrepro_march_${level} ${dir} "-DCMAKE_CXX_FLAGS=-march=${level}")
  endif()
  add_test(NAME strict.march_${level}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/libtorch_free.py
            --binary ${dir}/genrepro --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
            --scratch ${CMAKE_BINARY_DIR}/march-${level}-check --digest ${CMAKE_SOURCE_DIR}/tests/data/strict-digest.json
            --skip-reason "${skip}")
  set_tests_properties(strict.march_${level} PROPERTIES LABELS golden FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
