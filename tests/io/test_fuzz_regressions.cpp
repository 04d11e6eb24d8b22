// Replays every input the fuzzers found (tests/fuzz/regressions/<target>/, one file per finding, see
// scripts/fuzz.sh) through the libFuzzer harnesses' own entry points, compiled here without
// libFuzzer: each must load or fail with a gradyn error (ModelError / ArgumentError), without a
// crash, a hang or a leak (the asan preset checks the last two kinds of finding).
#include <gtest/gtest.h>

// The harnesses' non-gradyn exceptions become std::logic_error here instead of an abort.
#define GRADYN_FUZZ_REPLAY 1

// Everything the harnesses include, first, at namespace scope (they are included below inside
// namespaces of their own, where these includes are then no-ops).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "../../src/io/mesh_file.hpp"
#include "../fuzz/fuzz_common.hpp"
#include "gradyn/collision/geometry.hpp"
#include "gradyn/io/load.hpp"

namespace replay_urdf {
#define LLVMFuzzerTestOneInput fuzz_urdf_one_input
#include "../fuzz/fuzz_urdf.cpp"
#undef LLVMFuzzerTestOneInput
}  // namespace replay_urdf
namespace replay_mjcf {
#define LLVMFuzzerTestOneInput fuzz_mjcf_one_input
#include "../fuzz/fuzz_mjcf.cpp"
#undef LLVMFuzzerTestOneInput
}  // namespace replay_mjcf
namespace replay_mesh {
#define LLVMFuzzerTestOneInput fuzz_mesh_one_input
#include "../fuzz/fuzz_mesh.cpp"
#undef LLVMFuzzerTestOneInput
}  // namespace replay_mesh

// Open Asset Import 5.2.4 leaks its half-built meshes when it rejects a malformed STL or OBJ file
// (found by fuzz_mesh; inputs in tests/fuzz/regressions/mesh, see tests/fuzz/lsan.supp): not
// gradyn's leak, so an AddressSanitizer build of this binary must not fail on it. (LeakSanitizer
// reads this hook; other builds never call it.)
extern "C" const char* __lsan_default_suppressions() { return "leak:libassimp.so\n"; }

namespace {

namespace fs = std::filesystem;
using OneInput = int (*)(const uint8_t*, size_t);

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(GRADYN_TEST_DATA) / ".." / "fuzz" / "regressions" / target;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void replay(const std::string& target, OneInput one_input) {
  const std::vector<fs::path> files = inputs(target);
  if (files.empty()) GTEST_SKIP() << "no kept inputs in tests/fuzz/regressions/" << target;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NO_THROW(one_input(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}

TEST(FuzzRegressions, Urdf) { replay("urdf", replay_urdf::fuzz_urdf_one_input); }
TEST(FuzzRegressions, Mjcf) { replay("mjcf", replay_mjcf::fuzz_mjcf_one_input); }
TEST(FuzzRegressions, Mesh) { replay("mesh", replay_mesh::fuzz_mesh_one_input); }

// MJCF includes expand wherever the body tree meets them, and the loader recursed without bound:
// a file including itself from inside a <body> overflowed the stack (a segfault), and a chain of
// files each nesting ~100 bodies then including the next went as deep as the chain is long. These
// need several files, so they are written here rather than kept as single fuzz inputs.
class MjcfIncludeLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gradyn_include_limits_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  // <body> (or <default class>) elements nested n deep around `inner`, in a <mujoco> root.
  template <class Open>
  static std::string nested(Open open, const std::string& close, int n, const std::string& inner) {
    std::string s = "<mujoco>\n";
    for (int i = 0; i < n; ++i) s += open(i) + "\n";
    s += inner;
    for (int i = 0; i < n; ++i) s += close + "\n";
    return s + "</mujoco>\n";
  }
  std::string error_of(const std::string& main) {
    try {
      std::vector<std::string> warnings;
      gradyn::LoadOptions options;
      options.warnings = &warnings;
      (void)gradyn::load_mjcf((dir_ / main).string(), options);
    } catch (const gradyn::ModelError& e) {
      return e.what();
    }
    return "(loaded)";
  }
  fs::path dir_;
};

TEST_F(MjcfIncludeLimits, FileIncludingItselfFromInsideABody) {
  write("self.xml", nested([](int) { return std::string("<body><geom type='sphere' size='0.1'/>"); }, "</body>", 50, "<include file='self.xml'/>"));
  write("main.xml", "<mujoco><worldbody><include file='self.xml'/></worldbody></mujoco>");
  const std::string what = error_of("main.xml");
  EXPECT_NE(what.find("self.xml:"), std::string::npos) << what;
  EXPECT_NE(what.find("<include>"), std::string::npos) << what;
  EXPECT_NE(what.find("include cycle"), std::string::npos) << what;
}

TEST_F(MjcfIncludeLimits, TwoFilesIncludingEachOther) {
  write("a.xml", "<mujoco><worldbody><include file='b.xml'/></worldbody></mujoco>");
  write("b.xml", "<mujoco><body name='x'><include file='a.xml'/></body></mujoco>");
  const std::string what = error_of("a.xml");
  EXPECT_NE(what.find("b.xml:1: <include>: include cycle:"), std::string::npos) << what;
  EXPECT_NE(what.find("a.xml' -> '"), std::string::npos) << what;
}

TEST_F(MjcfIncludeLimits, BodiesNestedDeepThroughAChainOfFiles) {
  for (int k = 0; k < 40; ++k) {
    const std::string next = k < 39 ? "<include file='c" + std::to_string(k + 1) + ".xml'/>\n" : "";
    write("c" + std::to_string(k) + ".xml",
          nested([](int) { return std::string("<body><joint type='hinge'/><geom type='sphere' size='0.1'/>"); },
                 "</body>", 95, next));
  }
  write("main.xml", "<mujoco><worldbody><include file='c0.xml'/></worldbody></mujoco>");
  const std::string what = error_of("main.xml");
  EXPECT_NE(what.find("bodies nested more than 1000 deep"), std::string::npos) << what;
  EXPECT_NE(what.find("<body>"), std::string::npos) << what;
}

TEST_F(MjcfIncludeLimits, DefaultClassesNestedDeepThroughAChainOfFiles) {
  for (int k = 0; k < 40; ++k) {
    const std::string next = k < 39 ? "<include file='d" + std::to_string(k + 1) + ".xml'/>\n" : "";
    write("d" + std::to_string(k) + ".xml",
          nested([k](int i) { return "<default class='d" + std::to_string(k) + "_" + std::to_string(i) + "'>"; },
                 "</default>", 95, next));
  }
  write("main.xml", "<mujoco><default><include file='d0.xml'/></default><worldbody/></mujoco>");
  EXPECT_NE(error_of("main.xml").find("default classes nested more than 1000 deep"), std::string::npos);
}

TEST_F(MjcfIncludeLimits, IncludesThatMultiply) {
  // each file includes the next twice: 2^20 expansions without a limit
  for (int k = 0; k < 20; ++k) {
    const std::string next = "e" + std::to_string(k + 1) + ".xml";
    write("e" + std::to_string(k) + ".xml", "<mujoco><body><include file='" + next + "'/></body><body><include file='" +
                                                next + "'/></body></mujoco>");
  }
  write("e20.xml", "<mujoco/>");
  write("main.xml", "<mujoco><worldbody><include file='e0.xml'/></worldbody></mujoco>");
  EXPECT_NE(error_of("main.xml").find("more than 1000 <include> elements"), std::string::npos);
}

TEST_F(MjcfIncludeLimits, AFileIncludedTwiceWithoutACycleStillLoads) {
  write("part.xml", "<mujoco><geom type='sphere' size='0.1' mass='1'/></mujoco>");
  write("main.xml",
        "<mujoco><worldbody><body name='a'><joint type='hinge'/><include file='part.xml'/></body>"
        "<body name='b'><joint type='hinge'/><include file='part.xml'/></body></worldbody></mujoco>");
  EXPECT_EQ(error_of("main.xml"), "(loaded)");
}

// Found by fuzz_mjcf: contype="7777777777777777777" was converted to a 32-bit mask (undefined
// behaviour, UBSan's float-cast-overflow); group and inertiagrouprange had the same conversion.
std::string mjcf_error(const std::string& xml) {
  try {
    std::vector<std::string> warnings;
    gradyn::LoadOptions options;
    options.warnings = &warnings;
    (void)gradyn::parse_mjcf_string(xml, "whole.xml", options).build();
  } catch (const gradyn::ModelError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(MjcfWholeNumbers, CollisionMasksGroupsAndGroupRangesAreCheckedBeforeTheyAreConverted) {
  const auto geom = [](const std::string& attributes) {
    return "<mujoco>\n<worldbody>\n<body name='b'>\n<joint type='hinge'/>\n<geom type='sphere' size='0.1' " + attributes +
           "/>\n</body>\n</worldbody>\n</mujoco>";
  };
  EXPECT_EQ(mjcf_error(geom("contype='7777777777777777777'")),
            "whole.xml:5: <geom>: attribute 'contype' must be a whole number from 0 to 4294967295, got 7.777777778e+18");
  EXPECT_NE(mjcf_error(geom("conaffinity='4294967296'")).find("attribute 'conaffinity' must be a whole number"),
            std::string::npos);
  EXPECT_NE(mjcf_error(geom("contype='-1'")).find("whole.xml:5: <geom>: attribute 'contype'"), std::string::npos);
  EXPECT_NE(mjcf_error(geom("contype='0.5'")).find("attribute 'contype'"), std::string::npos);
  EXPECT_NE(mjcf_error(geom("group='1e19'")).find("whole.xml:5: <geom>: attribute 'group' must be a whole number"),
            std::string::npos);
  EXPECT_EQ(mjcf_error(geom("contype='4294967295' conaffinity='0' group='3'")), "(loaded)");
  EXPECT_NE(mjcf_error("<mujoco>\n<compiler inertiagrouprange='0 1e300'/>\n<worldbody/>\n</mujoco>")
                .find("whole.xml:2: <compiler>: attribute 'inertiagrouprange' must be a whole number"),
            std::string::npos);
}

}  // namespace
