// libFuzzer harness: mesh loading as both loaders do it for a collision mesh, read_mesh_vertices
// (Open Asset Import) then make_convex_hull (qhull). The first byte picks the file's extension
// among the formats model files use (STL, OBJ, Collada); the rest is the file.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../../src/io/mesh_file.hpp"
#include "fuzz_common.hpp"
#include "gradyn/collision/geometry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const kExtensions[] = {".stl", ".obj", ".dae", ".STL"};
  const std::filesystem::path path = gradyn_fuzz::temp_dir() / (std::string("mesh") + kExtensions[data[0] % 4]);
  gradyn_fuzz::write_file(path, reinterpret_cast<const char*>(data + 1), size - 1);
  gradyn_fuzz::expect_clean([&] {
    std::vector<gradyn::Vector3<double>> vertices;
    try {
      vertices = gradyn::io_detail::read_mesh_vertices(path.string(), gradyn::Vector3<double>(1, 1, 1));
    } catch (const std::runtime_error& e) {
      // read_mesh_vertices' documented answer; the loaders wrap it in a ModelError naming the element
      if (typeid(e) != typeid(std::runtime_error)) throw;
      return;
    }
    (void)gradyn::make_convex_hull(vertices);
  });
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return 0;
}
