// load(): pick the loader from the file extension.
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "gradyn/io/load.hpp"

namespace gradyn {

Model load(const std::string& path, const LoadOptions& options) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".urdf") return load_urdf(path, options);
  if (extension == ".xml" || extension == ".mjcf") return load_mjcf(path, options);
  throw ModelError(SourceLocation{path, 0, ""},
                   "cannot tell the model format from the extension '" + extension +
                       "' (expected .urdf for URDF, .xml or .mjcf for MJCF)");
}

}  // namespace gradyn
