// What a contact model inherits unless it says otherwise: a model that adds nothing to the step (no
// forces, no impulses, no workspace, no settings of its own). Each contact model
// (contact/models/<model>.hpp) derives from this and defines its name, its level and the hooks of
// that level; contact/contact_models.hpp registers the models, and the step's stages
// (sim/stages.cpp), their adjoints (sim/stages_vjp.cpp), the step Jacobian (sim/step_jacobian.cpp,
// contact/impulse_jacobian.cpp), Data's constructor, the sensors and the batch reach a model only
// through these hooks.
//
// The hooks of each level (declared by the model, written in its own files):
//   Force    generalized_forces<S>(model, data, q, v) -> the generalised contact forces (nv) that the
//            accelerations stage adds to tau (collide() runs here);
//            generalized_forces_vjp<S>(model, data, q, v, forces_bar, q_bar, v_bar, model_bar);
//            forces_jacobian(model, data, q, v, dtau_dq, dtau_dv) (double; step_jacobian)
//   Impulse  velocity<S>(model, data, q, v, a_free, dt, v_next): the constraints stage (collide() and
//            the solve run here); velocity_vjp(model, data, q, v, dt, v_next_bar, q_bar, v_bar,
//            a_free_bar, model_bar) (double); and the solved problem as impulse_jacobian.cpp reads it
//            (double): GRADYN_IMPULSE_PROBLEM_HOOKS below
#pragma once

#include <array>
#include <cstdint>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// How a contact model acts on the step (sim/stages.hpp).
enum class ContactLevel : std::uint8_t {
  None,     // not at all: the accelerations are those of the free system, v+ = v + dt a
  Force,    // generalised forces in the accelerations stage (every RK4 stage evaluates them)
  Impulse,  // velocity-level impulses in the constraints stage (semi-implicit Euler only)
};

/// The sizes Data's constructor hands each model's make_workspace.
struct ContactWorkspaceSizes {
  int contacts = 0;    // Data::contacts' capacity
  int limit_rows = 0;  // two per coordinate of a joint with limited coordinates, and per limited tendon
  int joint_rows = 0;  // dry-friction, coupling and connection rows (contact/joint_constraints.hpp)
};

/// Every registered model's workspace, made by its make_workspace, into out[model] (Data's
/// constructor; contact/contact_models.hpp registers the models).
template <class S>
void make_contact_workspaces(const ModelTpl<S>& model, const ContactWorkspaceSizes& sizes,
                             std::array<detail::OpaqueWorkspace, kContactModelCount>& out);

/// The solved problem of an impulse-level model, as the step Jacobian reads it
/// (contact/impulse_jacobian.cpp), declared inside the model's struct; the model defines them in
/// src/contact/<model>_impulse_jacobian.cpp. Rows: the contacts' frame rows (normal, tangent1,
/// tangent2 per contact), then the joint-limit rows, in whatever order the model's own problem
/// keeps them (its rows may combine these: the interior point's friction directions).
///   jacobian_transpose      nv x rows: contact k's frame rows in columns 3 k .. 3 k + 2
///   contact_impulse         contact k's impulse in its frame [N s]
///   limit_rows, limit_row   how many limit rows the step had; limit l's coordinate and side
///                           (+1 lower, -1 upper), limit_impulse its impulse
///   contact_target_weights  contact k's normal-row target on the branch the step took, as weights
///                           of its depth and its approach J_n v (plus a constant)
///   problem_rows            the problem's row count (0: the step had no contact or limit rows)
///   response                T (without the identity) and QR of impulse_response from the frame and
///                           limit rows' change w (data.deriv_impulse_w's m leading rows)
#define GRADYN_IMPULSE_PROBLEM_HOOKS                                                                              \
  static const Eigen::MatrixXd& jacobian_transpose(const Data& data);                                            \
  static Eigen::Vector3d contact_impulse(const Model& model, const Data& data, int k);                            \
  static int limit_rows(const Model& model, const Data& data);                                                    \
  static void limit_row(const Model& model, const Data& data, int l, int& coord, int& side);                      \
  static double limit_impulse(const Model& model, const Data& data, int l);                                       \
  static Eigen::Vector2d contact_target_weights(const Model& model, const Data& data, int k, double dt,            \
                                                double approach);                                                 \
  static int problem_rows(const Model& model, const Data& data);                                                  \
  static void response(const Model& model, Data& data, int rows, int m, const Eigen::MatrixXd& Minv,              \
                       bool v_columns, Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR);

struct ContactModelDefaults {
  static constexpr ContactLevel level = ContactLevel::None;
  static constexpr bool evaluates_contact_networks = false;  // runs networks at contact sites (per contact)

  /// The model's workspace in Data::contact_workspaces (none by default).
  template <class S>
  static detail::OpaqueWorkspace make_workspace(const ModelTpl<S>&, const ContactWorkspaceSizes&) {
    return {};
  }
  /// Throws ModelError naming the field unless the model's own settings are valid (check_contact_settings
  /// runs every registered model's, whichever model is on).
  static void check_settings(const ContactSettings&) {}
  /// Forgets what a previous step left for the next one (a solver's warm start): Batch's reset.
  template <class S>
  static void forget_warm_start(DataTpl<S>&) {}
  /// Before step_vjp re-runs the step it differentiates (the PGS step is differentiated from a cold start).
  template <class S>
  static void before_step_vjp(DataTpl<S>&) {}
  /// Whether step_jacobian takes this model's step by reverse mode (a row of the model that the
  /// analytical Jacobian does not cover).
  static bool jacobian_by_reverse_mode(const Model&) { return false; }
  /// Contact k's normal force over the last step [N] (sensors), of data.ncontacts = nc contacts.
  template <class S>
  static S normal_force(const ModelTpl<S>&, const DataTpl<S>&, int /*k*/, int /*nc*/, const S& /*dt*/) {
    return S(0);
  }
};

}  // namespace gradyn
