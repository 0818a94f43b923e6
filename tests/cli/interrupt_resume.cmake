# genrepro run stopped part-way and resumed, as only a process shows it (docs/resume.md),
# in two parts that ctest can run side by side:
#   sigkill   SIGKILL during a 104-run grid (recompute and batched KV-cache runs), which no handler
#             sees, and a cut-short last line: the old evidence intact, --resume equal to an
#             uninterrupted run. SIGINT and SIGTERM, which run's handler stops, are driven
#             in-process from a watcher thread (tests/cli_inprocess/interrupt_test.cpp).
#   (what --resume refuses, checkpoints from other experiments, models or builds, a damaged line,
#   a second writer and an unwritable --out, is checked in-process: RunResume.* in the same file)
#   disk      a full disk (a small tmpfs in a private mount namespace), while the checkpoint grows
#             and when the evidence is written. Skipped (exit 77, reason printed) where the machine
#             grants no mount namespace or tmpfs (a chroot, an unprivileged container): the script
#             first tries exactly that unshare and mount in a throwaway child.
foreach(part sigkill disk)
  add_test(NAME cli.run.interrupt_and_resume.${part}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/interrupt_resume.py --part ${part}
            --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL})
  set_tests_properties(cli.run.interrupt_and_resume.${part} PROPERTIES
    LABELS "cli" TIMEOUT 900 FIXTURES_REQUIRED tiny_model COST 1000 SKIP_RETURN_CODE 77)  # started first: the longest
endforeach()
