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

function(genrepro_layer folder)
  cmake_parse_arguments(L "TORCH" "NAME" "DEPS;EXCLUDE" ${ARGN})
  if(NOT L_NAME)
    set(L_NAME ${folder})
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/harness/${folder}/*.cpp)
  foreach(name IN LISTS L_EXCLUDE)
    list(REMOVE_ITEM sources ${CMAKE_SOURCE_DIR}/harness/${folder}/${name})
  endforeach()
  add_library(genrepro_${L_NAME} SHARED ${sources})
  target_include_directories(genrepro_${L_NAME} PUBLIC ${CMAKE_SOURCE_DIR}/harness)
  target_link_libraries(genrepro_${L_NAME} PUBLIC ${L_DEPS})
  target_compile_options(genrepro_${L_NAME} PRIVATE -Wall -Wextra)
  if(GENREPRO_UNITY_BUILD)
    set_target_properties(genrepro_${L_NAME} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()

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
