# genrepro's llama.cpp engine against the real llama.cpp (docs/engines.md): the GGUF export read
# back by an independent reader, llama.cpp's runs through `genrepro run --engine llama.cpp`, its
# bits across thread counts, its tokenization of every prompt, and diff naming the engine.
# Without libllama (scripts/setup.sh --tests installs it on x86-64) the entry skips, saying why.
add_test(NAME reference.engines.llama_cpp
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/llama_engine.py
          --genrepro $<TARGET_FILE:genrepro> --lib ${GENREPRO_LLAMA_LIB} --model ${GENREPRO_TINY_MODEL}
          --experiment ${CMAKE_SOURCE_DIR}/experiments/engines/llama_cpp.json
          --work ${CMAKE_BINARY_DIR}/reference/llama-engine)
set_tests_properties(reference.engines.llama_cpp PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED tiny_model TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT "GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/reference/llama-engine/cache")
