// Mesh files through Open Asset Import (assimp, Debian libassimp-dev). One well-kept library for
// every format the loaders meet: MJCF meshes are STL or OBJ, URDF collision meshes are mostly
// STL and Collada (.dae); tinyobjloader would cover OBJ alone. Only vertex positions are used
// (a collision mesh becomes the convex hull of its vertices), so no post-processing is asked for.
#include "mesh_file.hpp"

#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <filesystem>
#include <stdexcept>

namespace gradyn::io_detail {

namespace {

void collect(const aiScene* scene, const aiNode* node, const aiMatrix4x4& parent, const Vector3<double>& scale,
             std::vector<Vector3<double>>& out) {
  const aiMatrix4x4 transform = parent * node->mTransformation;
  for (unsigned k = 0; k < node->mNumMeshes; ++k) {
    const aiMesh* mesh = scene->mMeshes[node->mMeshes[k]];
    for (unsigned i = 0; i < mesh->mNumVertices; ++i) {
      const aiVector3D v = transform * mesh->mVertices[i];
      out.emplace_back(v.x * scale.x(), v.y * scale.y(), v.z * scale.z());
    }
  }
  for (unsigned c = 0; c < node->mNumChildren; ++c) collect(scene, node->mChildren[c], transform, scale, out);
}

}  // namespace

std::vector<Vector3<double>> read_mesh_vertices(const std::string& path, const Vector3<double>& scale) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error("mesh file '" + path + "' not found");
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(path, 0);
  if (!scene || !scene->mRootNode || (scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE))
    throw std::runtime_error("cannot read mesh file '" + path + "': " + importer.GetErrorString());
  std::vector<Vector3<double>> vertices;
  collect(scene, scene->mRootNode, aiMatrix4x4(), scale, vertices);
  if (vertices.size() < 4)
    throw std::runtime_error("mesh file '" + path + "' has " + std::to_string(vertices.size()) +
                             " vertices; a collision mesh needs at least 4 (not all in a plane)");
  for (const Vector3<double>& v : vertices)
    if (!v.allFinite()) throw std::runtime_error("mesh file '" + path + "' has a vertex that is not finite");
  return vertices;
}

}  // namespace gradyn::io_detail
