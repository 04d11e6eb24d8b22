// MJCF loader: compares what gradyn makes of MuJoCo models with what MuJoCo's own compiler
// makes of them. The expected numbers below were printed by MuJoCo (the mujoco Python package)
// through tests/data/mjcf/dump_mujoco_inertias.py; each table names the command that made it.
//
// State mapping used here (documented at the top of src/io/mjcf.cpp): joints, q and v come in
// MuJoCo's order; quaternions are (w, x, y, z) in MuJoCo and (x, y, z, w) in gradyn.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"

namespace gradyn {
namespace {

const std::string kShared = GRADYN_MODELS;  // the copies the project ships (see models/README.md)
const std::string kData = GRADYN_TEST_DATA;

// mass, centre of mass (x, y, z), inertia about the centre of mass (xx, yy, zz, xy, xz, yz);
// all in the body frame.
struct BodyInertiaRow {
  const char* name;
  std::array<double, 10> v;
};
// World position (x, y, z) and rotation matrix (row-major) of a body.
struct BodyPoseRow {
  const char* name;
  std::array<double, 12> v;
};

// Produced by `.venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py --poses ../shared/models/mujoco/humanoid.xml` (mujoco 4.0.0).
const int kHumanoidNq = 28, kHumanoidNv = 27;
const double kHumanoidTotalMass = 40.84402122162133;
const std::vector<double> kHumanoidQpos0 = {0.0, 0.0, 1.282, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<BodyInertiaRow> kHumanoidInertias = {
    {"torso", {5.853834311188983, -0.0038640429338103748, 0, -0.046368515205724499, 0.051135400834394891, 0.031966749862616967, 0.03128813353431141, 0, -0.0016655049482587536, 0}},
    {"head", {3.0536280592892791, 0, 0, 0, 0.0098937549120972617, 0.0098937549120972617, 0.0098937549120972617, 0, 0, 0}},
    {"waist_lower", {2.2619467105846511, 0, 0, 0, 0.0098530398713067395, 0.0037457837527281818, 0.0098530398713067395, 0, 0, 1.356083272025756e-18}},
    {"pelvis", {6.6161941284601031, -0.02, 0, 0, 0.05231797918580651, 0.024322147492239099, 0.05231797918580651, 0, 0, 6.2163233879458459e-18}},
    {"thigh_right", {4.7517509288062421, 0, 0.0050000000000000001, -0.17000000000000001, 0.074951653865191953, 0.074893983837085079, 0.0082851013736339272, 0, 0, 0.0019607809556340598}},
    {"shin_right", {2.7556961671836424, 0, 0, -0.14999999999999999, 0.032608015464339946, 0.032608015464339946, 0.0031898902930933832, 0, 0, 0}},
    {"foot_right", {1.1311412323899843, 0.035000000000000003, 0, 0, 0.00090301723395368205, 0.0059437243765607297, 0.0064464615435264596, 0, 0, 0}},
    {"thigh_left", {4.7517509288062421, 0, -0.0050000000000000001, -0.17000000000000001, 0.074951653865191953, 0.074893983837085079, 0.0082851013736339272, 0, 0, -0.0019607809556340598}},
    {"shin_left", {2.7556961671836424, 0, 0, -0.14999999999999999, 0.032608015464339946, 0.032608015464339946, 0.0031898902930933832, 0, 0, 0}},
    {"foot_left", {1.1311412323899843, 0.035000000000000003, 0, 0, 0.00090301723395368205, 0.0059437243765607297, 0.0064464615435264596, 0, 0, 0}},
    {"upper_arm_right", {1.6610804848382084, 0.080000000000000002, -0.080000000000000002, -0.080000000000000002, 0.011032351978452417, 0.011032351978452417, 0.011032351978452417, 0.004873190401139431, 0.0048731904011394328, -0.0048731904011394328}},
    {"lower_arm_right", {0.96145761972475119, 0.090000000000000011, 0.090000000000000011, 0.090000000000000011, 0.0057510736819759737, 0.0057510736819759737, 0.0057510736819759737, -0.0026505427232131232, -0.0026505427232131232, -0.0026505427232131227}},
    {"hand_right", {0.26808257310632905, 0, 0, 0, 0.00017157284678805058, 0.00017157284678805058, 0.00017157284678805056, -1.9018639784552019e-20, -5.4661126284832132e-21, -5.4661126284832132e-21}},
    {"upper_arm_left", {1.6610804848382084, 0.080000000000000002, 0.080000000000000002, -0.080000000000000002, 0.011032351978452417, 0.011032351978452417, 0.011032351978452417, -0.004873190401139431, 0.0048731904011394328, 0.0048731904011394328}},
    {"lower_arm_left", {0.96145761972475119, 0.090000000000000011, -0.090000000000000011, 0.090000000000000011, 0.0057510736819759737, 0.0057510736819759737, 0.0057510736819759737, 0.0026505427232131232, -0.0026505427232131232, 0.0026505427232131227}},
    {"hand_left", {0.26808257310632905, 0, 0, 0, 0.00017157284678805058, 0.00017157284678805058, 0.00017157284678805056, 1.9018639784552019e-20, -5.4661126284832132e-21, 5.4661126284832132e-21}},
};
const std::vector<double> kHumanoidDofDamping = {0, 0, 0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 5, 5, 5, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001, 0.20000000000000001};
const std::vector<double> kHumanoidDofArmature = {0, 0, 0, 0, 0, 0, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01};
const std::vector<double> kHumanoidJntStiffness = {0, 20, 10, 10, 10, 10, 10, 1, 6, 3, 10, 10, 10, 1, 6, 3, 1, 1, 0, 1, 1, 0};
const std::vector<double> kHumanoidQposSpring = {0, 0, 1.282, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
const std::vector<double> kHumanoidJntRange = {-0.78539816339744828, 0.78539816339744828, -1.3089969389957472, 0.52359877559829882, -0.6108652381980153, 0.6108652381980153, -0.52359877559829882, 0.17453292519943295, -1.0471975511965976, 0.6108652381980153, -2.6179938779914944, 0.3490658503988659, -2.7925268031909272, 0.034906585039886591, -0.87266462599716477, 0.87266462599716477, -0.87266462599716477, 0.87266462599716477, -0.52359877559829882, 0.17453292519943295, -1.0471975511965976, 0.6108652381980153, -2.6179938779914944, 0.3490658503988659, -2.7925268031909272, 0.034906585039886591, -0.87266462599716477, 0.87266462599716477, -0.87266462599716477, 0.87266462599716477, -1.4835298641951802, 1.0471975511965976, -1.4835298641951802, 1.0471975511965976, -1.7453292519943295, 0.87266462599716477, -1.4835298641951802, 1.0471975511965976, -1.4835298641951802, 1.0471975511965976, -1.7453292519943295, 0.87266462599716477};
const std::vector<BodyPoseRow> kHumanoidPosesAtQpos0 = {
    {"torso", {0, 0, 1.282, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"head", {0, 0, 1.472, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"waist_lower", {-0.01, 0, 1.022, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"pelvis", {-0.01, 0, 0.85699999999999998, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"thigh_right", {-0.01, -0.10000000000000001, 0.81699999999999995, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"shin_right", {-0.01, -0.090000000000000011, 0.41699999999999993, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"foot_right", {-0.01, -0.090000000000000011, 0.02699999999999992, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"thigh_left", {-0.01, 0.10000000000000001, 0.81699999999999995, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"shin_left", {-0.01, 0.090000000000000011, 0.41699999999999993, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"foot_left", {-0.01, 0.090000000000000011, 0.02699999999999992, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"upper_arm_right", {0, -0.17000000000000001, 1.3420000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"lower_arm_right", {0.17999999999999999, -0.34999999999999998, 1.1620000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"hand_right", {0.35999999999999999, -0.16999999999999998, 1.3420000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"upper_arm_left", {0, 0.17000000000000001, 1.3420000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"lower_arm_left", {0.17999999999999999, 0.34999999999999998, 1.1620000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
    {"hand_left", {0.35999999999999999, 0.16999999999999998, 1.3420000000000001, 1, 0, 0, 0, 1, 0, 0, 0, 1}},
};
const std::vector<double> kHumanoidTestQpos = {0.10000000000000001, -0.20000000000000001, 1.5820000000000001, 0.8295613557843402, 0.20739033894608505, -0.31108550841912758, 0.4147806778921701, 0.40000000000000002, 0.5, 0.60000000000000009, 0.69999999999999996, 0.80000000000000004, 0.90000000000000013, 1, 1.1000000000000001, 1.2, 1.3, 1.4000000000000001, 1.5000000000000002, 1.6000000000000001, 1.7000000000000002, 1.8, 1.9000000000000001, 2, 2.1000000000000001, 2.2000000000000002, 2.2999999999999998, 2.3999999999999999};
const std::vector<BodyPoseRow> kHumanoidPosesAtTestQpos = {
    {"torso", {0.10000000000000001, -0.20000000000000001, 1.5820000000000001, 0.46236559139784938, -0.81720430107526876, -0.34408602150537637, 0.55913978494623651, 0.56989247311827951, -0.60215053763440851, 0.68817204301075263, 0.086021505376344065, 0.72043010752688164}},
    {"head", {0.034623655913978493, -0.31440860215053762, 1.7188817204301077, 0.46236559139784938, -0.81720430107526876, -0.34408602150537637, 0.55913978494623651, 0.56989247311827951, -0.60215053763440851, 0.68817204301075263, 0.086021505376344065, 0.72043010752688164}},
    {"waist_lower", {0.17874665418679364, -0.076788300327610901, 1.3727427093881179, 0.25942009003619815, -0.93274864799452939, -0.2503620908803651, 0.93540188385041578, 0.30716643959250622, -0.17513450281756657, 0.24025930278493654, -0.18875576296484467, 0.95217998790819769}},
    {"pelvis", {0.16301651475074863, -0.033606161567439431, 1.2216062525047913, 0.25942009003619804, -0.9111957491877779, 0.32003675343268739, 0.93540188385041578, 0.15462702345297685, -0.31798396077029639, 0.24025930278493651, 0.38185440979540403, 0.89244757669293917}},
    {"thigh_right", {0.24133461953221894, -0.036349505481925261, 1.1477229084575333, -0.75804283312490472, -0.52800373607122919, 0.38286174768810599, 0.63503472996790922, -0.73134102187136185, 0.24873922381228192, 0.14866726230933244, 0.43168549248611027, 0.88968853015787053}},
    {"shin_right", {0.073672475361610937, -0.13018444228075229, 0.80684609038791155, -0.087405238811820662, -0.52800373607122941, 0.84473213442077122, 0.5524175685296856, -0.73134102187136185, -0.39996892342768603, 0.82897234827706923, 0.43168549248611027, 0.35560157672460574}},
    {"foot_right", {-0.21590879366923307, -0.055302080255716993, 0.65676042421154435, -0.83363598711878717, 0.39348141609885146, 0.38758665633033296, 0.30407391242100967, -0.25885532503269654, 0.91680585539534865, 0.46107493617140505, 0.88213734525132725, 0.096143680746449522}},
    {"thigh_left", {0.059095469694663338, -0.0054241007913298882, 1.224093790416614, 0.83200175504786977, 0.16180356774716478, 0.53065307410920826, -0.076766851188337204, 0.98089906883163835, -0.17872847373558609, -0.54943601097479211, 0.10796583825225947, 0.82853089719973316}},
    {"shin_left", {-0.12722789797827239, 0.051044670458052548, 0.89767221056377799, 0.50613275145116032, 0.16180356774716476, -0.84714180830175412, -0.17641070907471523, 0.98089906883163835, 0.081952904091194836, 0.84422088320073763, 0.10796583825225946, 0.52500902672073446}},
    {"foot_left", {0.089645539608690789, 0.00016810056702386972, 0.71217327606893055, 0.81417536193537321, -0.23155136291060557, 0.53244947774567719, -0.56242935564709851, -0.08678097342123936, 0.82227871342899972, -0.14419327281046382, -0.96894428580094449, -0.20088621428536102}},
    {"upper_arm_right", {0.2182795698924731, -0.33301075268817204, 1.6106021505376344, 0.59103260922228618, -0.40252935611811957, 0.69903545854200333, -0.58010084788848593, -0.81425835269667213, 0.021594937896692118, 0.56050286450200804, -0.41827437469540774, -0.7147608595594821}},
    {"lower_arm_right", {0.27129434111618556, -0.29474949064410311, 1.9154390083138759, -0.11739876081881304, -0.98638257405960506, 0.1151822406005179, -0.19096519040697246, 0.136242523078351, 0.97209581367171538, -0.97455108999530471, 0.092127045414435504, -0.20435943944963894}},
    {"hand_right", {0.093346504146163523, -0.12962232430234621, 1.7198179811883845, -0.11739876081881304, -0.98638257405960506, 0.1151822406005179, -0.19096519040697246, 0.136242523078351, 0.97209581367171538, -0.97455108999530471, 0.092127045414435504, -0.20435943944963894}},
    {"upper_arm_left", {-0.059569892473118252, -0.13924731182795699, 1.6398494623655915, -0.72800221146670629, 0.68551317300770598, -0.0091907416725843238, 0.56857475141318603, 0.61119773182705628, 0.55059974996806482, 0.38306074212194963, 0.3956122119479743, -0.83471878234685259}},
    {"lower_arm_left", {-0.065563585894673135, -0.025996219838965065, 1.9302599749206113, 0.205016579457072, -0.26568569646505769, 0.94200812780017895, -0.44820653507554509, 0.83012174100271852, 0.33167574079240186, -0.87010292728118965, -0.49021322484046842, 0.051106654441590321}},
    {"hand_left", {0.18872428677534242, -0.19639367619042014, 1.8710790262807677, 0.205016579457072, -0.26568569646505769, 0.94200812780017895, -0.44820653507554509, 0.83012174100271852, 0.33167574079240186, -0.87010292728118965, -0.49021322484046842, 0.051106654441590321}},
};

// Produced by `.venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py ../shared/models/mujoco/ant.xml` (mujoco 4.0.0).
const int kAntNq = 15, kAntNv = 14;
const double kAntTotalMass = 0.9108800827073915;
const std::vector<double> kAntQpos0 = {0.0, 0.0, 0.75, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<BodyInertiaRow> kAntInertias = {
    {"torso", {0.32724923474893675, 0, 0, 0, 0.008181230868723419, 0.008181230868723419, 0.008181230868723419, 0, 0, 0}},
    {"front_left_leg", {0.039157753728466707, 0.10000000000000001, 0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, -0.0002247620925666143, 8.6067281901376752e-20, 8.1560522317769074e-20}},
    {"aux_1", {0.039157753728466707, 0.10000000000000001, 0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, -0.0002247620925666143, 8.6067281901376752e-20, 8.1560522317769074e-20}},
    {"body4", {0.067592204532680264, 0.20000000000000001, 0.20000000000000001, 0, 0.0014421114003356178, 0.0014421114003356178, 0.002674790660038181, -0.0012326792597025628, 5.6557598486091131e-19, 5.9961433791955327e-19}},
    {"front_right_leg", {0.039157753728466707, -0.10000000000000001, 0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, 0.0002247620925666143, -8.6067281901376752e-20, 8.1560522317769074e-20}},
    {"aux_2", {0.039157753728466707, -0.10000000000000001, 0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, 0.0002247620925666143, -8.6067281901376752e-20, 8.1560522317769074e-20}},
    {"body7", {0.067592204532680264, -0.20000000000000001, 0.20000000000000001, 0, 0.0014421114003356178, 0.0014421114003356178, 0.002674790660038181, 0.0012326792597025628, -5.6557598486091131e-19, 5.9961433791955327e-19}},
    {"back_leg", {0.039157753728466707, -0.10000000000000001, -0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, -0.0002247620925666143, -8.6067281901376752e-20, -8.1560522317769074e-20}},
    {"aux_3", {0.039157753728466707, -0.10000000000000001, -0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, -0.0002247620925666143, -8.6067281901376752e-20, -8.1560522317769074e-20}},
    {"body10", {0.067592204532680264, -0.20000000000000001, -0.20000000000000001, 0, 0.0014421114003356178, 0.0014421114003356178, 0.002674790660038181, -0.0012326792597025628, -5.6557598486091131e-19, -5.9961433791955327e-19}},
    {"right_back_leg", {0.039157753728466707, 0.10000000000000001, -0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, 0.0002247620925666143, 8.6067281901376752e-20, -8.1560522317769074e-20}},
    {"aux_4", {0.039157753728466707, 0.10000000000000001, -0.10000000000000001, 0, 0.00034320399062618572, 0.00034320399062618572, 0.00056796608319280002, 0.0002247620925666143, 8.6067281901376752e-20, -8.1560522317769074e-20}},
    {"body13", {0.067592204532680264, 0.20000000000000001, -0.20000000000000001, 0, 0.0014421114003356178, 0.0014421114003356178, 0.002674790660038181, 0.0012326792597025628, 5.6557598486091131e-19, -5.9961433791955327e-19}},
};

// Produced by `.venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py ../shared/models/mujoco/swimmer.xml` (mujoco 4.0.0).
const int kSwimmerNq = 5, kSwimmerNv = 5;
const double kSwimmerTotalMass = 106.81415022205297;
const std::vector<double> kSwimmerQpos0 = {0.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<BodyInertiaRow> kSwimmerInertias = {
    {"torso", {35.604716740684324, 1, 0, 0, 0.17383479349863523, 3.9175660390264717, 3.9175660390264717, 0, -8.3127532535872387e-16, 0}},
    {"mid", {35.604716740684324, -0.5, 0, 0, 0.17383479349863523, 3.9175660390264717, 3.9175660390264717, 0, -8.3127532535872387e-16, 0}},
    {"back", {35.604716740684324, -0.5, 0, 0, 0.17383479349863523, 3.9175660390264717, 3.9175660390264717, 0, -8.3127532535872387e-16, 0}},
};

// Produced by `.venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py ../shared/models/swimmer05/model.xml` (mujoco 4.0.0).
const int kSwimmer05Nq = 7, kSwimmer05Nv = 7;
const double kSwimmer05TotalMass = 0.05;
const std::vector<double> kSwimmer05Qpos0 = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<BodyInertiaRow> kSwimmer05Inertias = {
    {"head", {0.01, 0, 0, 0, 8.6666666666666678e-06, 3.3666666666666669e-07, 8.3366666666666693e-06, 0, 0, 0}},
    {"segment_0", {0.01, 0, 0, 0, 8.6666666666666678e-06, 3.3666666666666669e-07, 8.3366666666666693e-06, 0, 0, 0}},
    {"segment_1", {0.01, 0, 0, 0, 8.6666666666666678e-06, 3.3666666666666669e-07, 8.3366666666666693e-06, 0, 0, 0}},
    {"segment_2", {0.01, 0, 0, 0, 8.6666666666666678e-06, 3.3666666666666669e-07, 8.3366666666666693e-06, 0, 0, 0}},
    {"segment_3", {0.01, 0, 0, 0, 8.6666666666666678e-06, 3.3666666666666669e-07, 8.3366666666666693e-06, 0, 0, 0}},
};

// Produced by `.venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py --poses tests/data/mjcf/features.xml` (mujoco 4.0.0).
const int kFeaturesNq = 15, kFeaturesNv = 13;
const double kFeaturesTotalMass = 11.801756288612207;
const std::vector<double> kFeaturesQpos0 = {0.0, 0.0, 1.0, 0.9833474432563558, 0.1435721750273919, 0.10602051106179562, 0.034270798550482096, 0.3, 0.05, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<BodyInertiaRow> kFeaturesInertias = {
    {"base", {4.0000000000000009, 0, 0, 0, 0.016666666666666673, 0.056666666666666692, 0.066666666666666693, 0, 0, 0}},
    {"arm", {5.6799019517601028, 0.37809696890214728, 0.044524242225536824, 0.089048484451073648, 0.032825263762151571, 0.060221533788277007, 0.046153767381044986, -0.0055391304783830404, -0.011078260956766069, -0.0093785109381546872}},
    {"wrist", {0.5, 0.01, 0.02, 0.029999999999999999, 0.015223268698060944, 0.01772853185595568, 0.022048199445983376, -0.0033240997229916896, -0.0046238227146814413, -0.0037396121883656501}},
    {"body4", {0.20000000000000001, 0, 0, 0.050000000000000003, 0.0030000000000000287, 0.0040000000000000391, 0.0050000000000000487, 0.00010000000000000095, -0.00020000000000000237, 0.00030000000000000263}},
    {"welded", {1.4218543368521035, 0, 0.013174935573392565, 0.02634987114678513, 0.0057492692950019382, 0.01062294253108109, 0.0080633774149992087, 4.0510487985862214e-20, -1.5345066403115989e-10, -0.0017063767440545731}},
};
const std::vector<double> kFeaturesDofDamping = {0, 0, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.29999999999999999, 0.29999999999999999, 0.29999999999999999, 0.5};
const std::vector<double> kFeaturesDofArmature = {0, 0, 0, 0, 0, 0, 0.01, 0.01, 0.02, 0.01, 0.01, 0.01, 0.01};
const std::vector<double> kFeaturesJntStiffness = {0, 1, 1, 4, 1, 1};
const std::vector<double> kFeaturesQposSpring = {0, 0, 1, 0.98334744325635581, 0.14357217502739189, 0.10602051106179562, 0.034270798550482096, 0, 0, 0.20000000000000001, 1, 0, 0, 0, 0};
const std::vector<double> kFeaturesJntRange = {-1, 1};
const std::vector<BodyPoseRow> kFeaturesPosesAtQpos0 = {
    {"base", {0, 0, 1, 0.97517032720181596, -0.036957013524625069, 0.21835066314633444, 0.097843395007255696, 0.95642508584923258, -0.27509584731824377, -0.19866933079506122, 0.28962947762551561, 0.93629336358419923}},
    {"arm", {0.29255109816054475, 0.029353018502176708, 0.94039920076148165, -0.036957013524625049, -0.91341109020017353, 0.40535707647785146, 0.95642508584923225, -0.14989407675672628, -0.25056500336546805, 0.28962947762551561, 0.37843354245174765, 0.87914891778230153}},
    {"wrist", {0.27776829275069476, 0.41192305284186964, 1.0562509918116878, 0.15159630075833153, -0.72485777591721701, -0.67201173076720522, 0.73033579431073181, -0.37598336829522666, 0.57030354576653997, -0.66605419384979581, -0.57725012902356387, 0.47239189175659768}},
    {"body4", {0.14336594659725371, 0.5259837619951776, 1.1507293701630072, 0.35466575985305382, -0.92792723501193919, -0.11473118717660336, 0.34046522640736737, 0.01388719960813789, 0.94015454862188652, -0.87080171588900501, -0.37250260698435461, 0.32085227035915365}},
    {"welded", {-0.29255109816054475, -0.029353018502176708, 1.0596007992385184, 0.97517032720181596, 0.036957013524625069, -0.21835066314633444, 0.097843395007255696, -0.95642508584923258, 0.27509584731824377, -0.19866933079506122, -0.28962947762551561, -0.93629336358419923}},
};
const std::vector<double> kFeaturesTestQpos = {0.10000000000000001, -0.20000000000000001, 1.3, 0.8295613557843402, 0.20739033894608505, -0.31108550841912758, 0.4147806778921701, 0.69999999999999996, 0.55000000000000004, 0.60000000000000009, 0.92338051687663869, -0.10259783520851541, 0.30779350562554619, 0.20519567041703082, 0.80000000000000004};
const std::vector<BodyPoseRow> kFeaturesPosesAtTestQpos = {
    {"base", {0.10000000000000001, -0.20000000000000001, 1.3, 0.46236559139784938, -0.81720430107526876, -0.34408602150537637, 0.55913978494623651, 0.56989247311827951, -0.60215053763440851, 0.68817204301075263, 0.086021505376344065, 0.72043010752688164}},
    {"arm", {0.072207146326310312, -0.41566003385556055, 1.8083187390713069, -0.6606820712811815, -0.57583073757211034, -0.4815788225771222, 0.57387918578398556, -0.80100294284959139, 0.1704610385695341, -0.48390275966511881, -0.16374751055650816, 0.8596655582114644}},
    {"wrist", {-0.21516075092079512, -0.18995999309885017, 1.6372168047810352, 0.87126040841144736, 0.26607187622817002, -0.4124452174715319, 0.25465435225677363, -0.96341451996232441, -0.083568077651978573, -0.41959082641473572, -0.032221412231394686, -0.90714128942652239}},
    {"body4", {-0.29379952470287291, -0.19345313786759402, 1.4630706625571073, 0.79547097369488373, -0.60468503766133541, -0.039773549469754033, -0.51152056717992422, -0.7052045538383066, 0.49095136887235918, -0.32491943518485039, -0.37019257485020424, -0.870278586525564}},
    {"welded", {-0.038709677419354799, -0.36774193548387096, 1.0935483870967744, 0.46236559139784938, 0.81720430107526876, 0.34408602150537637, 0.55913978494623651, -0.56989247311827951, 0.60215053763440851, 0.68817204301075263, -0.086021505376344065, -0.72043010752688164}},
};

// MuJoCo qpos -> gradyn q: the same entries, with quaternions reordered from wxyz to xyzw.
Eigen::VectorXd q_from_mujoco(const Model& model, const std::vector<double>& qpos) {
  EXPECT_EQ(static_cast<int>(qpos.size()), model.nq);
  Eigen::VectorXd q(model.nq);
  for (int j = 0; j < model.nbodies(); ++j) {
    const int a = model.idx_q[j];
    for (int k = 0; k < model.joint_nq(j); ++k) q[a + k] = qpos[a + k];
    const int quat = model.joint_type[j] == JointType::Free ? a + 3 : model.joint_type[j] == JointType::Spherical ? a : -1;
    if (quat >= 0) {
      q[quat + 3] = qpos[quat];
      for (int k = 0; k < 3; ++k) q[quat + k] = qpos[quat + 1 + k];
    }
  }
  return q;
}

const LinkSpec* find_link(const ModelBuilder& b, const std::string& name) {
  for (const auto& l : b.links())
    if (l.name == name) return &l;
  return nullptr;
}
const JointSpec* find_joint(const ModelBuilder& b, const std::string& name) {
  for (const auto& j : b.joints())
    if (j.name == name) return &j;
  return nullptr;
}

// Every body's mass, centre of mass and inertia equal MuJoCo's, and so does the total mass.
void expect_inertias(const ModelBuilder& builder, const std::vector<BodyInertiaRow>& rows, double total_mass) {
  double total = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const LinkSpec* link = find_link(builder, row.name);
    ASSERT_NE(link, nullptr);
    if (row.v[0] == 0) {
      EXPECT_FALSE(link->inertia.has_value());
      continue;
    }
    ASSERT_TRUE(link->inertia.has_value());
    const Inertia<double>& I = *link->inertia;
    total += I.mass;
    EXPECT_NEAR(I.mass, row.v[0], 1e-12 * row.v[0]);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(I.com[k], row.v[1 + k], 1e-12);
    const double scale = std::max({row.v[4], row.v[5], row.v[6]});
    const Matrix3<double>& J = I.inertia_com;
    const std::array<double, 6> got = {J(0, 0), J(1, 1), J(2, 2), J(0, 1), J(0, 2), J(1, 2)};
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(got[k], row.v[4 + k], 1e-10 * scale) << "inertia entry " << k;
  }
  EXPECT_NEAR(total, total_mass, 1e-12 * total_mass);
}

// World poses of the bodies at MuJoCo's qpos equal mj_kinematics' xpos and xmat.
void expect_poses(const Model& model, const std::vector<double>& qpos, const std::vector<BodyPoseRow>& rows) {
  Data data(model);
  forward_kinematics<double>(model, data, q_from_mujoco(model, qpos));
  update_frames<double>(model, data);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const int f = model.frame_id(row.name);
    ASSERT_GE(f, 0);
    const Pose<double>& X = data.oMf[f];
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(X.p[k], row.v[k], 1e-12);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(X.R(r, c), row.v[3 + 3 * r + c], 1e-12);
  }
}

// Per-DoF damping and armature, per-joint stiffness, spring rest and limits equal MuJoCo's.
void expect_joint_parameters(const Model& model, const std::vector<double>& damping, const std::vector<double>& armature,
                             const std::vector<double>& stiffness, const std::vector<double>& qpos_spring,
                             const std::vector<double>& limited_ranges) {
  ASSERT_EQ(static_cast<int>(damping.size()), model.nv);
  for (int i = 0; i < model.nv; ++i) {
    EXPECT_DOUBLE_EQ(model.damping[i], damping[i]) << "dof " << i;
    EXPECT_DOUBLE_EQ(model.armature[i], armature[i]) << "dof " << i;
  }
  ASSERT_EQ(static_cast<int>(stiffness.size()), model.nbodies());
  std::vector<double> ranges;
  for (int j = 0; j < model.nbodies(); ++j) {
    SCOPED_TRACE(model.joint_names[j]);
    for (int k = 0; k < model.joint_nv(j); ++k) EXPECT_DOUBLE_EQ(model.stiffness[model.idx_v[j] + k], stiffness[j]);
    const int a = model.idx_q[j];
    if (model.joint_nq(j) == 1) {
      EXPECT_NEAR(model.q_rest[a], qpos_spring[a], 1e-15);
      if (std::isfinite(model.lower_limit[a])) {
        ranges.push_back(model.lower_limit[a]);
        ranges.push_back(model.upper_limit[a]);
      }
    }
  }
  ASSERT_EQ(ranges.size(), limited_ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) EXPECT_NEAR(ranges[i], limited_ranges[i], 1e-15);
}

void expect_q0(const Model& model, const std::vector<double>& qpos0) {
  const Eigen::VectorXd expected = q_from_mujoco(model, qpos0);
  for (int i = 0; i < model.nq; ++i) EXPECT_NEAR(model.q0[i], expected[i], 1e-15) << "q0[" << i << "]";
}

TEST(Mjcf, HumanoidMatchesMujoco) {
  const std::string path = kShared + "/mujoco/humanoid.xml";
  const Model model = load_mjcf(path);
  EXPECT_EQ(model.nq, kHumanoidNq);
  EXPECT_EQ(model.nv, kHumanoidNv);
  EXPECT_EQ(model.source, path);
  EXPECT_EQ(model.name, "Humanoid");
  EXPECT_EQ(model.joint_names[0], "root");
  EXPECT_EQ(model.joint_type[0], JointType::Free);
  expect_inertias(parse_mjcf(path), kHumanoidInertias, kHumanoidTotalMass);
  expect_q0(model, kHumanoidQpos0);
  expect_joint_parameters(model, kHumanoidDofDamping, kHumanoidDofArmature, kHumanoidJntStiffness,
                          kHumanoidQposSpring, kHumanoidJntRange);
  expect_poses(model, kHumanoidQpos0, kHumanoidPosesAtQpos0);
  expect_poses(model, kHumanoidTestQpos, kHumanoidPosesAtTestQpos);
  EXPECT_EQ(model.gravity, Vector3<double>(0, 0, -9.81));
}

TEST(Mjcf, AntMatchesMujoco) {
  const std::string path = kShared + "/mujoco/ant.xml";
  const Model model = load_mjcf(path);
  EXPECT_EQ(model.nq, kAntNq);
  EXPECT_EQ(model.nv, kAntNv);
  expect_inertias(parse_mjcf(path), kAntInertias, kAntTotalMass);
  expect_q0(model, kAntQpos0);
  // Bodies without joints are welded: their mass joins the body they hang from.
  double model_mass = 0;
  for (const auto& I : model.body_inertia) model_mass += I.mass;
  EXPECT_NEAR(model_mass, kAntTotalMass, 1e-12);
  EXPECT_EQ(model.nbodies(), 9);  // free + 8 hinges
}

TEST(Mjcf, SwimmerMatchesMujoco) {
  const std::string path = kShared + "/mujoco/swimmer.xml";
  std::vector<std::string> warnings;
  const Model model = load_mjcf(path, {.warnings = &warnings});
  // its <option density viscosity>: MuJoCo's fluid forces, which gradyn says it does not simulate
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("swimmer.xml:3"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("fluid forces (option density, viscosity, wind) are not simulated"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(model.nq, kSwimmerNq);
  EXPECT_EQ(model.nv, kSwimmerNv);
  expect_inertias(parse_mjcf(path), kSwimmerInertias, kSwimmerTotalMass);
  // slide, slide, hinge on one body: a chain of two massless links, then the torso.
  EXPECT_EQ(model.joint_type[0], JointType::Prismatic);
  EXPECT_EQ(model.joint_type[1], JointType::Prismatic);
  EXPECT_EQ(model.joint_type[2], JointType::Continuous);  // not limited
  EXPECT_EQ(model.joint_type[3], JointType::Revolute);
  EXPECT_EQ(model.body_names[0], "torso/slider1");
  EXPECT_EQ(model.body_names[2], "torso");
  EXPECT_NEAR(model.upper_limit[3], 100 * std::numbers::pi / 180, 1e-15);
}

TEST(Mjcf, IncludesOfAssetsAndVisualsLoad) {
  // swimmer05/model.xml includes common/{visual,skybox,materials}.xml: irrelevant to dynamics.
  const std::string path = kShared + "/swimmer05/model.xml";
  const Model model = load_mjcf(path);
  EXPECT_EQ(model.nq, kSwimmer05Nq);
  EXPECT_EQ(model.nv, kSwimmer05Nv);
  expect_inertias(parse_mjcf(path), kSwimmer05Inertias, kSwimmer05TotalMass);
}

TEST(Mjcf, FeaturesMatchMujoco) {
  // Included default classes with nesting, class and childclass, partial size overlays,
  // radians and eulerseq="zyx", every orientation specifier, hinge/slide/ball joints composed
  // in one body with anchors and ref, explicit diaginertia/fullinertia, inertiagrouprange.
  const std::string path = kData + "/mjcf/features.xml";
  const Model model = load_mjcf(path);
  EXPECT_EQ(model.nq, kFeaturesNq);
  EXPECT_EQ(model.nv, kFeaturesNv);
  expect_inertias(parse_mjcf(path), kFeaturesInertias, kFeaturesTotalMass);
  expect_q0(model, kFeaturesQpos0);
  expect_joint_parameters(model, kFeaturesDofDamping, kFeaturesDofArmature, kFeaturesJntStiffness,
                          kFeaturesQposSpring, kFeaturesJntRange);
  expect_poses(model, kFeaturesQpos0, kFeaturesPosesAtQpos0);
  expect_poses(model, kFeaturesTestQpos, kFeaturesPosesAtTestQpos);
  EXPECT_EQ(model.gravity, Vector3<double>(0.5, 0, -3));
}

TEST(Mjcf, DefaultClassInheritance) {
  const ModelBuilder b = parse_mjcf(kData + "/mjcf/features.xml");
  const JointSpec* arm_x = find_joint(b, "arm_x");   // childclass limb
  const JointSpec* arm_y = find_joint(b, "arm_y");   // class stiff, nested in limb
  const JointSpec* ball = find_joint(b, "wrist_ball");  // limb, own damping
  ASSERT_TRUE(arm_x && arm_y && ball);
  EXPECT_EQ(arm_x->damping, 0.5);    // limb
  EXPECT_EQ(arm_x->stiffness, 1);    // limb
  EXPECT_EQ(arm_x->armature, 0.01);  // main, inherited through limb
  EXPECT_EQ(arm_y->damping, 0.5);    // limb, inherited by stiff
  EXPECT_EQ(arm_y->stiffness, 4);    // stiff
  EXPECT_EQ(arm_y->armature, 0.02);  // stiff
  EXPECT_EQ(ball->damping, 0.3);     // the element's own value
  EXPECT_EQ(ball->type, JointType::Spherical);
  EXPECT_EQ(find_joint(b, "root")->damping, 0);  // <freejoint> takes no defaults
}

TEST(Mjcf, AngleUnits) {
  // axisangle and euler together are rejected, so test them on separate bodies.
  auto body = [](const std::string& compiler, const std::string& orient, const std::string& range) {
    return "<mujoco>" + compiler + "<worldbody><body name='a' " + orient + "><joint name='j' range='" + range +
           "' ref='" + range.substr(0, range.find(' ')) + "'/><geom size='.1'/></body></worldbody></mujoco>";
  };
  const double d = std::numbers::pi / 180;
  for (const auto& [deg, rad] : std::vector<std::pair<std::string, std::string>>{
           {"euler='10 20 30'", "euler='" + std::to_string(10 * d) + " " + std::to_string(20 * d) + " " +
                                    std::to_string(30 * d) + "'"},
           {"axisangle='1 2 3 40'", "axisangle='1 2 3 " + std::to_string(40 * d) + "'"}}) {
    SCOPED_TRACE(deg);
    // The default angle unit is the degree.
    const ModelBuilder a = parse_mjcf_string(body("", deg, "-30 45"));
    const ModelBuilder b = parse_mjcf_string(body("<compiler angle='radian'/>", rad, "-0.5235987755982988 0.7853981633974483"));
    const JointSpec& ja = a.joints()[0];
    const JointSpec& jb = b.joints()[0];
    EXPECT_NEAR(ja.lower, -30 * d, 1e-15);
    EXPECT_NEAR(ja.upper, 45 * d, 1e-15);
    EXPECT_NEAR(ja.reference, -30 * d, 1e-15);
    EXPECT_NEAR(jb.lower, ja.lower, 1e-15);
    EXPECT_NEAR(jb.reference, ja.reference, 1e-15);
    EXPECT_LT((ja.origin.R - jb.origin.R).norm(), 1e-6);  // std::to_string keeps 6 decimals
  }
  // MuJoCo's quaternion for euler="10 20 30" (degrees, eulerseq xyz): 0.943714 0.127679 0.144878 0.268536.
  const ModelBuilder e = parse_mjcf_string(body("", "euler='10 20 30'", "-1 1"));
  const Matrix3<double> R = Eigen::Quaterniond(0.943714, 0.127679, 0.144878, 0.268536).normalized().toRotationMatrix();
  EXPECT_LT((e.joints()[0].origin.R - R).norm(), 1e-5);
}

// Expects parsing `xml` (named "bad.xml") to fail with a message naming the file, line and element.
void expect_error(const std::string& xml, int line, const std::string& element, const std::string& words) {
  try {
    parse_mjcf_string(xml, "bad.xml").build();
    ADD_FAILURE() << "no error for:\n" << xml;
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.xml:" + std::to_string(line) + ":"), std::string::npos) << what;
    EXPECT_NE(what.find(element), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
    EXPECT_EQ(e.where().line, line);
  }
}

TEST(Mjcf, BadInputNamesFileLineAndElement) {
  const std::string head = "<mujoco>\n<worldbody>\n<body name='b'>\n";
  const std::string tail = "<geom size='.1'/>\n</body>\n</worldbody>\n</mujoco>\n";
  expect_error(head + "<joint name='j' type='screw'/>\n" + tail, 4, "<joint name='j'>", "'screw'");
  expect_error(head + "<inertial pos='0 0 0' mass='-1' diaginertia='1 1 1'/>\n" + tail, 4, "<inertial>", "mass");
  expect_error(head + "<inertial pos='0 0 0' mass='1' diaginertia='1 1 5'/>\n" + tail, 4, "<inertial>",
               "triangle inequality");
  expect_error(head + "<inertial pos='0 0 0' mass='1' fullinertia='1 1 1 2 0 0'/>\n" + tail, 4, "<inertial>",
               "not positive semidefinite");
  expect_error(head + "<joint name='j' pos='0 0 abc'/>\n" + tail, 4, "<joint name='j'>", "'0 0 abc'");
  expect_error(head + "<joint name='j' axis='0 0'/>\n" + tail, 4, "<joint name='j'>", "expects 3 numbers");
  expect_error(head + "<joint name='j' class='nope'/>\n" + tail, 4, "<joint name='j'>", "unknown default class 'nope'");
  expect_error(head + "<geom type='box' size='.1 .1 .1' mass='-2'/>\n" + tail, 4, "<geom>", "mass");
  expect_error(head + "<joint name='j' damping='-1'/>\n" + tail, 4, "<joint name='j'>", "damping");
  expect_error(head + "<body name='c'><freejoint name='f'/><geom size='1'/></body>\n" + tail, 4, "<freejoint name='f'>",
               "top-level");
  expect_error(head + "<joint name='j' stiffness='1' type='free'/>\n" + tail, 4, "<joint name='j'>", "stiffness");
  expect_error("<mujoco>\n<worldbody>\n<body name='b' pos='1 2'>\n" + tail, 3, "<body name='b'>", "expects 3 numbers");
  expect_error("<mujoco>\n<compiler angle='gradian'/>\n</mujoco>\n", 2, "<compiler>", "'gradian'");
  expect_error("<robot name='r'>\n</robot>\n", 1, "<robot name='r'>", "<mujoco>");
  expect_error("<mujoco>\n<include file='missing_file.xml'/>\n</mujoco>\n", 2, "<include>", "missing_file.xml");
  // Malformed XML: the line comes from tinyxml2, which names the element left unclosed (line 3).
  try {
    parse_mjcf_string("<mujoco>\n<worldbody>\n<body name='b'>\n</worldbody>\n</mujoco>\n", "bad.xml");
    ADD_FAILURE() << "no error for malformed XML";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed XML"), std::string::npos) << e.what();
  }
}

TEST(Mjcf, ErrorsInIncludedFilesNameThatFile) {
  try {
    parse_mjcf(kData + "/mjcf/bad_include.xml");
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.where().file, kData + "/mjcf/bad_included.xml") << e.what();
    EXPECT_EQ(e.where().line, 4) << e.what();
    EXPECT_EQ(e.where().element, "<joint name='twist'>") << e.what();
  }
}

TEST(Mjcf, FloatingBaseOptionIsRejected) {
  LoadOptions options;
  options.floating_base = true;
  EXPECT_THROW(load_mjcf(kShared + "/mujoco/ant.xml", options), ModelError);
}

}  // namespace
}  // namespace gradyn
