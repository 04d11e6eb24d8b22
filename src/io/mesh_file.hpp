// Private to src/io: reading the vertices of a mesh file for collision hulls.
#pragma once

#include <string>
#include <vector>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn::io_detail {

/// The vertices of every mesh in the file at `path` (STL, OBJ, Collada and the other formats
/// Open Asset Import reads), with the file's node transforms applied, each multiplied by `scale`
/// component-wise. Throws std::runtime_error saying why when the file cannot be read or holds
/// fewer than 4 vertices; the loaders turn it into a ModelError naming the element.
std::vector<Vector3<double>> read_mesh_vertices(const std::string& path, const Vector3<double>& scale);

}  // namespace gradyn::io_detail
