#pragma once
// The settings the llama.cpp engine runs with, and their checks: what a command line needs
// without the library itself. No libtorch here.
#include <string>

namespace genrepro::llama {

// How llama.cpp is asked to run; llama.cpp's own defaults where a user sets nothing.
struct LlamaSettings {
  int threads = 1;
  std::string kv_type = "f16";      // "f16" | "f32": the K and V caches
  std::string flash_attn = "auto";  // "auto" | "on" | "off"
};

// Whether `text` is an allowed value; the words for what is allowed, for messages.
bool valid_kv_type(const std::string& text);
bool valid_flash_attn(const std::string& text);
inline constexpr const char* kKvTypeAllowed = "f16 or f32";
inline constexpr const char* kFlashAttnAllowed = "auto, on or off";

}  // namespace genrepro::llama
