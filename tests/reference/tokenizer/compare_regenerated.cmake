# Regenerates the tokenizer fixtures into OUT and fails unless they equal the committed ones.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${NODE} ${SCRIPT} --out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_reference.mjs failed (exit ${rc})")
endif()
foreach(name corpus.jsonl unseen.jsonl)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/${name} ${EXPECTED}/${name} RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${name} regenerated in ${OUT} differs from the committed ${EXPECTED}/${name}; "
                        "rerun make_reference.mjs and commit, or find what changed in the reference encoder")
  endif()
endforeach()
message(STATUS "corpus.jsonl and unseen.jsonl regenerate identically")
