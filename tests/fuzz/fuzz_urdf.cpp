// libFuzzer harness: the URDF loader on an in-memory document (parse_urdf_string, then build(),
// as load_urdf does, with and without a floating base). Its directory holds a fixed mesh (box.stl,
// tetrahedron.obj, and a 'meshes' package dir) so <mesh filename> paths in the seeds resolve.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "gradyn/io/load.hpp"

namespace {

const std::string& source_name() {
  static const std::string name = [] {
    const auto& dir = gradyn_fuzz::temp_dir();
    gradyn_fuzz::write_file(dir / "box.stl",
                            "solid box\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
                            "endloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 1 0 1\n"
                            "vertex 0 1 1\nendloop\nendfacet\nendsolid box\n");
    gradyn_fuzz::write_file(dir / "tetrahedron.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n");
    return (dir / "fuzz.urdf").string();
  }();
  return name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  gradyn::LoadOptions options;
  options.warnings = &warnings;
  options.urdf_effort_motors = (size % 2) == 0;
  gradyn_fuzz::expect_clean([&] {
    gradyn::ModelBuilder builder = gradyn::parse_urdf_string(xml, source_name(), options);
    gradyn::BuildOptions build;
    build.floating_base = (size % 3) == 0;
    (void)builder.build(build);
  });
  return 0;
}
