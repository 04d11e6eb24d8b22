// Private to src/io: reading the vertices of a mesh file for collision hulls.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn::io_detail {

/// The vertices of every mesh in the file at `path` (STL, OBJ, Collada and the other formats
/// Open Asset Import reads), with the file's node transforms applied, each multiplied by `scale`
/// component-wise. Throws std::runtime_error saying why when the file cannot be read or holds
/// fewer than 4 vertices; the loaders turn it into a ModelError naming the element.
std::vector<Vector3<double>> read_mesh_vertices(const std::string& path, const Vector3<double>& scale);

/// True when `file` lies outside the folder `dir` (after resolving "..", links where they exist):
/// a model file's mesh path that escapes its folder is read, with a warning.
inline bool outside(const std::filesystem::path& file, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path f = fs::weakly_canonical(fs::absolute(file, ec), ec);
  const fs::path d = fs::weakly_canonical(fs::absolute(dir.empty() ? fs::path(".") : dir, ec), ec);
  if (ec) return false;
  const fs::path rel = f.lexically_relative(d);
  return rel.empty() || *rel.begin() == "..";
}

}  // namespace gradyn::io_detail
