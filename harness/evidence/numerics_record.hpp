#pragma once
// The numerics a run's arithmetic used (docs/numerics.md), as evidence records it. Three modes, each
// batch-invariant: `reference` gives every run the bits it gets computed alone on libtorch's
// one-row path (batching only in layouts the start-up probe proved identical), `tiled` multiplies
// every linear layer in fixed tiles of T rows, so a run's bits never depend on its batch but
// differ from reference's in the last place, and `strict` computes the whole forward and the
// sampling in genrepro's own kernels (strict/strict_gpt2.hpp), one fixed order of IEEE operations
// per output, so its bits depend on nothing but the kernel revision. Only the mode, T, the kernel
// revision and (reference, tiled) the CPU kernels decide the bits; everything else about how a run
// executed (batch, workers, threads, the probe's findings) is recorded, never compared.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/kernel_requirements.hpp"
#include "util/json_text.hpp"

namespace genrepro {

enum class NumericsMode { reference, tiled, strict };

const char* to_string(NumericsMode mode);
// "reference" | "tiled" | "strict"; std::nullopt for anything else.
std::optional<NumericsMode> parse_numerics_mode(const std::string& text);

// Which CPU kernels the BLAS and ATen use (docs/numerics.md, "CPU kernels"). OpenBLAS and ATen
// pick kernels by CPU when they load, and different kernels give different bits: `portable` pins
// the ones every x86-64 CPU with AVX2 and FMA runs (OpenBLAS's Haswell kernels, ATen's AVX2), so
// the bits do not depend on the machine; `native` lets the libraries choose, as genrepro did
// before the setting existed. What portable pins and what each kernel set needs of the CPU:
// evidence/kernel_requirements.hpp.
enum class CpuKernels { portable, native };

const char* to_string(CpuKernels kernels);
// "portable" | "native"; std::nullopt for anything else.
std::optional<CpuKernels> parse_cpu_kernels(const std::string& text);

// The kernels a run's arithmetic used: the setting and what the process really loaded. All three
// decide the bits. Absent in evidence written before the setting existed (that evidence is
// native: the libraries chose, and environment.blas.core names what they chose).
struct KernelRecord {
  CpuKernels setting = CpuKernels::native;
  std::string blas_core;        // openblas_get_corename(), or the BLAS vendor when not OpenBLAS
  std::string aten_capability;  // DEFAULT | AVX2 | AVX512
};

struct NumericsRecord {
  NumericsMode mode = NumericsMode::reference;
  int64_t tile = 0;        // tiled: rows per GEMM; 0 in reference
  std::string kernel_revision;  // strict: the operation order's name (kStrictKernelRevision); else empty
  // reference with a batch beyond the probe's proof (--allow-inexact-batch): bits may differ
  // from a lone run's, so this is part of what the numerics are
  bool inexact_batch = false;
  std::optional<KernelRecord> kernels;  // absent in evidence from before --cpu-kernels, and in strict
  OrderedJson execution = OrderedJson::object();  // how it ran; volatile (never compared)
};

OrderedJson numerics_to_json(const NumericsRecord& n);

// What decides the bits, for diff and merge: {"mode": ..., "tile": ..., "kernel_revision": ...,
// "cpu_kernels": {...}} (tile only when tiled, kernel_revision only when strict, cpu_kernels only
// when recorded).
OrderedJson numerics_identity_json(const NumericsRecord& n);

}  // namespace genrepro

namespace genrepro {

// What the user asked for (run/generate --numerics, --batch, --allow-inexact-batch).
struct NumericsRequest {
  NumericsMode mode = NumericsMode::reference;
  std::optional<int64_t> batch;      // runs decoded together; default: the largest proven (reference), T (tiled)
  bool allow_inexact_batch = false;  // reference: a batch beyond the proof, recorded
  CpuKernels cpu_kernels = CpuKernels::portable;
  // OPENBLAS_CORETYPE / ATEN_CPU_CAPABILITY values of the user's that portable replaced before
  // the engine loaded (filled by cli/engine_loader.cpp); recorded, never compared: they did not
  // decide the bits.
  std::vector<std::pair<std::string, std::string>> overridden_env;
  // --threads as given; empty when the default (the CPUs this process may use) was taken.
  // Recorded beside the count used, never compared: the probe keeps the bits of every count.
  std::optional<int> threads_asked;
};

// Largest --batch accepted at all (memory: every run in a batch holds its KV cache).
inline constexpr int64_t kMaxBatch = 256;

}  // namespace genrepro
