// No contact: collide() does not run, joint limits are not enforced, and step() is the plain
// articulated dynamics (checked against Pinocchio and MuJoCo). Registered in contact/contact_models.hpp.
#pragma once

#include "gradyn/contact/models/contact_model_defaults.hpp"

namespace gradyn {

struct NoContact : ContactModelDefaults {
  static constexpr ContactModel id = ContactModel::None;
  static constexpr const char* name = "none";
};

}  // namespace gradyn
