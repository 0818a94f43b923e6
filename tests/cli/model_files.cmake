# The model files `genrepro fixture` writes. The verb's flags and refusals are checked in-process
# (tests/cli_inprocess/fixture_test.cpp); here, the bytes every engine test loads.

# The pinned sha256 of the tiny fixture's model.safetensors (also in
# tests/unit/model/fixture_model_test.cpp and docs/fixture-models.md).
set(GENREPRO_TINY_WEIGHTS_SHA256 "5801a72533d818a5a1e7ec7078031493337e08f8338f5ccd6e3ae34bde38221f")

# The fixture every engine test loads has exactly the pinned bytes.
add_test(NAME fixture.tiny_sha256_pinned
  COMMAND ${CMAKE_COMMAND} -DFILE=${GENREPRO_TINY_MODEL}/model.safetensors
          -DEXPECTED=${GENREPRO_TINY_WEIGHTS_SHA256} -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_sha256.cmake)
set_tests_properties(fixture.tiny_sha256_pinned PROPERTIES LABELS "cli" FIXTURES_REQUIRED tiny_model)
