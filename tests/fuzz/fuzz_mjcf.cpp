// libFuzzer harness: the MJCF loader with includes and assets. The input is the main file, parsed
// in a directory that holds a fixed included file (included.xml: defaults and a body), a second
// include (parts.xml), meshes (box.stl, tetrahedron.obj, and the same in meshes/ for
// <compiler meshdir>). An input containing the line "<!--FUZZ-INCLUDE-->" is split there: the part
// after it is written as fuzz_include.xml, so included files are fuzzed too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "gradyn/io/load.hpp"

namespace {

const char kStl[] =
    "solid box\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
    "endloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 1 0 1\n"
    "vertex 0 1 1\nendloop\nendfacet\nendsolid box\n";
const char kObj[] = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n";

const std::filesystem::path& dir() {
  static const std::filesystem::path d = [] {
    const auto& d = gradyn_fuzz::temp_dir();
    std::filesystem::create_directories(d / "meshes");
    for (const auto& sub : {d, d / "meshes"}) {
      gradyn_fuzz::write_file(sub / "box.stl", kStl);
      gradyn_fuzz::write_file(sub / "tetrahedron.obj", kObj);
    }
    gradyn_fuzz::write_file(d / "included.xml",
                            "<mujoco>\n  <default>\n    <joint damping='0.1'/>\n    <default class='arm'>\n"
                            "      <geom type='capsule' size='0.02' fromto='0 0 0 0 0 0.2'/>\n    </default>\n"
                            "  </default>\n  <asset>\n    <mesh name='tet' file='tetrahedron.obj'/>\n  </asset>\n"
                            "</mujoco>\n");
    gradyn_fuzz::write_file(d / "parts.xml",
                            "<mujoco>\n  <body name='inc_body' pos='0 0 1'>\n    <joint name='inc_hinge' type='hinge'/>\n"
                            "    <geom type='sphere' size='0.1' mass='1'/>\n  </body>\n</mujoco>\n");
    return d;
  }();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string xml(reinterpret_cast<const char*>(data), size);
  const auto& d = dir();
  static const std::string marker = "<!--FUZZ-INCLUDE-->";
  if (const size_t at = xml.find(marker); at != std::string::npos) {
    gradyn_fuzz::write_file(d / "fuzz_include.xml", xml.substr(at + marker.size()));
    xml.resize(at);
  } else {
    std::error_code ec;
    std::filesystem::remove(d / "fuzz_include.xml", ec);
  }
  std::vector<std::string> warnings;
  gradyn::LoadOptions options;
  options.warnings = &warnings;
  gradyn_fuzz::expect_clean([&] {
    gradyn::ModelBuilder builder = gradyn::parse_mjcf_string(xml, (d / "fuzz.xml").string(), options);
    (void)builder.build();
  });
  return 0;
}
