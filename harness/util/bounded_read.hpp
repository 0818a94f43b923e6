#pragma once
// The one function every reader of a text input goes through (experiment files, evidence and
// goldens, config.json, vocab.json / merges.txt, the article's facts, tokenize --input). It reads
// at most a limit set per kind of file, whatever the file system says the size is, so a regular
// file, a pipe, a FIFO, /dev/stdin, "-" (standard input) and /dev/zero all behave alike: the text,
// or one line saying why not. It never trusts a reported size (a pipe has none; /proc lies), and
// it stops at the first NUL byte (no text format genrepro reads has one), so /dev/zero ends at
// once and an endless pipe ends at the limit.
#include <cstdint>
#include <iosfwd>
#include <string>

namespace genrepro {

// The limits, one per kind of input (docs/validation.md lists them). Each is far above what the
// kind ever holds and far below what would hurt the machine.
inline constexpr uint64_t kMaxExperimentBytes = uint64_t(1) << 20;     // 1 MiB: a grid is a few KB
inline constexpr uint64_t kMaxEvidenceBytes = uint64_t(64) << 20;      // 64 MiB: ~150 GPT-2 runs of 1,024 tokens
inline constexpr uint64_t kMaxModelConfigBytes = uint64_t(1) << 20;    // 1 MiB: config.json is ~1 KB
inline constexpr uint64_t kMaxTokenizerFileBytes = uint64_t(64) << 20; // 64 MiB: GPT-2's vocab.json is 1 MB
inline constexpr uint64_t kMaxArticleFactsBytes = uint64_t(1) << 20;   // 1 MiB: the facts are a few KB
inline constexpr uint64_t kMaxTokenizeInputBytes = uint64_t(64) << 20;  // 64 MiB of JSON lines
// 512 MiB: `sample`'s logits, ~2,600 rows of GPT-2's 50,257 as .npy float32, ~800 as JSON lines.
inline constexpr uint64_t kMaxLogitsInputBytes = uint64_t(512) << 20;

// The path that means standard input.
inline constexpr const char* kStdinPath = "-";

// What the text must be. A JSON object starts with '{' after white space: an input that is
// already longer than kSniffBytes without doing so (`yes |`, a log, a binary without NULs) is
// refused there instead of at the limit. Shorter ones are left to the parser, whose message
// names the line and column. `bytes` takes NUL bytes too, for a binary format (.npy) whose own
// reader checks it.
enum class Expect { text, json_object, bytes };
inline constexpr uint64_t kSniffBytes = uint64_t(64) << 10;

struct BoundedRead {
  std::string text;
  std::string problem;  // empty when read; else one line without the path: "no such file", ...
  bool ok() const { return problem.empty(); }
};

// Reads all of `path` ("-": standard input) if it holds at most max_bytes bytes. Problems: no
// such file, a directory, cannot open (the system's reason), a read error, more than max_bytes
// (reading stops within one 64 KiB chunk past it), a NUL byte (not a text file) unless Expect::bytes.
BoundedRead read_bounded(const std::string& path, uint64_t max_bytes, Expect expect = Expect::text);
// The same rules for a stream already open (the CLI's standard input, which tests replace).
BoundedRead read_bounded(std::istream& in, uint64_t max_bytes, Expect expect = Expect::text);

}  // namespace genrepro
