// Penalty contact as a contact model (contact/penalty.hpp: the Hunt-Crossley normal force, the
// friction laws, the connection springs and the joint limits as stiff springs, all forces in the
// accelerations stage). Registered in contact/contact_models.hpp.
#pragma once

#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/models/contact_model_defaults.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/penalty_jacobian.hpp"
#include "gradyn/contact/penalty_vjp.hpp"

namespace gradyn {

struct PenaltyContact : ContactModelDefaults {
  static constexpr ContactModel id = ContactModel::Penalty;
  static constexpr const char* name = "penalty";
  static constexpr ContactLevel level = ContactLevel::Force;
  static constexpr bool evaluates_contact_networks = true;

  template <class S>
  static constexpr auto generalized_forces = &contact_generalized_forces<S>;
  /// The adjoint of generalized_forces given its adjoint forces_bar (nv); needs generalized_forces(q, v)
  /// to be the last contact call on data.
  template <class S>
  static void generalized_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                     const VecRef<S>& v, const VecRef<S>& forces_bar, VecOut<S> q_bar,
                                     VecOut<S> v_bar, ModelTangentTpl<S>& model_bar) {
    penalty_contact_forces_vjp<S>(model, data, q, v, forces_bar, q_bar, v_bar, model_bar);
    add_joint_limit_forces_vjp<S>(model, q, v, forces_bar, q_bar, v_bar);
    add_joint_constraint_forces_vjp<S>(model, q, v, forces_bar, q_bar, v_bar, &model_bar);
  }
  static constexpr auto forces_jacobian = &penalty_forces_jacobian;
  /// The connections' springs have no analytical Jacobian yet.
  static bool jacobian_by_reverse_mode(const Model& model) { return !model.body_connections.empty(); }
  template <class S>
  static S normal_force(const ModelTpl<S>&, const DataTpl<S>& data, int k, int /*nc*/, const S& /*dt*/) {
    return data.contact_force[k].dot(data.contacts[k].normal);
  }
};

}  // namespace gradyn
