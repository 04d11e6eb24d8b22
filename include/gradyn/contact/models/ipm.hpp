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
  static void velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a_free, const NoDeduce<S>& dt, VecOut<S> v_next) {
    ipm_contact_velocity<S>(model, data, q, v, a_free, dt, v_next);
  }
  static void velocity_vjp(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v, double dt,
                           const VecRef<double>& v_next_bar, VecOut<double> q_bar, VecOut<double> v_bar,
                           VecOut<double> a_free_bar, ModelTangent& model_bar) {
    ipm_contact_velocity_vjp(model, data, q, v, dt, v_next_bar, q_bar, v_bar, a_free_bar, model_bar);
  }

  // ---- the solved problem, as impulse_jacobian.cpp reads it (src/contact/ipm_impulse_jacobian.cpp) ----
  static const Eigen::MatrixXd& jacobian_transpose(const Data& data);
  static Eigen::Vector3d contact_impulse(const Model& model, const Data& data, int k);
  static int limit_rows(const Model& model, const Data& data);
  static void limit_row(const Model& model, const Data& data, int l, int& coord, int& side);
  static double limit_impulse(const Model& model, const Data& data, int l);
  static Eigen::Vector2d contact_target_weights(const Model& model, const Data& data, int k, double dt, double approach);
  static int problem_rows(const Model& model, const Data& data);
  static void response(const Model& model, Data& data, int rows, int m, const Eigen::MatrixXd& Minv, bool v_columns,
                       Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR);
};

}  // namespace gradyn
