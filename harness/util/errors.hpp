#pragma once
// Typed errors. Every problem a user can cause (a bad file, flag, experiment or evidence file)
// is a genrepro::Error whose message is one line naming the file, the field or tensor, what was
// found, what is allowed, and the fix. The CLI catches them in one place, prints the line, and
// exits 2. Anything else that escapes is a bug (exit 3).
#include <stdexcept>
#include <string>

namespace genrepro {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// config.json, model.safetensors, the model directory and its layout.
class ModelFileError : public Error {
 public:
  using Error::Error;
};

// vocab.json / encoder.json, merges.txt / vocab.bpe, and text that cannot be encoded.
class TokenizerError : public Error {
 public:
  using Error::Error;
};

// Experiment files and sampling parameters.
class SpecError : public Error {
 public:
  using Error::Error;
};

// Evidence and golden files.
class EvidenceError : public Error {
 public:
  using Error::Error;
};

// Numbers that left float32's range inside the loop (a distribution holding NaN or infinity):
// weights or sampling parameters the arithmetic cannot carry. Raised before the draw, naming the step.
class NumericsError : public Error {
 public:
  using Error::Error;
};

// A document about to be written holds a value its format cannot (NaN in JSON).
class JsonWriteError : public Error {
 public:
  using Error::Error;
};

// Command-line flags that parse but make no sense together.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace genrepro
