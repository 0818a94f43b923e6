# genrepro's framework chains against the frameworks' own code (docs/sampling.md, "What was
# compared"). Hugging Face's processors are plain PyTorch (tests/reference/hf_processors.py, no
# transformers needed); llama.cpp's samplers are its prebuilt libllama from the npm package
# @node-llama-cpp/linux-x64@3.22.1 (scripts/setup.sh --tests installs it, sha256-pinned), driven
# through its C API with ctypes (tests/reference/llama_cpp_sampling.py). Without the library the
# llama.cpp entries are skipped, saying why.
set(framework_vectors ${CMAKE_BINARY_DIR}/reference/framework-vectors)
# The entries below that run a gtest binary linking libtorch pin portable kernels, as every
# in-process entry does (tests/ci/portable_kernels.cmake: OpenBLAS picks its kernels at start-up).
set(portable_kernels "OPENBLAS_CORETYPE=Haswell;ATEN_CPU_CAPABILITY=avx2")

# The Python side is one process (tests/reference/framework_references.py): Hugging Face's and
# llama.cpp's references share its start-up and torch import (1.7 s of CPU each time) and, for the
# whole generations, one loaded model. It pins the same portable kernels as the C++ side, so both
# run the same BLAS kernels (unpinned, OpenBLAS picks its slow generic "Prescott" kernels on some
# CPUs). Without libllama the llama.cpp half is left out: this entry says so and passes (its
# Hugging Face half ran), the llama.cpp C++ entries skip.
set(framework_loop_hf ${CMAKE_BINARY_DIR}/reference/framework-loop-hf.json)
set(framework_loop_llama ${CMAKE_BINARY_DIR}/reference/framework-loop-llama-cpp.json)
add_test(NAME reference.frameworks.python
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/framework_references.py
          --vectors ${framework_vectors} --model ${GENREPRO_TINY_MODEL} --hf-out ${framework_loop_hf}
          --llama-lib ${GENREPRO_LLAMA_LIB} --llama-out ${framework_loop_llama})
set_tests_properties(reference.frameworks.python PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED tiny_model TIMEOUT 300
  FIXTURES_SETUP "framework_vectors;llama_cpp_vectors;framework_loop_hf;framework_loop_llama"
  ENVIRONMENT "${portable_kernels}")

# Fixed logits: 3,000 vectors, every stage and pick (no model).
add_test(NAME reference.frameworks.hf_vectors
  COMMAND genrepro_engine_tests --gtest_filter=HfReference.*)
set_tests_properties(reference.frameworks.hf_vectors PROPERTIES
  LABELS "reference;engine" FIXTURES_REQUIRED framework_vectors TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_VECTORS=${framework_vectors};${portable_kernels}")
add_test(NAME reference.frameworks.llama_cpp_vectors
  COMMAND genrepro_engine_tests --gtest_filter=LlamaCppReference.*)
set_tests_properties(reference.frameworks.llama_cpp_vectors PROPERTIES
  LABELS "reference;engine" FIXTURES_REQUIRED "framework_vectors;llama_cpp_vectors" TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_VECTORS=${framework_vectors};${portable_kernels}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# Whole generations on the tiny fixture, token for token with `genrepro generate --framework ...`.
add_test(NAME reference.frameworks.hf_loop
  COMMAND genrepro_cli_tests --gtest_filter=FrameworkLoops.GenerateFrameworkHf*)
set_tests_properties(reference.frameworks.hf_loop PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;framework_loop_hf" TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_LOOP_HF=${framework_loop_hf};${portable_kernels}")
add_test(NAME reference.frameworks.llama_cpp_loop
  COMMAND genrepro_cli_tests --gtest_filter=FrameworkLoops.GenerateFrameworkLlamaCpp*)
set_tests_properties(reference.frameworks.llama_cpp_loop PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;framework_loop_llama" TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_LOOP_LLAMA_CPP=${framework_loop_llama};${portable_kernels}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
# generate's default path (KV cache, batched decoder) against the same reference ids.
add_test(NAME reference.frameworks.cached_loops
  COMMAND genrepro_cli_tests --gtest_filter=FrameworkLoopsCached.*)
set_tests_properties(reference.frameworks.cached_loops PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;framework_loop_hf;framework_loop_llama" TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_LOOP_HF=${framework_loop_hf};GENREPRO_FRAMEWORK_LOOP_LLAMA_CPP=${framework_loop_llama};${portable_kernels}")

# The model-free chain (harness/sampling/, what `genrepro sample` runs) on the same vectors, in the
# unit binary: no libtorch in the process, the same hashes and picks (tests/unit/sampling/reference_vectors_test.cpp).
add_test(NAME reference.frameworks.plain_chain_hf_vectors
  COMMAND genrepro_unit_tests --gtest_filter=PlainChainReference.HuggingFace*)
set_tests_properties(reference.frameworks.plain_chain_hf_vectors PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED framework_vectors TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_VECTORS=${framework_vectors}")
add_test(NAME reference.frameworks.plain_chain_llama_cpp_vectors
  COMMAND genrepro_unit_tests --gtest_filter=PlainChainReference.LlamaCpp*)
set_tests_properties(reference.frameworks.plain_chain_llama_cpp_vectors PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "framework_vectors;llama_cpp_vectors" TIMEOUT 300
  ENVIRONMENT "GENREPRO_FRAMEWORK_VECTORS=${framework_vectors}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
