// One iLQR line-search candidate (control/ilqr.hpp): the plan's closed loop rolled out in C++, so a
// batch of candidates runs on the batch threads without a Python call per step.
#include <sstream>

#include "gradyn/control/ilqr.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

void feedback_rollout(const Model& model, Data& data, const RowsRef<double>& q_ref, const RowsRef<double>& v_ref,
                      const RowsRef<double>& u_ref, const RowsRef<double>& k, const RowsRef<double>& K, double alpha,
                      const VecRef<double>& u_min, const VecRef<double>& u_max, ControlInput input,
                      const StepOptions& options, RowsOut<double> qs, RowsOut<double> vs, RowsOut<double> us,
                      std::span<std::uint32_t> status) {
  const Eigen::Index T = u_ref.rows(), nu = u_ref.cols(), nq = model.nq, nv = model.nv;
  const Eigen::Index expected_nu = input == ControlInput::Ctrl ? model.nu() : nv;
  if (nu != expected_nu || q_ref.rows() != T + 1 || q_ref.cols() != nq || v_ref.rows() != T + 1 ||
      v_ref.cols() != nv || k.rows() != T || k.cols() != nu || K.rows() != T * nu || K.cols() != 2 * nv ||
      u_min.size() != nu || u_max.size() != nu || qs.rows() != T + 1 || qs.cols() != nq || vs.rows() != T + 1 ||
      vs.cols() != nv || us.rows() != T || us.cols() != nu || static_cast<Eigen::Index>(status.size()) != T) {
    std::ostringstream s;
    s << "feedback rollout: the plan's arrays disagree with the model (nq " << nq << ", nv " << nv << ", " << nu
      << " controls, T " << T << ")";
    throw ArgumentError(s.str());
  }
  check_step_options(model.contact, options);
  Eigen::VectorXd error(2 * nv), u(nu), dq(nv);
  const Eigen::VectorXd no_torque = Eigen::VectorXd::Zero(nv);
  qs.row(0) = q_ref.row(0);
  vs.row(0) = v_ref.row(0);
  for (Eigen::Index t = 0; t < T; ++t) {
    difference<double>(model, q_ref.row(t).transpose(), qs.row(t).transpose(), dq);
    error.head(nv) = dq;
    error.tail(nv) = (vs.row(t) - v_ref.row(t)).transpose();
    u = u_ref.row(t).transpose() + alpha * k.row(t).transpose();
    u.noalias() += K.middleRows(t * nu, nu) * error;
    u = u.cwiseMax(u_min).cwiseMin(u_max);
    us.row(t) = u.transpose();
    data.status = kStatusOk;
    if (input == ControlInput::Ctrl)
      step<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), no_torque, u, options.dt,
                   options.integrator, qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    else
      step<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), u, options.dt, options.integrator,
                   qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    status[static_cast<size_t>(t)] = data.status;
  }
}

}  // namespace gradyn
