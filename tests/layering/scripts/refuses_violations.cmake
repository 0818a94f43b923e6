# cmake -DTABLE=<layers.txt> -DCHECK=<CheckLayers.cmake> -DWORK=<scratch dir> -P refuses_violations.cmake
# The layering check must fail on each kind of violation, naming the file: a lower layer including
# a higher one, a lower layer including libtorch, and a folder that is no layer. Each case is a
# tiny tree of its own, so one violation cannot hide behind another.
cmake_minimum_required(VERSION 3.25)
function(expect_refused name file text expected)
  set(root ${WORK}/${name})
  file(REMOVE_RECURSE ${root})
  file(WRITE ${root}/util/ok.hpp "#pragma once\n")
  file(WRITE ${root}/${file} "${text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DTABLE=${TABLE} -DROOT=${root} -P ${CHECK}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${name}: the layering check accepted ${file}")
  endif()
  string(REGEX REPLACE "[ \n]+" " " err "${err}")
  if(NOT err MATCHES "${expected}")
    message(FATAL_ERROR "${name}: expected a message matching '${expected}', got: ${err}")
  endif()
endfunction()

expect_refused(upward util/bad.cpp "#include \"report/report.hpp\"\n"
               "harness/util/bad.cpp: '#include \"report/report.hpp\"': layer 'util' may include only util")
expect_refused(torch_below_engine evidence/bad.cpp "#include <torch/torch.h>\n"
               "harness/evidence/bad.cpp: '#include <torch/torch.h>': only the engine layers")
expect_refused(format_includes_comparison evidence/bad.cpp "#include \"compare/evidence_diff.hpp\"\n"
               "layer 'evidence' may include only .*'compare' is not below it")
expect_refused(comparison_includes_golden compare/bad.cpp "#include \"golden/golden_bless.hpp\"\n"
               "'golden' is not below it")
expect_refused(aten_below_engine cli/bad.cpp "#include <ATen/ATen.h>\n"
               "harness/cli/bad.cpp: '#include <ATen/ATen.h>': only the engine layers")
expect_refused(cli_includes_engine cli/bad.cpp "#include \"engine/runner.hpp\"\n"
               "'engine' is not below it")
expect_refused(unknown_folder misc/bad.cpp "#include \"util/ok.hpp\"\n"
               "harness/misc/bad.cpp: folder 'misc' is no layer")
message(STATUS "the layering check refused all 5 violations")
