#pragma once
// Helpers shared by the model-file tests: the scratch directory, raw file writing and the
// environment guard (tests/support), and assertions on error messages.
#include <string>

#include <gtest/gtest.h>

#include "support/env_guard.hpp"
#include "support/scratch_dir.hpp"

// Runs `stmt`, expects it to throw `ExType`, and checks that the message contains `needle` and is
// one line. On failure prints the message actually thrown.
#define EXPECT_THROW_MSG(stmt, ExType, needle)                                                 \
  do {                                                                                        \
    bool genrepro_thrown_ = false;                                                            \
    try {                                                                                     \
      stmt;                                                                                   \
    } catch (const ExType& genrepro_e_) {                                                     \
      genrepro_thrown_ = true;                                                                \
      const std::string genrepro_msg_ = genrepro_e_.what();                                   \
      EXPECT_NE(genrepro_msg_.find(needle), std::string::npos)                                \
          << "message: " << genrepro_msg_ << "\nexpected to contain: " << (needle);           \
      EXPECT_EQ(genrepro_msg_.find('\n'), std::string::npos) << "multi-line: " << genrepro_msg_; \
    }                                                                                         \
    EXPECT_TRUE(genrepro_thrown_) << #stmt " did not throw " #ExType;                         \
  } while (0)
