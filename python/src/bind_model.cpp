// gradyn.Model, gradyn.ModelBuilder and gradyn.load.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "common.hpp"

namespace gradyn::python {

namespace {

int joint_or_raise(const Model& model, const std::string& name) {
  const int j = model.joint_id(name);
  if (j < 0) throw nb::key_error(("no joint named '" + name + "' (model '" + model.name + "')").c_str());
  return j;
}

JointType parse_joint_type(const std::string& t) {
  std::optional<JointType> found;
  std::string expected;  // the registered joint kinds (joint.hpp)
  for_each_joint_type([&](JointType type) {
    if (joint_type_name(type) == t) found = type;
    expected += (expected.empty() ? "'" : ", '") + std::string(joint_type_name(type)) + "'";
  });
  if (found) return *found;
  throw ArgumentError("type: expected one of " + expected + ", got '" + t + "'");
}

/// 3x3 symmetric matrix, or the 6 numbers (ixx, iyy, izz, ixy, ixz, iyz).
Matrix3<double> inertia_arg(nb::handle h) {
  const ConstArray a = as_array(h, "inertia");
  const double* d = a.data();
  Matrix3<double> I;
  if (a.ndim() == 2 && a.shape(0) == 3 && a.shape(1) == 3) {
    I = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d);
  } else if (a.ndim() == 1 && a.shape(0) == 6) {
    I << d[0], d[3], d[4],  //
        d[3], d[1], d[5],   //
        d[4], d[5], d[2];
  } else {
    throw ArgumentError("inertia: expected shape (3, 3) or (6,) (ixx, iyy, izz, ixy, ixz, iyz), got " +
                        shape_string(a));
  }
  return I;
}

InertiaPolicy parse_inertia_policy(const std::string& s) {
  if (s == "strict") return InertiaPolicy::Strict;
  if (s == "repair") return InertiaPolicy::Repair;
  if (s == "accept") return InertiaPolicy::Accept;
  throw ArgumentError("inertia: expected 'strict', 'repair' or 'accept', got '" + s + "'");
}

std::unique_ptr<PyModel> load_file(nb::handle path_like, bool floating_base, std::optional<std::string> contact,
                                   bool urdf_effort_motors, const std::string& inertia) {
  ContactModel contact_model = ContactModel::None;  // checked before the (slow) load
  if (contact) contact_model = parse_contact_model(*contact, "contact");
  const InertiaPolicy inertia_policy = parse_inertia_policy(inertia);
  const std::string path = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(path_like)));
  std::vector<std::string> warnings;
  LoadOptions options;
  options.floating_base = floating_base;
  options.urdf_effort_motors = urdf_effort_motors;
  options.inertia = inertia_policy;
  options.warnings = &warnings;
  Model model = load(path, options);
  model.contact.model = contact_model;
  // Couplings and loops change the machine: without a contact model step() moves it without them,
  // so the load says so (dry friction and joint limits are left unenforced without a word, as
  // documented: the plain articulated dynamics the Pinocchio and MuJoCo comparisons check).
  if (contact_model == ContactModel::None && (!model.joint_couplings.empty() || !model.body_connections.empty())) {
    std::string what;
    if (!model.joint_couplings.empty()) what += std::to_string(model.joint_couplings.size()) + " joint coupling(s)";
    if (!model.body_connections.empty())
      what += std::string(what.empty() ? "" : " and ") + std::to_string(model.body_connections.size()) +
              " body connection(s) (closed loops and welds)";
    warnings.push_back(path + ": its " + what + " are enforced by the contact models 'pgs', 'ipm' and 'penalty' "
                       "(as stiff springs); with none (contact=None, the default) the model moves without them: load "
                       "it with contact='pgs', or use Model.with_contact(model='pgs')");
  }
  for (const std::string& w : warnings)
    if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1) != 0) throw nb::python_error();  // warnings as errors
  return std::make_unique<PyModel>(std::move(model));
}

// Property getters default to rv_policy::reference_internal, which a NumPy array that owns its
// buffer cannot take: hand them a finished Python object instead.
nb::object owned(NumpyArray a) { return nb::cast(std::move(a), nb::rv_policy::move); }

std::string model_repr(const Model& m) {
  std::ostringstream s;
  s << "gradyn.Model(";
  if (!m.name.empty()) s << "name='" << m.name << "', ";
  s << "nq=" << m.nq << ", nv=" << m.nv << ", nbodies=" << m.nbodies();
  if (m.nu() > 0) s << ", nu=" << m.nu();
  if (!m.networks.empty()) s << ", networks=" << m.networks.size();
  if (!m.source.empty()) s << ", source='" << m.source << "'";
  s << ")";
  return s.str();
}

}  // namespace

void bind_model(nb::module_& m) {
  using VecGetter = const Eigen::VectorXd Model::*;
  auto vector_property = [](VecGetter field) {
    return [field](const PyModel& self) { return owned(to_numpy(self.model.*field)); };
  };

  // Model.with_damping & co: a copy with one per-DoF parameter vector replaced.
  using VecField = Eigen::VectorXd Model::*;
  auto with_dof_parameter = [](VecField field, const char* name) {
    return [field, name](const PyModel& self, nb::handle values) {
      VectorArg x(values, name, self.model.nv);
      if (!(x.x.array() >= 0).all() || !x.x.allFinite())
        throw ArgumentError(std::string(name) + ": expected non-negative finite values (one per DoF)");
      Model copy = self.model;
      copy.*field = x.x;
      return std::make_unique<PyModel>(std::move(copy));
    };
  };

  nb::class_<PyModel>(m, "Model", R"doc(
An immutable robot model: topology, inertias, joint placements and joint parameters.

Create one with :func:`gradyn.load` or :class:`gradyn.ModelBuilder`. Every algorithm
(``gradyn.aba(model, q, v, tau)`` ...) takes it first. A Model owns one workspace that the
algorithms reuse, so calls do not allocate one each time.

Bodies are numbered parent-first; body i moves with joint i. ``joint_names`` lists the moving
joints in the order their entries appear in q and v (fixed joints are merged away; the links
they weld remain as frames). Per joint, q / v hold::

    revolute, continuous  q = [angle]                      v = [rate]
    prismatic             q = [displacement]               v = [rate]
    spherical             q = [qx, qy, qz, qw]             v = [wx, wy, wz]  (child frame)
    free                  q = [x, y, z, qx, qy, qz, qw]    v = [vx, vy, vz, wx, wy, wz]
                          (v: linear then angular velocity, both in the body frame)
    planar                q = [x, y, theta]                v = [vx, vy, wz]  (child frame)

Models pickle (``pickle`` with protocol 2 or later, the default being 4; ``copy.deepcopy``,
``multiprocessing``, Ray): the state is gradyn's versioned binary model format
(``model.__getstate__()``, include/gradyn/model/serialize.hpp), which holds every field of the C++
model bit for bit (bodies, joints, limits, frames, actuators, networks and their weights,
geoms with their convex hulls, exclusions, contact settings, gravity, name, source and the
file locations used in messages), so an unpickled model gives bit-identical rollouts and
gradients. The workspace is not pickled; the copy allocates its own. Bytes from another
format version, truncated or changed bytes raise gradyn.ModelError saying which.
)doc")
      .def_prop_ro("nq", [](const PyModel& s) { return s.model.nq; }, "Size of the configuration q.")
      .def_prop_ro("nv", [](const PyModel& s) { return s.model.nv; }, "Size of the velocity v (and of tau, a).")
      .def_prop_ro("nbodies", [](const PyModel& s) { return s.model.nbodies(); },
                   "Number of moving bodies (= moving joints).")
      .def_prop_ro("nframes", [](const PyModel& s) { return static_cast<int>(s.model.frames.size()); },
                   "Number of named frames (links, joints, sites).")
      .def_prop_ro("name", [](const PyModel& s) { return s.model.name; }, "Model name from the file, or ''.")
      .def_prop_ro("source", [](const PyModel& s) { return s.model.source; }, "File it was loaded from, or ''.")
      .def_prop_ro("joint_names", [](const PyModel& s) { return s.model.joint_names; },
                   "Moving joints, in the order of their entries in q and v.")
      .def_prop_ro("body_names", [](const PyModel& s) { return s.model.body_names; },
                   "For each body, the link that starts it.")
      .def_prop_ro("parents", [](const PyModel& s) { return s.model.parent; },
                   "Parent body of each body; -1 is the world.")
      .def_prop_ro("frame_names",
                   [](const PyModel& s) {
                     std::vector<std::string> names;
                     for (const Frame& f : s.model.frames) names.push_back(f.name);
                     return names;
                   },
                   "Every named frame: links (including welded ones), joints, MJCF sites, and the geoms that "
                   "MJCF sensors read.")
      .def_prop_ro("sensor_names",
                   [](const PyModel& s) {
                     std::vector<std::string> names;
                     for (const Sensor& x : s.model.sensors) names.push_back(x.name);
                     return names;
                   },
                   "The sensors (MJCF <sensor>), in the order of their readings in gradyn.sensors.")
      .def_prop_ro("sensor_types",
                   [](const PyModel& s) {
                     std::vector<std::string> kinds;
                     for (const Sensor& x : s.model.sensors) kinds.push_back(sensor_kind_name(x.kind));
                     return kinds;
                   },
                   "Each sensor's MJCF type: 'jointpos', 'jointvel', 'framepos', 'framequat', 'framelinvel', "
                   "'frameangvel', 'gyro', 'accelerometer' or 'touch'.")
      .def_prop_ro("sensor_slices",
                   [](const PyModel& s) {
                     nb::dict out;
                     for (const Sensor& x : s.model.sensors)
                       out[nb::str(x.name.c_str())] = nb::slice(x.adr, x.adr + x.dim());
                     return out;
                   },
                   "{name: slice} of each sensor's entries in the readings: readings[..., model.sensor_slices['imu']].")
      .def_prop_ro("nsensordata", [](const PyModel& s) { return s.model.nsensordata(); },
                   "Number of entries of gradyn.sensors' readings (MuJoCo's nsensordata).")
      .def_prop_ro("q0", vector_property(&Model::q0),
                   "Reference configuration (zero angles, identity quaternions, MJCF qpos0), shape (nq,).")
      .def_prop_ro("gravity", [](const PyModel& s) { return owned(to_numpy(s.model.gravity)); },
                   "Gravity in the world frame, shape (3,). Default (0, 0, -9.81).")
      .def_prop_ro("damping", vector_property(&Model::damping), "Viscous damping per DoF, shape (nv,).")
      .def_prop_ro("armature", vector_property(&Model::armature),
                   "Rotor inertia added to the diagonal of M, shape (nv,).")
      .def_prop_ro("stiffness", vector_property(&Model::stiffness), "Joint spring stiffness per DoF, shape (nv,).")
      .def_prop_ro("frictionloss", vector_property(&Model::frictionloss),
                   "Dry joint friction per DoF: the most force the joint's friction gives, shape (nv,) [N m | N]; "
                   "0: none. Enforced by the contact models 'pgs', 'ipm' and (smoothed) 'penalty'.")
      .def_prop_ro(
          "joint_couplings",
          [](const PyModel& s) {
            nb::list out;
            for (const JointCoupling& c : s.model.joint_couplings) {
              nb::dict d;
              const auto name_of = [&](int id) {
                return c.tendons ? s.model.tendons[static_cast<size_t>(id)].name : s.model.joint_names[id];
              };
              d["name"] = c.name;
              d["tendons"] = c.tendons;
              d["joint1"] = name_of(c.joint1);
              d["joint2"] = c.joint2 >= 0 ? nb::object(nb::str(name_of(c.joint2).c_str())) : nb::none();
              d["polycoef"] = nb::make_tuple(c.polycoef[0], c.polycoef[1], c.polycoef[2], c.polycoef[3], c.polycoef[4]);
              d["q1_ref"] = c.q1_ref;
              d["q2_ref"] = c.q2_ref;
              out.append(d);
            }
            return out;
          },
          "Joint couplings (MJCF <equality><joint>, URDF <mimic>), each a dict: joint1 - q1_ref = c0 + c1 x + "
          "... + c4 x^4 with x = joint2 - q2_ref (polycoef = (c0, ..., c4); joint2 None: joint1 = q1_ref + c0). "
          "With tendons True (MJCF <equality><tendon>) joint1 and joint2 name fixed tendons, coupled by length. "
          "Enforced by the contact models 'pgs', 'ipm' and (as a stiff spring) 'penalty'.")
      .def_prop_ro(
          "body_connections",
          [](const PyModel& s) {
            nb::list out;
            for (const BodyConnection& c : s.model.body_connections) {
              nb::dict d;
              d["name"] = c.name;
              d["body1"] = s.model.body_names[c.body1];
              d["body2"] = c.body2 >= 0 ? nb::object(nb::str(s.model.body_names[c.body2].c_str())) : nb::none();
              d["anchor1"] = nb::make_tuple(c.anchor1.x(), c.anchor1.y(), c.anchor1.z());
              d["anchor2"] = nb::make_tuple(c.anchor2.x(), c.anchor2.y(), c.anchor2.z());
              d["weld"] = c.weld;
              d["rotation"] = c.weld ? nb::object(owned(matrix_to_numpy(c.rotation))) : nb::none();
              out.append(d);
            }
            return out;
          },
          "Body connections (MJCF <equality><connect> and <weld>), each a dict: the point anchor1 of body1 (in its "
          "body frame) is held on the point anchor2 of body2 (None: the world), a ball joint that closes a loop; "
          "with weld True, body2's orientation in body1's frame is also held at rotation (3 x 3; None without "
          "weld). Enforced by the contact models 'pgs' and 'ipm', and by 'penalty' as stiff spring-dampers (its limit_stiffness and limit_damping).")
      .def_prop_ro(
          "tendons",
          [](const PyModel& s) {
            nb::list out;
            for (const FixedTendon& t : s.model.tendons) {
              nb::dict d;
              nb::list joints, coefs;
              for (size_t i = 0; i < t.joints.size(); ++i) {
                joints.append(s.model.joint_names[t.joints[i]]);
                coefs.append(t.coefs[i]);
              }
              d["name"] = t.name;
              d["joints"] = nb::tuple(joints);
              d["coefs"] = nb::tuple(coefs);
              d["range"] = nb::make_tuple(t.lower, t.upper);
              d["stiffness"] = t.stiffness;
              d["damping"] = t.damping;
              d["spring_length"] = t.spring_length;
              out.append(d);
            }
            return out;
          },
          "Fixed tendons (MJCF <tendon><fixed>), each a dict: the length L = sum of coefs[i] * joints[i] (hinge and "
          "slide joints); range (lower, upper), -inf / inf where unlimited, held as the joint limits are (by the "
          "contact models 'pgs', 'ipm' and 'penalty'; not without one); a spring-damper along L, tension "
          "stiffness (L - spring_length) + damping dL/dt, under every contact model.")
      .def_prop_ro(
          "cameras",
          [](const PyModel& s) {
            nb::list out;
            for (const ModelCamera& c : s.model.cameras) {
              const Frame& f = s.model.frames[static_cast<size_t>(c.frame)];
              const Eigen::Quaterniond quat(f.placement.R);
              nb::dict d;
              d["name"] = c.name;
              d["body"] = f.body >= 0 ? nb::object(nb::str(s.model.body_names[f.body].c_str())) : nb::none();
              d["pos"] = nb::make_tuple(f.placement.p.x(), f.placement.p.y(), f.placement.p.z());
              d["quat"] = nb::make_tuple(quat.x(), quat.y(), quat.z(), quat.w());
              d["fovy"] = c.fovy;
              d["unsupported"] = c.unsupported;
              d["where"] = c.where.str();
              out.append(d);
            }
            return out;
          },
          "Cameras declared with the model (MJCF <camera>), each a dict: name, body (None: fixed in the world), "
          "pos and quat (x, y, z, w) of the camera frame in that body's frame (it looks along its -z axis, x to the "
          "right of the image, y up), fovy, the vertical field of view in degrees, unsupported, what of its "
          "declaration gradyn's renderer does not reproduce (a tracking mode, focal, ...; '' for nothing: "
          "gradyn.Camera.named warns about it), and where it was declared. gradyn.render takes a name: "
          "gradyn.render(model, q, gradyn.Camera.named(model, 'top', width=96, height=32)).")
      .def_prop_ro("q_rest", vector_property(&Model::q_rest), "Spring rest configuration, shape (nq,).")
      .def_prop_ro("lower_limit", vector_property(&Model::lower_limit),
                   "Lower position limits, shape (nq,); -inf where none.")
      .def_prop_ro("upper_limit", vector_property(&Model::upper_limit),
                   "Upper position limits, shape (nq,); inf where none.")
      .def_prop_ro("effort_limit", vector_property(&Model::effort_limit), "Bounds on ``|tau|``, shape (nv,); inf: none.")
      .def_prop_ro("velocity_limit", vector_property(&Model::velocity_limit), "Bounds on ``|v|``, shape (nv,); inf: none.")
      .def(
          "joint_type", [](const PyModel& s, const std::string& name) {
            return std::string(joint_type_name(s.model.joint_type[joint_or_raise(s.model, name)]));
          },
          nb::arg("name"), "Kind of a moving joint: 'revolute', 'continuous', 'prismatic', 'spherical', 'free', 'planar'.")
      .def(
          "joint_idx_q", [](const PyModel& s, const std::string& name) { return s.model.idx_q[joint_or_raise(s.model, name)]; },
          nb::arg("name"), "Index of the joint's first entry in q.")
      .def(
          "joint_idx_v", [](const PyModel& s, const std::string& name) { return s.model.idx_v[joint_or_raise(s.model, name)]; },
          nb::arg("name"), "Index of the joint's first entry in v.")
      .def(
          "joint_nq", [](const PyModel& s, const std::string& name) { return s.model.joint_nq(joint_or_raise(s.model, name)); },
          nb::arg("name"), "Number of entries of the joint in q.")
      .def(
          "joint_nv", [](const PyModel& s, const std::string& name) { return s.model.joint_nv(joint_or_raise(s.model, name)); },
          nb::arg("name"), "Number of entries of the joint in v.")
      .def(
          "neutral", [](const PyModel& s) { return to_numpy(neutral_configuration<double>(s.model)); },
          "Neutral configuration: zero angles and positions, identity quaternions (0, 0, 0, 1).")
      .def(
          "with_gravity",
          [](const PyModel& s, nb::handle g) {
            Model copy = s.model;
            copy.gravity = vector3_arg(g, "gravity");
            return std::make_unique<PyModel>(std::move(copy));
          },
          nb::arg("gravity"), "A copy of this model with another gravity vector (world frame). Models are immutable.")
      .def("with_damping", with_dof_parameter(&Model::damping, "damping"), nb::arg("damping"),
           "A copy of this model with other viscous joint damping, shape (nv,), non-negative.")
      .def("with_armature", with_dof_parameter(&Model::armature, "armature"), nb::arg("armature"),
           "A copy of this model with other joint armature (rotor inertia), shape (nv,), non-negative.")
      .def("with_stiffness", with_dof_parameter(&Model::stiffness, "stiffness"), nb::arg("stiffness"),
           "A copy of this model with other joint spring stiffness, shape (nv,), non-negative.")
      .def("with_frictionloss", with_dof_parameter(&Model::frictionloss, "frictionloss"), nb::arg("frictionloss"),
           "A copy of this model with other dry joint friction (the most force each DoF's friction gives), "
           "shape (nv,), non-negative.")
      .def(
          "without_tendons",
          [](const PyModel& s) {
            Model copy = s.model;
            copy.tendons.clear();
            return std::make_unique<PyModel>(std::move(copy));
          },
          "A copy of this model without its fixed tendons (their limits and spring-dampers): for the paths that do "
          "not simulate them yet (device='cuda'), as a choice you make rather than one made for you.")
      .def("__repr__", [](const PyModel& s) { return model_repr(s.model); });

  m.def("load", &load_file, nb::arg("path"), nb::arg("floating_base") = false, nb::arg("contact") = nb::none(),
        nb::arg("urdf_effort_motors") = true, nb::arg("inertia") = "strict", R"doc(
Load a robot model from a URDF (.urdf) or MJCF (.xml, .mjcf) file.

floating_base: URDF only; put a free joint between the world and the root link (MJCF files
declare their own free joints). contact: None (no contact forces, the default), 'penalty'
(Hunt-Crossley penalty forces), 'pgs' (velocity-level impulses by projected Gauss-Seidel) or 'ipm'
(velocity-level mixed LCP by an interior-point method), with the default settings; tune them with
Model.with_contact. Actuators (Model.actuators; step's ctrl): MJCF <actuator> motor, position,
velocity, damper and general elements on hinge and slide joints; URDF joints with an effort limit
get a motor each (gear 1, forcerange +-effort, named after the joint) unless
urdf_effort_motors=False.

inertia: what to do with an inertia tensor that no rigid body has (a negative principal moment,
or moments A + B < C). 'strict' (the default) raises gradyn.ModelError naming the link and these
options; 'repair' replaces the moments by their mean, as MuJoCo's compiler balanceinertia does (an
MJCF <compiler balanceinertia="true"> asks for it too); 'accept' keeps the tensor as written, as
Pinocchio does. Both warn. Massless links, point masses and other zero or semidefinite tensors load
under every policy, as long as every moving joint carries inertia once the links welded by fixed
joints are merged (else gradyn.ModelError naming the joint).

Warnings: whatever gradyn reads but does not simulate (MJCF <equality>, <tendon>, sensor types
other than those gradyn.sensors reads, <keyframe>, joint frictionloss, contact softness, condim; URDF <mimic>, <transmission>, <gazebo>,
joint dry friction; unknown elements; the README lists them) is issued as a Python warning, one per
kind and load, naming the file, line and element of the first occurrence, how many there are and
where. A missing mesh file is a warning in a URDF, whose dynamics come from its <inertial>
elements (the link loses that collision shape), and an error in an MJCF, where meshes also give
the bodies their mass (as in MuJoCo). A bad file raises gradyn.ModelError (a ValueError) naming
the file, line and element.
)doc");

  nb::class_<ModelBuilder>(m, "ModelBuilder", R"doc(
Describe a robot as links joined by joints (the URDF view), then build() a Model.

    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=(0, 0, -0.5), inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0))
    b.add_joint("shoulder", "revolute", parent="base", child="arm", axis=(0, 1, 0))
    model = b.build()

Every call checks its input (positive mass, positive-definite inertia, known parents, a single
tree) and raises gradyn.ModelError naming the link or joint.
)doc")
      .def(nb::init<>())
      .def(
          "add_link",
          [](ModelBuilder& b, const std::string& name, std::optional<double> mass, nb::handle com, nb::handle inertia,
             nb::handle inertia_rpy) -> ModelBuilder& {
            LinkSpec link;
            link.name = name;
            if (mass) {
              if (inertia.is_none())
                throw ArgumentError("add_link('" + name + "'): a link with a mass needs an inertia");
              const Matrix3<double> R = rpy_to_matrix<double>(vector3_arg(inertia_rpy, "inertia_rpy"));
              link.inertia = Inertia<double>(*mass, vector3_arg(com, "com"), R * inertia_arg(inertia) * R.transpose());
            } else if (!inertia.is_none()) {
              throw ArgumentError("add_link('" + name + "'): an inertia needs a mass");
            }
            return b.add_link(std::move(link));
          },
          nb::arg("name"), nb::arg("mass") = nb::none(), nb::arg("com") = nb::make_tuple(0.0, 0.0, 0.0),
          nb::arg("inertia") = nb::none(), nb::arg("inertia_rpy") = nb::make_tuple(0.0, 0.0, 0.0),
          nb::rv_policy::reference_internal, R"doc(
Add a link. Returns the builder.

* mass: kg; None makes a massless link (a frame, or welded to a massive one).
* com: centre of mass in the link frame.
* inertia: rotational inertia about the centre of mass, a 3x3 matrix or (ixx, iyy, izz, ixy, ixz, iyz),
  in axes rotated by inertia_rpy from the link frame (URDF <inertial><origin rpy>).
)doc")
      .def(
          "add_joint",
          [](ModelBuilder& b, const std::string& name, const std::string& type, const std::string& parent,
             const std::string& child, nb::handle xyz, nb::handle rpy, nb::handle axis, double damping, double armature,
             double stiffness, double rest, double lower, double upper, double effort, double velocity,
             double reference, double frictionloss) -> ModelBuilder& {
            JointSpec j;
            j.name = name;
            j.type = parse_joint_type(type);
            j.parent = parent;
            j.child = child;
            j.origin = Pose<double>(rpy_to_matrix<double>(vector3_arg(rpy, "rpy")), vector3_arg(xyz, "xyz"));
            j.axis = vector3_arg(axis, "axis");
            j.damping = damping;
            j.armature = armature;
            j.stiffness = stiffness;
            j.rest = rest;
            j.lower = lower;
            j.upper = upper;
            j.effort_limit = effort;
            j.velocity_limit = velocity;
            j.reference = reference;
            j.frictionloss = frictionloss;
            return b.add_joint(std::move(j));
          },
          nb::arg("name"), nb::arg("type"), nb::arg("parent"), nb::arg("child"),
          nb::arg("xyz") = nb::make_tuple(0.0, 0.0, 0.0), nb::arg("rpy") = nb::make_tuple(0.0, 0.0, 0.0),
          nb::arg("axis") = nb::make_tuple(1.0, 0.0, 0.0), nb::arg("damping") = 0.0, nb::arg("armature") = 0.0,
          nb::arg("stiffness") = 0.0, nb::arg("rest") = 0.0,
          nb::arg("lower") = -std::numeric_limits<double>::infinity(),
          nb::arg("upper") = std::numeric_limits<double>::infinity(),
          nb::arg("effort") = std::numeric_limits<double>::infinity(),
          nb::arg("velocity") = std::numeric_limits<double>::infinity(), nb::arg("reference") = 0.0,
          nb::arg("frictionloss") = 0.0, nb::rv_policy::reference_internal, R"doc(
Add a joint that moves `child` relative to `parent`. Returns the builder.

* type: 'revolute', 'continuous', 'prismatic', 'spherical', 'free', 'planar' or 'fixed'.
* xyz, rpy: the joint frame in the parent link frame (URDF <origin>; rpy = roll, pitch, yaw about
  fixed x, y, z). The child link frame coincides with the joint frame at q = 0.
* axis: revolute/prismatic axis in the joint frame (normalised).
* damping, armature, stiffness: per DoF; spring torque -stiffness * (q - rest).
* lower, upper: position limits (revolute, prismatic); effort, velocity: ``|tau|`` and ``|v|`` bounds.
* reference: the joint's value in the model's reference configuration q0.
* frictionloss: dry friction per DoF, the most force the joint's friction gives [N m | N].
)doc")
      .def(
          "add_connection",
          [](ModelBuilder& b, const std::string& frame1, const std::string& frame2, nb::handle anchor1,
             nb::handle anchor2, const std::string& name, bool weld, nb::handle rpy) -> ModelBuilder& {
            ConnectionSpec c;
            c.name = name;
            c.frame1 = frame1;
            c.frame2 = frame2;
            c.anchor1 = vector3_arg(anchor1, "anchor1");
            if (!anchor2.is_none()) c.anchor2 = vector3_arg(anchor2, "anchor2");
            c.weld = weld;
            if (!rpy.is_none()) {
              if (!weld) throw nb::value_error("add_connection: rpy (a held orientation) needs weld=True");
              c.rotation = rpy_to_matrix<double>(vector3_arg(rpy, "rpy"));
            }
            return b.add_connection(std::move(c));
          },
          nb::arg("frame1"), nb::arg("frame2") = "", nb::arg("anchor1") = nb::make_tuple(0.0, 0.0, 0.0),
          nb::arg("anchor2").none() = nb::none(), nb::arg("name") = "", nb::arg("weld") = false,
          nb::arg("rpy").none() = nb::none(), nb::rv_policy::reference_internal, R"doc(
Hold a point of one link on a point of another (MJCF <equality><connect>): anchor1 in frame1 (a link
or site) meets anchor2 in frame2 (a link or site; "" or "world": the world). anchor2 None: where anchor1
is in the reference configuration q0. weld=True also holds frame2's orientation in frame1 (MJCF
<equality><weld>): at rpy (roll, pitch, yaw about fixed x, y, z), or as in q0 when rpy is None.
Enforced by the contact models 'pgs' and 'ipm'. Returns the builder.
)doc")
      .def(
          "add_tendon",
          [](ModelBuilder& b, const std::vector<std::string>& joints, nb::handle coefs, const std::string& name,
             nb::handle range, double stiffness, double damping, std::optional<double> spring_length) -> ModelBuilder& {
            TendonSpec t;
            t.name = name;
            t.joints = joints;
            const ConstArray c = as_array(coefs, "coefs");
            if (c.ndim() != 1 || static_cast<size_t>(c.size()) != joints.size())
              throw ArgumentError("coefs: expected one coefficient per joint, shape (" + std::to_string(joints.size()) +
                                  ",), got shape " + shape_string(c));
            t.coefs.assign(c.data(), c.data() + c.size());
            if (!range.is_none()) {
              const ConstArray r = as_array(range, "range");
              if (r.ndim() != 1 || r.size() != 2)
                throw ArgumentError("range: expected (lower, upper), shape (2,), got shape " + shape_string(r));
              t.lower = r.data()[0];
              t.upper = r.data()[1];
            }
            t.stiffness = stiffness;
            t.damping = damping;
            t.spring_length = spring_length;
            return b.add_tendon(std::move(t));
          },
          nb::arg("joints"), nb::arg("coefs"), nb::arg("name") = "", nb::arg("range").none() = nb::none(),
          nb::arg("stiffness") = 0.0, nb::arg("damping") = 0.0, nb::arg("spring_length").none() = nb::none(),
          nb::rv_policy::reference_internal, R"doc(
A fixed tendon (MJCF <tendon><fixed>): the length L = sum of coefs[i] * q(joints[i]) over hinge and slide
joints, each listed once. range (lower, upper): L is held within it as a joint limit is (-inf / inf: no
bound on that side; None: unlimited). stiffness, damping: a spring-damper along L towards spring_length
(None: L at the joints' spring rest positions, model.q_rest). Returns the builder.
)doc")
      .def(
          "add_joint_coupling",
          [](ModelBuilder& b, const std::string& joint1, const std::string& joint2, nb::handle polycoef,
             const std::string& name, bool tendons) -> ModelBuilder& {
            JointCouplingSpec c;
            c.name = name;
            c.joint1 = joint1;
            c.joint2 = joint2;
            c.tendons = tendons;
            const ConstArray coef = as_array(polycoef, "polycoef");
            if (coef.ndim() != 1 || coef.size() < 1 || coef.size() > 5)
              throw ArgumentError("polycoef: expected 1 to 5 coefficients (c0, ..., c4), got shape " +
                                  shape_string(coef));
            c.polycoef = {0.0, 0.0, 0.0, 0.0, 0.0};
            for (size_t k = 0; k < coef.size(); ++k) c.polycoef[k] = coef.data()[k];
            return b.add_joint_coupling(std::move(c));
          },
          nb::arg("joint1"), nb::arg("joint2") = "", nb::arg("polycoef") = nb::make_tuple(0.0, 1.0),
          nb::arg("name") = "", nb::arg("tendons") = false, nb::rv_policy::reference_internal, R"doc(
Couple two hinge or slide joints (MJCF <equality><joint>): joint1 - ref1 = c0 + c1 x + ... + c4 x^4 with
x = joint2 - ref2, the references being the joints' values in q0; without joint2, joint1 is held at
ref1 + c0. polycoef: 1 to 5 coefficients (c0, c1, ...), the rest 0. tendons=True: joint1 and joint2 name
fixed tendons (add_tendon) whose lengths are coupled (MJCF <equality><tendon>), the references their
lengths in q0. Returns the builder.
)doc")
      .def(
          "add_camera",
          [](ModelBuilder& b, const std::string& name, const std::string& link, nb::handle xyz, nb::handle rpy,
             double fovy) -> ModelBuilder& {
            return b.add_camera(name, link,
                                Pose<double>(rpy_to_matrix<double>(vector3_arg(rpy, "rpy")), vector3_arg(xyz, "xyz")),
                                fovy);
          },
          nb::arg("name"), nb::arg("link"), nb::arg("xyz") = nb::make_tuple(0.0, 0.0, 0.0),
          nb::arg("rpy") = nb::make_tuple(0.0, 0.0, 0.0), nb::arg("fovy") = 45.0, nb::rv_policy::reference_internal,
          R"doc(
A camera fixed on a link (MJCF <camera>; model.cameras): its frame at xyz, rpy (URDF convention) in
the link's frame looks along its -z axis, x to the right of the image, y up; fovy is the vertical
field of view in degrees. Render through it with gradyn.render(model, q, name). Returns the builder.
)doc")
      .def(
          "set_gravity", [](ModelBuilder& b, nb::handle g) -> ModelBuilder& { return b.set_gravity(vector3_arg(g, "gravity")); },
          nb::arg("gravity"), nb::rv_policy::reference_internal,
          "Gravity in the world frame (default (0, 0, -9.81)). Returns the builder.")
      .def(
          "set_name", [](ModelBuilder& b, const std::string& n) -> ModelBuilder& { return b.set_name(n); },
          nb::arg("name"), nb::rv_policy::reference_internal, "The model's name. Returns the builder.")
      .def_prop_ro("link_names",
                   [](const ModelBuilder& b) {
                     std::vector<std::string> n;
                     for (const auto& l : b.links()) n.push_back(l.name);
                     return n;
                   },
                   "Links added so far.")
      .def_prop_ro("joint_names",
                   [](const ModelBuilder& b) {
                     std::vector<std::string> n;
                     for (const auto& j : b.joints()) n.push_back(j.name);
                     return n;
                   },
                   "Joints added so far (fixed ones included).")
      .def(
          "build",
          [](const ModelBuilder& b, bool floating_base) {
            BuildOptions options;
            options.floating_base = floating_base;
            return std::make_unique<PyModel>(b.build(options));
          },
          nb::arg("floating_base") = false, R"doc(
Check the description and build a Model. floating_base: put a free joint named 'root' between
the world and the root link. Raises gradyn.ModelError naming the offending link or joint.
)doc");
}

}  // namespace gradyn::python
