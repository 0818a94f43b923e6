#pragma once
// What this build can run. -DGENREPRO_LIBTORCH=OFF builds a genrepro without libtorch (nor a
// BLAS): every verb works, and the model runs in strict numerics only (docs/numerics.md).
// GENREPRO_WITH_LIBTORCH is set for every target by CMakeLists.txt.
namespace genrepro {

inline constexpr bool kBuiltWithLibtorch = GENREPRO_WITH_LIBTORCH != 0;

// Why a libtorch-free build refuses reference and tiled numerics, and what to do instead.
inline constexpr const char* kLibtorchNeeded =
    "reference and tiled numerics need the libtorch build (this genrepro was built with -DGENREPRO_LIBTORCH=OFF: "
    "strict numerics only); use --numerics strict, or build with libtorch (scripts/build.sh)";

}  // namespace genrepro
