// Errors for bad input. Every message says where: the file, the line and the element when the
// input came from a file, the link or joint name when it came from the builder.
#pragma once

#include <stdexcept>
#include <string>

namespace gradyn {

/// Where a piece of a model came from: "robot.urdf:42 <joint name='knee'>", or just
/// "<joint name='knee'>" for models built in code.
struct SourceLocation {
  std::string file;     // empty when built in code
  int line = 0;         // 0 when unknown
  std::string element;  // e.g. "<joint name='knee'>"

  std::string str() const {
    std::string s;
    if (!file.empty()) {
      s.append(file);
      if (line > 0) s.append(":").append(std::to_string(line));
      s.append(": ");
    }
    if (!element.empty()) s.append(element).append(": ");
    return s;
  }
};

/// A model could not be built or loaded; what() names the file, line and element.
class ModelError : public std::runtime_error {
 public:
  ModelError(const SourceLocation& where, const std::string& what)
      : std::runtime_error(where.str() + what), where_(where) {}
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

/// An argument had the wrong size or value; what() names the expected and actual shapes.
class ArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace gradyn
