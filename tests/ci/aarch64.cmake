# Strict numerics across architectures, in every CI run: the libtorch-free genrepro cross-built for
# aarch64 (Debian's g++-aarch64-linux-gnu with the :arm64 multiarch PCRE2 and OpenSSL, which
# `scripts/setup.sh --tests` installs on x86-64 with qemu-user; cmake/aarch64-linux-gnu.cmake),
# run under qemu-aarch64: its strict evidence must equal the committed strict digest run for run,
# byte for byte, as x86-64's does (strict.digest), with NEON vector code.
# The program runs on the arm64 multiarch glibc (libc6:arm64, Debian 12's current one), not on the
# cross toolchain's own copy (qemu -L /usr/aarch64-linux-gnu): with that older 2.36-8cross1 even a
# two-thread condition-variable ping-pong never returns under qemu-aarch64 7.2 here, while the
# multiarch glibc runs it in 0.1 s.
# Without the cross compiler the entry skips and says why.
find_program(GENREPRO_AARCH64_CXX aarch64-linux-gnu-g++)
find_program(GENREPRO_QEMU_AARCH64 qemu-aarch64)
set(aarch64_dir ${CMAKE_BINARY_DIR}/aarch64)
set(aarch64_skip "needs g++-aarch64-linux-gnu, qemu-user, libpcre2-dev:arm64, libssl-dev:arm64 and libstdc++6:arm64 (scripts/setup.sh --tests on x86-64)")
if(GENREPRO_AARCH64_CXX AND GENREPRO_QEMU_AARCH64 AND EXISTS /usr/lib/aarch64-linux-gnu/pkgconfig/libpcre2-8.pc
   AND EXISTS /usr/lib/aarch64-linux-gnu/libcrypto.so AND EXISTS /usr/lib/aarch64-linux-gnu/libstdc++.so.6 AND NOT CMAKE_SYSTEM_PROCESSOR STREQUAL aarch64)
  genrepro_side_build(genrepro_aarch64 ${aarch64_dir} -DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/aarch64-linux-gnu.cmake)
endif()
# In the suite: the article's six first predictions (prefill, softmax, top-p and torch's draws over
# the whole vocabulary, held to the committed digest) and tests/data/strict-short-steps.json (every
# row count from 11 to 23, recomputed and on the KV cache, greedy and sampled), byte-identical to
# this build's own evidence of it: about 8 CPU-s of emulation. All of the article's 561 decoding
# steps take 100 CPU-s under qemu here, more than the whole suite's minute on 2 cores, so that run
# is strict.aarch64.article, labelled long: CI runs it after the suite (scripts/test.sh).
set(aarch64_check ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/libtorch_free.py
    --binary ${aarch64_dir}/genrepro --emulator qemu-aarch64 --expect-isa neon
    --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
    --digest ${CMAKE_SOURCE_DIR}/tests/data/strict-digest.json --skip-reason ${aarch64_skip})
add_test(NAME strict.aarch64
  COMMAND ${aarch64_check} --scratch ${CMAKE_BINARY_DIR}/aarch64-check
          --only nucleus_sizes.json,first_prediction_top5.json
          --cross-check ${CMAKE_SOURCE_DIR}/tests/data/strict-short-steps.json --reference-binary $<TARGET_FILE:genrepro>)
# COST: among the longest entries; started early so the others run beside it.
set_tests_properties(strict.aarch64 PROPERTIES LABELS golden FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 120 COST 20)
add_test(NAME strict.aarch64.article COMMAND ${aarch64_check} --scratch ${CMAKE_BINARY_DIR}/aarch64-article-check --long)
set_tests_properties(strict.aarch64.article PROPERTIES LABELS "golden;long" FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 300)
