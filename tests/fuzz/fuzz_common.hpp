// Shared by the libFuzzer harnesses: a private temporary directory, and the rule that a loader
// either succeeds or throws a gradyn error (ModelError / ArgumentError). Any other exception
// escaping a loader is a finding (abort), as are crashes, leaks, hangs and sanitizer reports.
// Compiled with GRADYN_FUZZ_REPLAY (tests/io/test_fuzz_regressions.cpp replays the kept inputs
// in gradyn_tests without libFuzzer), such an exception is thrown as std::logic_error instead.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include "gradyn/model/errors.hpp"

namespace gradyn_fuzz {

/// A directory of this process's own under $TMPDIR, made once and removed at exit.
inline const std::filesystem::path& temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() : path(std::filesystem::temp_directory_path() / ("gradyn_fuzz_" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline void write_file(const std::filesystem::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  write_file(path, text.data(), text.size());
}

/// Runs f; gradyn's own errors are the expected answer to bad input, anything else aborts.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const gradyn::ModelError&) {
  } catch (const gradyn::ArgumentError&) {
  } catch (const std::exception& e) {
#ifdef GRADYN_FUZZ_REPLAY
    throw std::logic_error(std::string("not a gradyn error (") + typeid(e).name() + "): " + e.what());
#else
    std::fprintf(stderr, "\n*** not a gradyn error (%s): %s\n", typeid(e).name(), e.what());
    std::abort();
#endif
  }
}

}  // namespace gradyn_fuzz
