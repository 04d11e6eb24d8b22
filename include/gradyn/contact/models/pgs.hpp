// Projected Gauss-Seidel contact as a contact model (contact/pgs_contact.hpp: the boxed LCP of the
// contact and joint-limit impulses, solved by PGS at the velocity level). Its workspace is PgsDataTpl
// (contact/pgs_data.hpp, read through pgs_data(data)); the hooks that read it are written in
// src/contact/pgs_contact.cpp and pgs_impulse_jacobian.cpp. Registered in contact/contact_models.hpp.
#pragma once

#include "gradyn/contact/models/contact_model_defaults.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_contact_vjp.hpp"

namespace gradyn {

struct PgsContact : ContactModelDefaults {
  static constexpr ContactModel id = ContactModel::Pgs;
  static constexpr const char* name = "pgs";
  static constexpr ContactLevel level = ContactLevel::Impulse;

  template <class S>
  static detail::OpaqueWorkspace make_workspace(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes);
  static void check_settings(const ContactSettings& settings);
  template <class S>
  static void forget_warm_start(DataTpl<S>& data) { pgs_forget_warm_start<S>(data); }
  template <class S>
  static void before_step_vjp(DataTpl<S>& data) {
    // Cold start: the step is differentiated as a function of (q, v, tau) alone, not of the warm
    // start a previous step left (converged solves agree to the PGS tolerance either way).
    pgs_forget_warm_start<S>(data);
  }
  /// Dry friction, couplings and connections enter PGS as rows the analytical Jacobian does not cover.
  static bool jacobian_by_reverse_mode(const Model& model);
  template <class S>
  static S normal_force(const ModelTpl<S>& model, const DataTpl<S>& data, int k, int nc, const S& dt);

  template <class S>
  static constexpr auto velocity = &pgs_contact_velocity<S>;
  static constexpr auto velocity_vjp = &pgs_contact_velocity_vjp;

  // the solved problem, as impulse_jacobian.cpp reads it (src/contact/pgs_impulse_jacobian.cpp)
  GRADYN_IMPULSE_PROBLEM_HOOKS
};

}  // namespace gradyn
