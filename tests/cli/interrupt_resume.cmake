# genrepro run stopped part-way and resumed, as only a process shows it (issue 11; docs/resume.md),
# in three parts that ctest can run side by side:
#   signals   SIGINT, SIGTERM and SIGKILL during a 100-run grid (and batched KV-cache runs on 2
#             threads): the old evidence intact each time, --resume equal to an uninterrupted run
#   refusals  checkpoints from other experiments, models or builds, a damaged line, a second
#             writer and an unwritable --out: exit 2, nothing touched
#   disk      a full disk (a small tmpfs in a private mount namespace), while the checkpoint grows
#             and when the evidence is written
foreach(part signals refusals disk)
  add_test(NAME cli.run.interrupt_and_resume.${part}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/interrupt_resume.py --part ${part}
            --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL})
  set_tests_properties(cli.run.interrupt_and_resume.${part} PROPERTIES
    LABELS "cli" TIMEOUT 900 FIXTURES_REQUIRED tiny_model COST 1000)  # started first: the longest
endforeach()
