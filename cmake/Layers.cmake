# genrepro_layer(<folder> [NAME <name>] [TORCH] [EXCLUDE <file.cpp...>] DEPS <targets...>)
# One folder of harness/ becomes one shared library, genrepro_<name>, that links only the layers
# given in DEPS. Shared, not static: the genrepro binary and the engine library it opens on first
# use (cli/engine_loader.hpp) then hold one copy of every layer between them.
#
# Each layer also records which folders its files may include: its own and, transitively, those of
# the layers it links. cmake/CheckLayers.cmake holds every #include in harness/ against that
# table at every build, so a wrong include fails the build even where the linker would not notice
# (a header-only use), and only a TORCH layer may include libtorch's headers.
set_property(GLOBAL PROPERTY GENREPRO_LAYER_TABLE "")

# A layer compiles as a few unity files (CMake joins up to 8 of its .cpp files into one), so the
# main job parses libtorch's and nlohmann's headers a few times instead of once per file: 34 build
# steps for the genrepro target instead of 114. Only the layers: tests and benchmarks compile file
# by file. Off (-DGENREPRO_UNITY_BUILD=OFF) for one object per source file, when editing one file
# should recompile only that file. Each file's names in `namespace {}` must therefore be unique
# within its layer: the unity build is what checks it.
option(GENREPRO_UNITY_BUILD "compile each harness/ layer as unity files" ON)

# The shared library of one folder's .cpp files (less `exclude`), linking `deps`.
function(_genrepro_layer_library target folder exclude deps)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/harness/${folder}/*.cpp)
  foreach(name IN LISTS exclude)
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/harness/${folder}/${name})
  endforeach()
  add_library(${target} SHARED ${sources})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/harness)
  target_link_libraries(${target} PUBLIC ${deps})
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(GENREPRO_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

function(genrepro_layer folder)
  cmake_parse_arguments(L "TORCH" "NAME" "DEPS;EXCLUDE" ${ARGN})
  if(NOT L_NAME)
    set(L_NAME ${folder})
  endif()
  _genrepro_layer_library(genrepro_${L_NAME} ${folder} "${L_EXCLUDE}" "${L_DEPS}")

  set(allowed ${folder})
  set(torch ${L_TORCH})
  foreach(dep IN LISTS L_DEPS)
    if(dep MATCHES "^genrepro_(.+)$")
      get_property(dep_allowed GLOBAL PROPERTY GENREPRO_LAYER_ALLOWED_${CMAKE_MATCH_1})
      get_property(dep_torch GLOBAL PROPERTY GENREPRO_LAYER_TORCH_${CMAKE_MATCH_1})
      list(APPEND allowed ${dep_allowed})
      if(dep_torch)
        set(torch ON)
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY GENREPRO_LAYER_ALLOWED_${L_NAME} ${allowed})
  set_property(GLOBAL PROPERTY GENREPRO_LAYER_TORCH_${L_NAME} ${torch})
  string(REPLACE ";" "," allowed_csv "${allowed}")
  if(torch)
    set(torch_word torch)
  else()
    set(torch_word no-torch)
  endif()
  set_property(GLOBAL APPEND PROPERTY GENREPRO_LAYER_TABLE "${folder} ${torch_word} ${allowed_csv}")
endfunction()

# genrepro_strict_only_copy(<folder> [NAME <name>] [EXCLUDE <file.cpp...>] DEPS <targets...>)
# A second library of a layer, genrepro_<name>_strict, compiled with GENREPRO_WITH_LIBTORCH=0 and
# linking no libtorch: in the libtorch build, the engine a strict run opens. Its folder's row of
# the layering table is the first library's (the same sources, the same includes).
function(genrepro_strict_only_copy folder)
  cmake_parse_arguments(L "" "NAME" "DEPS;EXCLUDE" ${ARGN})
  if(NOT L_NAME)
    set(L_NAME ${folder})
  endif()
  set(target genrepro_${L_NAME}_strict)
  _genrepro_layer_library(${target} ${folder} "${L_EXCLUDE}" "${L_DEPS}")
  # What its evidence says in place of a libtorch version (engine/torch_runtime.cpp).
  target_compile_definitions(${target} PRIVATE GENREPRO_NO_LIBTORCH_BECAUSE="strict numerics: not loaded")
  set_target_properties(${target} PROPERTIES GENREPRO_NO_LIBTORCH ON)
endfunction()

# Writes the table (one line per folder: "<folder> torch|no-torch <allowed,folders>") and the
# check that runs at every build. `extra` adds rows for folders that are no library (the mains).
function(genrepro_layer_check)
  cmake_parse_arguments(C "" "" "EXTRA_ROWS;BEFORE" ${ARGN})
  get_property(rows GLOBAL PROPERTY GENREPRO_LAYER_TABLE)
  list(APPEND rows ${C_EXTRA_ROWS})
  string(REPLACE ";" "\n" text "${rows}")
  set(table ${CMAKE_BINARY_DIR}/layers.txt)
  file(WRITE ${table} "${text}\n")
  set(GENREPRO_LAYER_TABLE_FILE ${table} PARENT_SCOPE)
  add_custom_target(genrepro_layering ALL
    COMMAND ${CMAKE_COMMAND} -DTABLE=${table} -DROOT=${CMAKE_SOURCE_DIR}/harness -P ${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake
    COMMENT "Checking that every layer includes only the layers below it")
  foreach(t IN LISTS C_BEFORE)
    add_dependencies(${t} genrepro_layering)
  endforeach()
endfunction()
