#pragma once
// The numerics a run's arithmetic used (docs/numerics.md), as evidence records it. Two modes, each
// batch-invariant: `reference` gives every run the bits it gets computed alone on the one-row path
// (batching only in layouts the start-up probe proved identical), `tiled` multiplies every linear
// layer in fixed tiles of T rows, so a run's bits never depend on its batch but differ from
// reference's in the last place. Only the mode and T decide the bits; everything else about how
// a run executed (batch, workers, BLAS threads, the probe's findings) is recorded, never compared.
#include <cstdint>
#include <optional>
#include <string>

#include "util/json_text.hpp"

namespace genrepro {

enum class NumericsMode { reference, tiled };

const char* to_string(NumericsMode mode);
// "reference" | "tiled"; std::nullopt for anything else.
std::optional<NumericsMode> parse_numerics_mode(const std::string& text);

struct NumericsRecord {
  NumericsMode mode = NumericsMode::reference;
  int64_t tile = 0;        // tiled: rows per GEMM; 0 in reference
  // reference with a batch beyond the probe's proof (--allow-inexact-batch): bits may differ
  // from a lone run's, so this is part of what the numerics are
  bool inexact_batch = false;
  OrderedJson execution = OrderedJson::object();  // how it ran; volatile (never compared)
};

OrderedJson numerics_to_json(const NumericsRecord& n);

// What decides the bits, for diff and merge: {"mode": ..., "tile": ...} (tile only when tiled).
OrderedJson numerics_identity_json(const NumericsRecord& n);

}  // namespace genrepro

namespace genrepro {

// What the user asked for (run/generate --numerics, --batch, --allow-inexact-batch).
struct NumericsRequest {
  NumericsMode mode = NumericsMode::reference;
  std::optional<int64_t> batch;      // runs decoded together; default: the largest proven (reference), T (tiled)
  bool allow_inexact_batch = false;  // reference: a batch beyond the proof, recorded
};

// Largest --batch accepted at all (memory: every run in a batch holds its KV cache).
inline constexpr int64_t kMaxBatch = 256;

}  // namespace genrepro
