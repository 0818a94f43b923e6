# cmake -DBIN=genrepro -DMODEL=dir -P generate_rng_check.cmake: --rng torch and --rng portable
# must print the same new ids for the same seed, and a repeated run the same ids again.
set(args generate --model ${MODEL} --prompt "the river bank was" --max-new-tokens 20 --ids
         --temperature 1 --top-p 0.9 --seed 42)
execute_process(COMMAND ${BIN} ${args} --rng torch OUTPUT_VARIABLE torch_ids RESULT_VARIABLE rc1)
execute_process(COMMAND ${BIN} ${args} --rng portable OUTPUT_VARIABLE portable_ids RESULT_VARIABLE rc2)
execute_process(COMMAND ${BIN} ${args} OUTPUT_VARIABLE again_ids RESULT_VARIABLE rc3)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT rc3 EQUAL 0)
  message(FATAL_ERROR "genrepro generate failed: ${rc1} ${rc2} ${rc3}")
endif()
if(NOT torch_ids STREQUAL portable_ids)
  message(FATAL_ERROR "torch ${torch_ids} != portable ${portable_ids}")
endif()
if(NOT torch_ids STREQUAL again_ids)
  message(FATAL_ERROR "seed 42 did not reproduce: ${torch_ids} vs ${again_ids}")
endif()
message(STATUS "torch == portable == repeat: ${torch_ids}")
