// The erp adjoint of one step (step_vjp of a fixed random loss) and the same derivative by central
// differences, for the tests of constraint rows whose Baumgarte targets read erp.
#pragma once

#include <utility>

#include "contact_scenes.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn::test {

/// (adjoint, central difference) of test::Loss(model, seed) at (q, v, tau) with respect to
/// model.contact.erp, dt = 1 ms.
inline std::pair<double, double> erp_gradient_and_central_difference(const Model& model, const Eigen::VectorXd& q,
                                                                     const Eigen::VectorXd& v,
                                                                     const Eigen::VectorXd& tau, unsigned seed) {
  const Loss loss(model, seed);
  Data fresh(model);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                  tau_bar = Eigen::VectorXd::Zero(model.nv);
  ModelTangent bar(model);
  step_vjp<double>(model, fresh, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, loss.wq, loss.wv, q_bar, v_bar,
                   tau_bar, bar);
  const double h = 1e-6;
  Model mp = model, mm = model;
  mp.contact.erp += h;
  mm.contact.erp -= h;
  return {bar.contact.erp, (loss(mp, q, v, tau) - loss(mm, q, v, tau)) / (2 * h)};
}

}  // namespace gradyn::test
