// Interior-point contact as a contact model (contact/ipm_contact.hpp: the mixed LCP of paper 000 with
// a polyhedral friction cone, solved by a primal-dual interior-point method at the velocity level).
// Its workspace is IpmDataTpl (contact/ipm_data.hpp, read through ipm_data(data)); the hooks that read
// it are written in src/contact/ipm_contact.cpp and ipm_impulse_jacobian.cpp. Registered in
// contact/contact_models.hpp.
#pragma once

#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/ipm_contact_vjp.hpp"
#include "gradyn/contact/models/contact_model_defaults.hpp"

namespace gradyn {

struct IpmContact : ContactModelDefaults {
  static constexpr ContactModel id = ContactModel::Ipm;
  static constexpr const char* name = "ipm";
  static constexpr ContactLevel level = ContactLevel::Impulse;

  template <class S>
  static detail::OpaqueWorkspace make_workspace(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes);
  static void check_settings(const ContactSettings& settings);
  template <class S>
  static void forget_warm_start(DataTpl<S>& data);
  /// Dry friction, couplings and connections enter the LCP as rows the analytical Jacobian does not cover.
  static bool jacobian_by_reverse_mode(const Model& model);
  template <class S>
  static S normal_force(const ModelTpl<S>& model, const DataTpl<S>& data, int k, int nc, const S& dt);

  template <class S>
  static constexpr auto velocity = &ipm_contact_velocity<S>;
  static constexpr auto velocity_vjp = &ipm_contact_velocity_vjp;

  // the solved problem, as impulse_jacobian.cpp reads it (src/contact/ipm_impulse_jacobian.cpp)
  GRADYN_IMPULSE_PROBLEM_HOOKS
};

}  // namespace gradyn
