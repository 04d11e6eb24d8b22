// The registry's functions that are not templates (contact/contact_models.hpp), and the check of the
// settings every model shares.
#include "gradyn/contact/contact_models.hpp"

#include <cmath>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

const char* contact_model_name(ContactModel model) {
  if (static_cast<int>(model) >= kContactModelCount) return "?";
  return visit_contact_model(model, [](auto m) { return decltype(m)::name; });
}

bool has_impulses(ContactModel model) {
  return static_cast<int>(model) < kContactModelCount && contact_level(model) == ContactLevel::Impulse;
}

template <class S>
void make_contact_workspaces(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes,
                             std::array<detail::OpaqueWorkspace, kContactModelCount>& out) {
  for_each_contact_model([&](ContactModel m) {
    visit_contact_model(m, [&](auto c) { out[static_cast<int>(m)] = decltype(c)::make_workspace(model, sizes); });
  });
}

bool contact_model_from_name(const std::string& name, ContactModel& model) {
  bool found = false;
  for_each_contact_model([&](ContactModel m) {
    if (!found && name == contact_model_name(m)) model = m, found = true;
  });
  return found;
}

void check_contact_settings(const ContactSettings& c) {
  // step() calls this every time: build the location (a heap string) only for an error.
  auto where = [] { return SourceLocation{"", 0, "contact settings"}; };
  auto require = [&](const char* name, double x, double lowest, const char* bound) {
    if (!std::isfinite(x) || x < lowest)
      throw ModelError(where(), std::string(name) + ": expected a finite number " + bound + ", got " + std::to_string(x));
  };
  require("stiffness", c.stiffness, 0.0, ">= 0");
  require("exponent", c.exponent, 1.0, ">= 1");
  require("damping", c.damping, 0.0, ">= 0");
  require("velocity_scale", c.velocity_scale, 0.0, ">= 0");
  require("static_friction_ratio", c.static_friction_ratio, 1.0, ">= 1");
  require("viscous_friction", c.viscous_friction, 0.0, ">= 0");
  require("margin", c.margin, 0.0, ">= 0");
  require("erp", c.erp, 0.0, ">= 0");
  if (c.erp > 1.0) throw ModelError(where(), "erp: expected a number in [0, 1], got " + std::to_string(c.erp));
  require("slop", c.slop, 0.0, ">= 0");
  require("cfm", c.cfm, 0.0, ">= 0");
  require("restitution_threshold", c.restitution_threshold, 0.0, ">= 0");
  require("max_correction_velocity", c.max_correction_velocity, 0.0, ">= 0");
  require("limit_stiffness", c.limit_stiffness, 0.0, ">= 0");
  require("limit_damping", c.limit_damping, 0.0, ">= 0");
  require("limit_margin", c.limit_margin, 0.0, ">= 0");
  require("max_penetration", c.max_penetration, 0.0, ">= 0");
  // Each solver's own settings, whichever model is on: a model switched on later finds them valid.
  for_each_contact_model([&](ContactModel m) { visit_contact_model(m, [&](auto model) { decltype(model)::check_settings(c); }); });
  // The friction laws divide by the velocity scale: zero is only allowed while contact is off.
  if (c.model != ContactModel::None && !(c.velocity_scale > 0.0))
    throw ModelError(where(), "velocity_scale: expected > 0 when contact is enabled (it regularises friction at rest), got " +
                                std::to_string(c.velocity_scale));
}

#define GRADYN_INSTANTIATE(S)                                                                         \
  template void make_contact_workspaces<S>(const ModelTpl<S>&, const ContactWorkspaceSizes&,          \
                                           std::array<detail::OpaqueWorkspace, kContactModelCount>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
