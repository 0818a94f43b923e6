#pragma once
// The logits `genrepro sample` reads: rows of float32 values, one vocabulary wide, from
//   - JSON lines: one JSON array of numbers per line (blank lines skipped), each number rounded
//     to the nearest float32 as numpy.float32(x) does;
//   - .npy as numpy.save writes it (recognised by its magic bytes, whatever the file is called):
//     dtype '<f4' (little-endian float32), C order, shape (V,) for one row or (N, V) for N rows.
// Anything else is refused with one line (UsageError) naming the file, the row and element, what
// was found and what is allowed: ragged rows, NaN or infinity (also a number beyond float32's
// range), another dtype, Fortran order, other shapes, an empty file or row, a non-number.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace genrepro::cli {

struct LogitsRows {
  std::vector<std::vector<float>> rows;  // every row the same length, at least 1, all finite
  std::string format;                    // "jsonl" or "npy"
};

// `bytes` is the whole input; `name` names it in messages ("<stdin>" for standard input).
LogitsRows parse_logits(const std::string& bytes, const std::string& name);

// Reads `path` ("-": `in`, standard input) within kMaxLogitsInputBytes, then
// parse_logits. A file that cannot be read is a UsageError naming it.
LogitsRows read_logits(const std::string& path, std::istream& in);

}  // namespace genrepro::cli
