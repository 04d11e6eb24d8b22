// Contact settings from Python: Model.contact_model, Model.contact_settings, Model.with_contact.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include "common.hpp"
#include "gradyn/contact/contact_models.hpp"

namespace gradyn::python {

ContactModel parse_contact_model(const std::string& name, const char* argument) {
  ContactModel model = ContactModel::None;
  if (contact_model_from_name(name, model)) return model;
  std::string expected = "None";  // Python's None stands for 'none'
  for (int m = 1; m < kContactModelCount; ++m)
    expected += std::string(m + 1 == kContactModelCount ? " or '" : ", '") + contact_model_name(static_cast<ContactModel>(m)) + "'";
  throw ArgumentError(std::string(argument) + ": expected " + expected + ", got '" + name + "'");
}

namespace {
FrictionModel parse_friction_model(const std::string& name) {
  if (name == "smooth_coulomb") return FrictionModel::SmoothCoulomb;
  if (name == "brown") return FrictionModel::Brown;
  throw ArgumentError("friction: expected 'smooth_coulomb' or 'brown', got '" + name + "'");
}
PgsGradient parse_pgs_gradient(const std::string& name) {
  if (name == "implicit") return PgsGradient::Implicit;
  if (name == "sweeps") return PgsGradient::Sweeps;
  throw ArgumentError("pgs_gradient: expected 'implicit' or 'sweeps', got '" + name + "'");
}
}  // namespace

void bind_contact(nb::module_& m) {
  nb::class_<PyModel> cls = nb::borrow<nb::class_<PyModel>>(m.attr("Model"));
  cls.def_prop_ro(
         "contact_model",
         [](const PyModel& s) -> std::optional<std::string> {
           if (s.model.contact.model == ContactModel::None) return std::nullopt;
           return std::string(contact_model_name(s.model.contact.model));
         },
         "None (no contact forces), 'penalty', 'pgs' or 'ipm'.")
      .def_prop_ro(
          "contact_settings",
          [](const PyModel& s) {
            const ContactSettings& c = s.model.contact;
            nb::dict d;
            if (c.model == ContactModel::None)
              d["model"] = nb::none();
            else
              d["model"] = contact_model_name(c.model);
            d["stiffness"] = c.stiffness;
            d["exponent"] = c.exponent;
            d["damping"] = c.damping;
            d["friction"] = friction_model_name(c.friction);
            d["velocity_scale"] = c.velocity_scale;
            d["static_friction_ratio"] = c.static_friction_ratio;
            d["viscous_friction"] = c.viscous_friction;
            d["margin"] = c.margin;
            d["pgs_iterations"] = c.pgs_iterations;
            d["pgs_tolerance"] = c.pgs_tolerance;
            d["pgs_gradient"] = c.pgs_gradient == PgsGradient::Implicit ? "implicit" : "sweeps";
            d["erp"] = c.erp;
            d["slop"] = c.slop;
            d["cfm"] = c.cfm;
            d["restitution_threshold"] = c.restitution_threshold;
            d["max_correction_velocity"] = c.max_correction_velocity;
            d["ipm_iterations"] = c.ipm_iterations;
            d["ipm_tolerance"] = c.ipm_tolerance;
            d["ipm_kappa"] = c.ipm_kappa;
            d["ipm_friction_directions"] = c.ipm_friction_directions;
            d["ipm_warm_start"] = c.ipm_warm_start;
            d["limit_stiffness"] = c.limit_stiffness;
            d["limit_damping"] = c.limit_damping;
            d["limit_margin"] = c.limit_margin;
            return d;
          },
          "The contact settings as a dict (see Model.with_contact).")
      .def(
          "with_contact",
          [](const PyModel& s, std::optional<std::string> model, std::optional<double> stiffness,
             std::optional<double> exponent, std::optional<double> damping, std::optional<std::string> friction,
             std::optional<double> velocity_scale, std::optional<double> static_friction_ratio,
             std::optional<double> viscous_friction, std::optional<double> margin, std::optional<int> pgs_iterations,
             std::optional<double> pgs_tolerance, std::optional<double> erp, std::optional<double> slop,
             std::optional<double> cfm, std::optional<double> restitution_threshold,
             std::optional<int> ipm_iterations, std::optional<double> ipm_tolerance, std::optional<double> ipm_kappa,
             std::optional<int> ipm_friction_directions, std::optional<std::string> pgs_gradient,
             std::optional<double> limit_stiffness, std::optional<double> limit_damping,
             std::optional<double> limit_margin, std::optional<bool> ipm_warm_start,
             std::optional<double> max_penetration, std::optional<double> max_correction_velocity) {
            Model copy = s.model;
            ContactSettings& c = copy.contact;
            // No model given: keep this model's (tuning a setting must not switch it); one without
            // contact gets 'penalty'.
            if (model)
              c.model = parse_contact_model(*model, "model");
            else if (c.model == ContactModel::None)
              c.model = ContactModel::Penalty;
            if (stiffness) c.stiffness = *stiffness;
            if (exponent) c.exponent = *exponent;
            if (damping) c.damping = *damping;
            if (friction) c.friction = parse_friction_model(*friction);
            if (velocity_scale) c.velocity_scale = *velocity_scale;
            if (static_friction_ratio) c.static_friction_ratio = *static_friction_ratio;
            if (viscous_friction) c.viscous_friction = *viscous_friction;
            if (margin) c.margin = *margin;
            if (pgs_iterations) c.pgs_iterations = *pgs_iterations;
            if (pgs_tolerance) c.pgs_tolerance = *pgs_tolerance;
            if (erp) c.erp = *erp;
            if (slop) c.slop = *slop;
            if (cfm) c.cfm = *cfm;
            if (restitution_threshold) c.restitution_threshold = *restitution_threshold;
            if (ipm_iterations) c.ipm_iterations = *ipm_iterations;
            if (ipm_tolerance) c.ipm_tolerance = *ipm_tolerance;
            if (ipm_kappa) c.ipm_kappa = *ipm_kappa;
            if (ipm_friction_directions) c.ipm_friction_directions = *ipm_friction_directions;
            if (pgs_gradient) c.pgs_gradient = parse_pgs_gradient(*pgs_gradient);
            if (limit_stiffness) c.limit_stiffness = *limit_stiffness;
            if (limit_damping) c.limit_damping = *limit_damping;
            if (limit_margin) c.limit_margin = *limit_margin;
            if (ipm_warm_start) c.ipm_warm_start = *ipm_warm_start;
            if (max_penetration) c.max_penetration = *max_penetration;
            if (max_correction_velocity) c.max_correction_velocity = *max_correction_velocity;
            check_contact_settings(c);  // every field finite and in range (limit_*: >= 0), else ModelError
            return std::make_unique<PyModel>(std::move(copy));
          },
          nb::arg("model") = nb::none(), nb::arg("stiffness") = nb::none(), nb::arg("exponent") = nb::none(),
          nb::arg("damping") = nb::none(), nb::arg("friction") = nb::none(), nb::arg("velocity_scale") = nb::none(),
          nb::arg("static_friction_ratio") = nb::none(), nb::arg("viscous_friction") = nb::none(),
          nb::arg("margin") = nb::none(), nb::arg("pgs_iterations") = nb::none(),
          nb::arg("pgs_tolerance") = nb::none(), nb::arg("erp") = nb::none(), nb::arg("slop") = nb::none(),
          nb::arg("cfm") = nb::none(), nb::arg("restitution_threshold") = nb::none(),
          nb::arg("ipm_iterations") = nb::none(), nb::arg("ipm_tolerance") = nb::none(),
          nb::arg("ipm_kappa") = nb::none(), nb::arg("ipm_friction_directions") = nb::none(),
          nb::arg("pgs_gradient") = nb::none(), nb::arg("limit_stiffness") = nb::none(),
          nb::arg("limit_damping") = nb::none(), nb::arg("limit_margin") = nb::none(),
          nb::arg("ipm_warm_start") = nb::none(), nb::arg("max_penetration") = nb::none(),
          nb::arg("max_correction_velocity") = nb::none(),
          R"doc(
A copy of this model with contact model `model` ('penalty', 'pgs', 'ipm', or 'none' to disable
contact; not given: this model's, or 'penalty' if it has none); settings not given are kept
(defaults: stiffness 1e5 N/m^p, exponent 1.5, damping 1 s/m, friction 'smooth_coulomb',
velocity_scale 0.01 m/s, static_friction_ratio 1.2, viscous_friction 0, margin 0).

Per contact (depth d > 0, penetration rate d_dot): normal force k d^p (1 + c d_dot), never
negative (Hunt-Crossley); friction 'smooth_coulomb' ``-mu f_n v_t / sqrt(|v_t|^2 + velocity_scale^2)``
or 'brown' (Brown & McPhee: static peak static_friction_ratio * mu at velocity_scale, plus
``viscous_friction * |v_t|``); mu is the larger friction of the two geoms. step/rollout then apply the
contact forces (recomputed at every RK4 stage); step_vjp/rollout_vjp differentiate through them.
Static friction is regularised: a body held on a slope of angle theta (mu > tan theta) creeps at
``velocity_scale tan(theta) / sqrt(mu^2 - tan(theta)^2)`` (0.7 cm/s for mu = 1 on 30 degrees), as long
as the step resolves the friction's viscous slope (about dt <= 0.5 ms for a 1 kg box; at 1 ms it
chatters near 1 cm/s) and damping keeps the body from rocking on its contacts: with the default
damping 1 a box rocks and walks down a 30-degree slope, damping=3 holds it (the damper is explicit:
light limbs hitting hard at dt = 2 ms diverge with 2 or more, hence the default).
Bad numbers raise gradyn.ModelError.

'pgs': velocity-level contact impulses (a boxed LCP per step: one normal and two two-sided
friction rows per contact, solved by projected Gauss-Seidel) in the semi-implicit Euler step only
(RK4 raises ValueError). pgs_gradient: how step_vjp differentiates the impulses, 'implicit' (the
converged active set, default) or 'sweeps' (the reverse of the PGS sweeps as they ran). Settings:
pgs_iterations 100 (sweeps at most; a solve that reaches it before pgs_tolerance keeps its last iterate
and is reported as gradyn.Status.SOLVER_NOT_CONVERGED), pgs_tolerance 1e-10, erp 0.2 (Baumgarte:
fraction of depth - slop removed per step), slop 1e-4 m, max_correction_velocity 0.5 m/s (the Baumgarte
separation velocity is at most this: a body started deep in another rises out of it instead of being
launched), cfm 0, restitution_threshold 0.1 m/s (slower approaches do not bounce; restitution e is the
larger of the two geoms').

'ipm': velocity-level contact as the mixed LCP of Belbute-Peres et al. 2018 (per contact one normal
row, ipm_friction_directions rows spanning a polyhedral friction cone and one sliding-speed row),
solved by a primal-dual interior-point method; semi-implicit Euler only (RK4 raises ValueError).
Settings: ipm_iterations 50 (Newton steps at most; when reached before the tolerance the step keeps
the last iterate and does not raise; step/rollout(..., return_status=True) report
gradyn.Status.SOLVER_NOT_CONVERGED), ipm_tolerance 1e-11 (on every
residual and on ``|s z - kappa|``), ipm_kappa 0 (complementarity relaxation s z = kappa: > 0 gives a
slightly soft contact with smooth gradients), ipm_friction_directions 4 (>= 3; the cone holds
cos(pi / N) of mu half-way between two directions: 71% for 4, 92% for 8), ipm_warm_start False
(True, a bool: a step whose contacts are the previous step's geom pairs starts the solver from that
step's solution: fewer Newton iterations for a body at rest, e.g. ~2 instead of 5 for a resting box,
though no faster on the benchmark's standing quadruped; off by default because step
is then no longer a function of (q, v, tau) alone: repeated evaluations of one state differ by about
ipm_tolerance in v and 1e-9 relative in the gradients; the last solution is kept with the model, so
it carries over between separate step, rollout and step_vjp calls on the same model object). erp, slop,
max_correction_velocity, restitution_threshold and cfm act
as for 'pgs' (cfm > 0 keeps contacts that ask for conflicting separations solvable).

Joint limits (the model's lower/upper position limits of revolute, continuous, prismatic and planar
joints) are enforced by every contact model and ignored with 'none'. 'penalty': a one-sided spring-
damper on the violation d, torque max(0, limit_stiffness d + limit_damping d_dot) (defaults 1e4 N m/rad
or N/m, 20 N m s/rad or N s/m; a load torque T rests T / limit_stiffness past the limit). 'pgs' and
'ipm': one unilateral row per limit whose gap is below limit_margin (default 1e-3 rad or m) or that
the step would cross; a limit not yet reached may be closed but not crossed, a violated one is pushed
back by Baumgarte (erp, slop) like a contact. limit_stiffness, limit_damping and limit_margin must be
finite and >= 0 (else gradyn.ModelError).

max_penetration (default 0.05 m, finite and >= 0): a step with a contact deeper than this is
reported as gradyn.Status.DEEP_PENETRATION (step/rollout with return_status=True), under every
contact model; the step itself goes on.
)doc");
}

}  // namespace gradyn::python
