// Shared by the libFuzzer harnesses: a private temporary directory, and the rule that a loader
// either succeeds or throws a gradyn error (ModelError / ArgumentError). Any other exception
// escaping a loader is a finding (abort), as are crashes, leaks, hangs and sanitizer reports.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "gradyn/model/errors.hpp"

namespace gradyn_fuzz {

/// A directory of this process's own under $TMPDIR, made once.
inline const std::filesystem::path& temp_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("gradyn_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
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
    std::fprintf(stderr, "\n*** not a gradyn error (%s): %s\n", typeid(e).name(), e.what());
    std::abort();
  }
}

}  // namespace gradyn_fuzz
