// Policies inside the rollout (control/policy.hpp): the observation names, the forward closed loop.
#include "gradyn/control/policy.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "gradyn/model/detail/joint_quantities.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/nn/dense_batch.hpp"
#include "gradyn/sensors/step_sensors.hpp"

namespace gradyn {

namespace {

std::string valid_names(const Model& model) {
  std::ostringstream s;
  for (const std::string& n : policy_observations(model)) s << "'" << n << "', ";
  s << "'clock.sin(<Hz>)', 'clock.cos(<Hz>)', 'task[<k>]', 'memory[<k>]' (with memory > k)";
  return s.str();
}

// "clock.sin(1.5)" -> 1.5; false when the text is not "<prefix><number>)".
bool parse_call(const std::string& name, const std::string& prefix, double& value) {
  if (name.rfind(prefix, 0) != 0 || name.back() != ')') return false;
  const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - 1);
  try {
    size_t used = 0;
    value = std::stod(number, &used);
    return used == number.size() && std::isfinite(value);
  } catch (const std::exception&) {
    return false;
  }
}

// "task[3]" with prefix "task[" -> 3; false when the text is not "<prefix><digits>]".
bool parse_index(const std::string& name, const std::string& prefix, int& index) {
  if (name.rfind(prefix, 0) != 0 || name.back() != ']') return false;
  const std::string number = name.substr(prefix.size(), name.size() - prefix.size() - 1);
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) return false;
  index = std::stoi(number);
  return true;
}

// "sensor.<name>" (a one-entry sensor) or "sensor.<name>[k]" -> (the sensor, the readings entry);
// a null sensor when the name is not of that form or names no sensor. Throws for an entry past the
// sensor's or a missing [k].
std::pair<const Sensor*, int> sensor_entry(const Model& model, const std::string& name) {
  const std::string prefix = "sensor.";
  if (name.rfind(prefix, 0) != 0) return {nullptr, -1};
  std::string sensor = name.substr(prefix.size());
  int k = -1;
  const size_t bracket = sensor.find('[');
  if (bracket != std::string::npos) {
    if (!parse_index(sensor.substr(bracket), "[", k)) return {nullptr, -1};
    sensor = sensor.substr(0, bracket);
  }
  const int id = model.sensor_id(sensor);
  if (id < 0) return {nullptr, -1};
  const Sensor& s = model.sensors[static_cast<size_t>(id)];
  if (k < 0 && s.dim() > 1)
    throw ArgumentError("observation '" + name + "': sensor '" + sensor + "' has " + std::to_string(s.dim()) +
                        " entries; name one, e.g. 'sensor." + sensor + "[0]'");
  if (k >= s.dim())
    throw ArgumentError("observation '" + name + "': sensor '" + sensor + "' has " + std::to_string(s.dim()) +
                        " entries (0 to " + std::to_string(s.dim() - 1) + ")");
  return {&s, s.adr + std::max(k, 0)};
}

bool any_sensor_of(const Model& model, SensorKind kind) {
  return std::any_of(model.sensors.begin(), model.sensors.end(), [&](const Sensor& s) { return s.kind == kind; });
}

// sensor_readings' step inputs have these sizes: nv for qacc when the model has an accelerometer,
// data.ncontacts normal forces when it has a touch sensor, else none.
Eigen::Index qacc_size(const Model& model) { return any_sensor_of(model, SensorKind::Accelerometer) ? model.nv : 0; }
Eigen::Index forces_size(const Model& model, const Data& data) {
  return any_sensor_of(model, SensorKind::Touch) ? data.ncontacts : 0;
}

// The contact-sized buffers, sized for data's contacts (once: their capacity is fixed).
void size_contact_buffers(const Data& data, PolicyWorkspace& work) {
  const auto contacts = static_cast<Eigen::Index>(data.contacts.size());
  if (work.zero_contact_forces.size() != contacts) {
    work.zero_contact_forces.setZero(contacts);
    work.contact_forces_bar.setZero(contacts);
    work.contact_forces.setZero(contacts);
  }
}

// The readings at the state (q, v) into work.readings (the step sensors' entries, read with zero
// step inputs, are not used).
void read_sensors(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                  PolicyWorkspace& work) {
  size_contact_buffers(data, work);
  sensor_readings<double>(model, data, q, v, work.zero_qacc.head(qacc_size(model)),
                          work.zero_contact_forces.head(forces_size(model, data)), work.readings);
}

// The readings of the step data has just taken from (q, v) to v_next into out: the accelerometer's
// qacc = (v_next - v) / dt, touch's the step's contact normal forces.
void read_step_sensors(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                       const VecRef<double>& v_next, double dt, PolicyWorkspace& work, VecOut<double> out) {
  size_contact_buffers(data, work);
  work.qacc = (v_next - v) / dt;
  const Eigen::Index nf = forces_size(model, data);
  if (nf > 0) step_contact_normal_forces<double>(model, data, dt, work.contact_forces);
  sensor_readings<double>(model, data, q, v, work.qacc.head(qacc_size(model)), work.contact_forces.head(nf), out);
}

// The observation vector at step t (work.memory: the recurrent state entering it; last_step: the
// step sensors' readings of step t - 1) into work.net.input.
void observe(const Model& model, Data& data, const Policy& policy, const VecRef<double>& q, const VecRef<double>& v,
             double time, const VecRef<double>& task, const VecRef<double>& last_step, PolicyWorkspace& work) {
  using K = PolicyObservation::Kind;
  if (policy.reads_sensors) read_sensors(model, data, q, v, work);
  Eigen::VectorXd& out = work.net.input;
  for (size_t i = 0; i < policy.observations.size(); ++i) {
    const PolicyObservation& o = policy.observations[i];
    switch (o.kind) {
      case K::Position: out[i] = q[o.index]; break;
      case K::Velocity: out[i] = v[o.index]; break;
      case K::ClockSin: out[i] = std::sin(2 * std::numbers::pi * o.frequency * time); break;
      case K::ClockCos: out[i] = std::cos(2 * std::numbers::pi * o.frequency * time); break;
      case K::Task: out[i] = task[o.index]; break;
      case K::Memory: out[i] = work.memory[o.index]; break;
      case K::Sensor: out[i] = work.readings[o.index]; break;
      case K::StepSensor: out[i] = last_step[o.index]; break;
    }
  }
}

// Gradient-norm clipping through time (no longer the exact gradient, by design): the adjoint carried
// back one step (the state's, the memory's, the step sensors' pending one) scaled down to clip_norm.
void clip_carried_adjoint(double clip_norm, PolicyWorkspace& work) {
  if (!(clip_norm > 0)) return;
  const double norm = std::sqrt(work.lambda_q.squaredNorm() + work.lambda_v.squaredNorm() +
                                work.memory_bar.squaredNorm() + work.pending_q_bar.squaredNorm() +
                                work.pending_v_bar.squaredNorm());
  if (norm > clip_norm) {
    const double scale = clip_norm / norm;
    work.lambda_q *= scale, work.lambda_v *= scale, work.memory_bar *= scale;
    work.pending_q_bar *= scale, work.pending_v_bar *= scale;
  }
}

}  // namespace

std::vector<std::string> policy_observations(const Model& model) {
  std::vector<std::string> names;
  for (const detail::JointQuantity& x : detail::joint_quantities(model)) names.push_back(x.name);
  for (const Sensor& s : model.sensors) {
    if (s.dim() == 1) names.push_back("sensor." + s.name);
    else
      for (int k = 0; k < s.dim(); ++k) names.push_back("sensor." + s.name + "[" + std::to_string(k) + "]");
  }
  return names;
}

Policy make_policy(const Model& model, const std::vector<std::string>& observations, const std::vector<int>& hidden,
                   Activation hidden_activation, Activation output_activation, int memory) {
  if (model.nu() == 0)
    throw ArgumentError("a policy drives the model's actuators, and this model has none (add actuators, e.g. "
                        "ModelBuilder.add_actuator or MJCF <actuator>)");
  if (observations.empty()) throw ArgumentError("observations: give at least one (valid: " + valid_names(model) + ")");
  if (memory < 0) throw ArgumentError("memory: expected a number of recurrent outputs >= 0, got " + std::to_string(memory));
  Policy policy;
  policy.memory = memory;
  const std::vector<detail::JointQuantity> joint = detail::joint_quantities(model);
  for (const std::string& name : observations) {
    PolicyObservation o;
    o.name = name;
    double frequency = 0;
    int task = 0;
    auto found = std::find_if(joint.begin(), joint.end(), [&](const detail::JointQuantity& x) { return x.name == name; });
    if (found != joint.end()) {
      o.kind = found->position ? PolicyObservation::Kind::Position : PolicyObservation::Kind::Velocity;
      o.index = found->position ? found->q_index : found->v_index;
    } else if (const auto [sensor, entry] = sensor_entry(model, name); sensor != nullptr) {
      const bool of_step = sensor_needs_step(sensor->kind);
      o.kind = of_step ? PolicyObservation::Kind::StepSensor : PolicyObservation::Kind::Sensor, o.index = entry;
      (of_step ? policy.reads_step_sensors : policy.reads_sensors) = true;
    } else if (parse_call(name, "clock.sin(", frequency)) {
      o.kind = PolicyObservation::Kind::ClockSin, o.frequency = frequency;
    } else if (parse_call(name, "clock.cos(", frequency)) {
      o.kind = PolicyObservation::Kind::ClockCos, o.frequency = frequency;
    } else if (parse_index(name, "task[", task)) {
      o.kind = PolicyObservation::Kind::Task, o.index = task;
      policy.task_size = std::max(policy.task_size, task + 1);
    } else if (parse_index(name, "memory[", task)) {
      if (task >= memory)
        throw ArgumentError("observation '" + name + "' reads past the policy's memory of " + std::to_string(memory) +
                            " entries (give memory=" + std::to_string(task + 1) + " or more)");
      o.kind = PolicyObservation::Kind::Memory, o.index = task;
    } else {
      throw ArgumentError("unknown observation '" + name + "'; valid: " + valid_names(model));
    }
    policy.observations.push_back(std::move(o));
  }
  policy.open_loop = memory == 0 && std::all_of(policy.observations.begin(), policy.observations.end(),
                                                [](const PolicyObservation& o) { return o.kind == PolicyObservation::Kind::Task; });
  policy.shape.widths = {static_cast<int>(observations.size())};
  for (int w : hidden) policy.shape.widths.push_back(w);
  policy.shape.widths.push_back(model.nu() + memory);
  policy.shape.hidden = hidden_activation;
  policy.shape.output = output_activation;
  check_dense_shape(policy.shape, "policy");
  return policy;
}

void check_policy_arguments(const Model& model, const Policy& policy, Eigen::Index weights, Eigen::Index task) {
  if (policy.shape.outputs() != model.nu() + policy.memory)
    throw ArgumentError("policy: its network has " + std::to_string(policy.shape.outputs()) +
                        " outputs but the model has nu = " + std::to_string(model.nu()) + " controls (and the policy " +
                        std::to_string(policy.memory) + " memory entries)");
  if (weights != policy.shape.param_count())
    throw ArgumentError("weights: expected shape (" + std::to_string(policy.shape.param_count()) + ",), got (" +
                        std::to_string(weights) + ",)");
  if (task < policy.task_size)
    throw ArgumentError("task: the policy reads task[" + std::to_string(policy.task_size - 1) +
                        "], so it needs at least " + std::to_string(policy.task_size) + " entries per world, got " +
                        std::to_string(task));
}

PolicyWorkspace::PolicyWorkspace(const Model& model, const Policy& policy)
    : net(policy.shape),
      ctrl(model.nu()),
      no_torque(Eigen::VectorXd::Zero(model.nv)),
      q_bar(model.nq),
      v_bar(model.nv),
      tau_bar(model.nv),
      ctrl_bar(model.nu()),
      lambda_q(model.nq),
      lambda_v(model.nv),
      memory(policy.memory),
      output_bar(policy.shape.outputs()),
      memory_bar(policy.memory),
      readings(model.nsensordata()),
      readings_bar(model.nsensordata()),
      zero_qacc(Eigen::VectorXd::Zero(model.nv)),
      qacc_bar(model.nv),
      step_readings(model.nsensordata()),
      step_readings_bar(model.nsensordata()),
      qacc(model.nv),
      pending_q_bar(model.nq),
      pending_v_bar(model.nv),
      replay_q(model.nq),
      replay_v(model.nv),
      ctrl_bar_sum(model.nu()),
      chunk_inputs(kChunk, policy.shape.inputs()),
      chunk_pres(kChunk, policy.shape.activation_count()),
      chunk_posts(kChunk, policy.shape.activation_count()),
      chunk_z_bars(kChunk, policy.shape.activation_count()),
      chunk_weights_bar(policy.shape.param_count()) {}

void policy_rollout(const Model& model, Data& data, const Policy& policy, const VecRef<double>& weights,
                    const VecRef<double>& task, const VecRef<double>& q0, const VecRef<double>& v0,
                    const StepOptions& options, PolicyWorkspace& work, RowsOut<double> qs, RowsOut<double> vs,
                    RowsOut<double> ctrls, std::span<std::uint32_t> status) {
  check_policy_arguments(model, policy, weights.size(), task.size());
  check_step_options(model.contact, options);
  const Eigen::Index T = ctrls.rows();
  if (qs.rows() != T + 1 || qs.cols() != model.nq || vs.rows() != T + 1 || vs.cols() != model.nv ||
      ctrls.cols() != model.nu() || static_cast<Eigen::Index>(status.size()) != T || q0.size() != model.nq ||
      v0.size() != model.nv)
    throw ArgumentError("policy rollout: the arrays disagree with the model (nq " + std::to_string(model.nq) +
                        ", nv " + std::to_string(model.nv) + ", nu " + std::to_string(model.nu()) + ")");
  qs.row(0) = q0.transpose();
  vs.row(0) = v0.transpose();
  work.memory.setZero();
  work.step_readings.setZero();  // no step before the first: the step sensors read zero
  for (Eigen::Index t = 0; t < T; ++t) {
    if (!policy.open_loop || t == 0) {  // (an open-loop policy's controls are those of step 0)
      observe(model, data, policy, qs.row(t).transpose(), vs.row(t).transpose(), static_cast<double>(t) * options.dt,
              task, work.step_readings, work);
      const auto output = dense_forward<double>(policy.shape, weights, work.net);
      work.ctrl = output.head(model.nu());
      work.memory = output.tail(policy.memory);
    }
    ctrls.row(t) = work.ctrl.transpose();
    data.status = kStatusOk;
    step<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), work.no_torque, work.ctrl, options.dt,
                 options.integrator, qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    status[static_cast<size_t>(t)] = data.status;
    if (policy.reads_step_sensors)
      read_step_sensors(model, data, qs.row(t).transpose(), vs.row(t).transpose(), vs.row(t + 1).transpose(),
                        options.dt, work, work.step_readings);
  }
}

void policy_rollout_vjp(const Model& model, Data& data, const Policy& policy, const VecRef<double>& weights,
                        const VecRef<double>& task, const RowsRef<double>& qs, const RowsRef<double>& vs,
                        const StepOptions& options, const RowsRef<double>& qs_bar, const RowsRef<double>& vs_bar,
                        const RowsRef<double>& ctrls_bar, double decay, PolicyWorkspace& work, VecOut<double> q0_bar,
                        VecOut<double> v0_bar, VecOut<double> weights_bar, VecOut<double> task_bar,
                        ModelTangent& model_bar, double clip_norm) {
  check_policy_arguments(model, policy, weights.size(), task.size());
  check_step_options(model.contact, options);
  const Eigen::Index T = qs.rows() - 1;
  if (T < 0 || qs.cols() != model.nq || vs.rows() != T + 1 || vs.cols() != model.nv || qs_bar.rows() != T + 1 ||
      qs_bar.cols() != model.nq || vs_bar.rows() != T + 1 || vs_bar.cols() != model.nv ||
      (ctrls_bar.size() != 0 && (ctrls_bar.rows() != T || ctrls_bar.cols() != model.nu())) ||
      q0_bar.size() != model.nq || v0_bar.size() != model.nv || weights_bar.size() != weights.size() ||
      task_bar.size() != task.size())
    throw ArgumentError("policy rollout adjoint: the arrays disagree with the trajectory (T " + std::to_string(T) +
                        ", nq " + std::to_string(model.nq) + ", nv " + std::to_string(model.nv) + ", nu " +
                        std::to_string(model.nu()) + ")");
  if (!(decay >= 0 && decay <= 1)) throw ArgumentError("decay: expected a number in [0, 1], got " + std::to_string(decay));
  if (!(clip_norm >= 0 && std::isfinite(clip_norm)))
    throw ArgumentError("clip_norm: expected a finite number >= 0 (0: no clipping), got " + std::to_string(clip_norm));
  using K = PolicyObservation::Kind;
  const int nu = model.nu(), H = policy.memory;
  // A recurrent policy's memory at every step, and the step sensors' readings of every step,
  // replayed forward (the states alone do not give them; the readings need each step's contacts).
  const bool step_sensors = policy.reads_step_sensors;
  work.memories.resize(T, H);
  if (step_sensors) work.step_readings_replay.resize(T, model.nsensordata());
  work.memory.setZero();
  work.step_readings.setZero();
  for (Eigen::Index t = 0; t < T && (H > 0 || step_sensors); ++t) {
    work.memories.row(t) = work.memory.transpose();
    observe(model, data, policy, qs.row(t).transpose(), vs.row(t).transpose(), static_cast<double>(t) * options.dt,
            task, work.step_readings, work);
    const auto output = dense_forward<double>(policy.shape, weights, work.net);
    work.memory = output.tail(H);
    if (!step_sensors) continue;
    work.ctrl = output.head(nu);
    step<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), work.no_torque, work.ctrl, options.dt,
                 options.integrator, work.replay_q, work.replay_v);
    read_step_sensors(model, data, qs.row(t).transpose(), vs.row(t).transpose(), vs.row(t + 1).transpose(),
                      options.dt, work, work.step_readings);
    work.step_readings_replay.row(t) = work.step_readings.transpose();
  }
  work.step_readings.setZero();  // from here on: the (zero) readings before the first step
  work.pending_q_bar.setZero(), work.pending_v_bar.setZero();
  work.lambda_q = qs_bar.row(T).transpose();
  work.lambda_v = vs_bar.row(T).transpose();
  work.memory_bar.setZero();  // the adjoint of the memory leaving step t (entering step t + 1)
  work.chunk_rows = 0;
  // The network again at each step (its z and outputs for its VJP). Where the observations depend on
  // the recorded states, time, task and memory alone (no sensor, which would read data), a chunk of
  // steps is recomputed at once, one matrix product per layer instead of one matrix-vector product
  // per layer and step (large networks are memory-bound). Rounding aside, the same controls.
  const bool batched_network = !policy.open_loop && !policy.reads_sensors && !step_sensors;
  for (Eigen::Index t = T - 1; t >= 0; --t) {
    if (H > 0) work.memory = work.memories.row(t).transpose();
    const VecRef<double> last_step = step_sensors && t > 0 ? VecRef<double>(work.step_readings_replay.row(t - 1).transpose())
                                                            : VecRef<double>(work.step_readings);
    if (batched_network) {
      if (work.chunk_rows == 0) {  // a new chunk: steps t, t - 1, ..., one row each
        const Eigen::Index rows = std::min<Eigen::Index>(PolicyWorkspace::kChunk, t + 1);
        for (Eigen::Index r = 0; r < rows; ++r) {
          if (H > 0) work.memory = work.memories.row(t - r).transpose();
          observe(model, data, policy, qs.row(t - r).transpose(), vs.row(t - r).transpose(),
                  static_cast<double>(t - r) * options.dt, task, last_step, work);
          work.chunk_inputs.row(r) = work.net.input.transpose();
        }
        dense_forward_rows<double>(policy.shape, weights, work.chunk_inputs.topRows(rows),
                                   work.chunk_pres.topRows(rows), work.chunk_posts.topRows(rows));
        if (H > 0) work.memory = work.memories.row(t).transpose();
      }
      const int row = work.chunk_rows;
      work.net.pre = work.chunk_pres.row(row).transpose();
      work.net.post = work.chunk_posts.row(row).transpose();
      work.ctrl = work.net.post.segment(policy.shape.activation_offset(policy.shape.layers() - 1), nu);
    } else if (!policy.open_loop || t == T - 1) {  // (an open-loop policy's controls are the same at every step)
      observe(model, data, policy, qs.row(t).transpose(), vs.row(t).transpose(), static_cast<double>(t) * options.dt,
              task, last_step, work);
      work.ctrl = dense_forward<double>(policy.shape, weights, work.net).head(nu);
    }
    work.q_bar.setZero(), work.v_bar.setZero(), work.tau_bar.setZero(), work.ctrl_bar.setZero();
    step_vjp<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), work.no_torque, work.ctrl, options.dt,
                     options.integrator, work.lambda_q, work.lambda_v, work.q_bar, work.v_bar, work.tau_bar,
                     work.ctrl_bar, model_bar);
    if (step_sensors) {  // what the observation at t + 1 sent back to this state through step t's readings
      work.q_bar += work.pending_q_bar;
      work.v_bar += work.pending_v_bar;
    }
    if (ctrls_bar.size() != 0) work.ctrl_bar += ctrls_bar.row(t).transpose();
    if (policy.open_loop) {  // the network's adjoint once, after the sweep, on the sum
      if (t == T - 1) work.ctrl_bar_sum.setZero();
      work.ctrl_bar_sum += work.ctrl_bar;
      if (t > 0) {
        work.lambda_q = decay * work.q_bar + qs_bar.row(t).transpose();
        work.lambda_v = decay * work.v_bar + vs_bar.row(t).transpose();
        clip_carried_adjoint(clip_norm, work);
        continue;
      }
      work.ctrl_bar = work.ctrl_bar_sum;
    }
    work.output_bar.head(nu) = work.ctrl_bar;
    work.output_bar.tail(H) = work.memory_bar;
    // The network's adjoint: its input's now, its weights' a chunk of steps at a time.
    const int row = work.chunk_rows++;
    if (!batched_network) {
      work.chunk_inputs.row(row) = work.net.input.transpose();
      work.chunk_posts.row(row) = work.net.post.transpose();
    }
    work.net.input_bar.setZero();
    dense_vjp_deltas<double>(policy.shape, weights, work.net, work.output_bar, work.net.input_bar,
                             work.chunk_z_bars.row(row).transpose());
    if (work.chunk_rows == PolicyWorkspace::kChunk || t == 0) {
      dense_weight_grads<double>(policy.shape, work.chunk_inputs.topRows(work.chunk_rows),
                                 work.chunk_posts.topRows(work.chunk_rows), work.chunk_z_bars.topRows(work.chunk_rows),
                                 work.chunk_weights_bar);
      weights_bar += work.chunk_weights_bar;
      work.chunk_rows = 0;
    }
    work.memory_bar.setZero();
    work.readings_bar.setZero();
    work.step_readings_bar.setZero();
    for (size_t i = 0; i < policy.observations.size(); ++i) {
      const PolicyObservation& o = policy.observations[i];
      const double g = work.net.input_bar[static_cast<Eigen::Index>(i)];
      if (o.kind == K::Position) work.q_bar[o.index] += g;
      else if (o.kind == K::Velocity) work.v_bar[o.index] += g;
      else if (o.kind == K::Task) task_bar[o.index] += g;
      else if (o.kind == K::Memory) work.memory_bar[o.index] += g;
      else if (o.kind == K::Sensor) work.readings_bar[o.index] += g;
      else if (o.kind == K::StepSensor) work.step_readings_bar[o.index] += g;
    }
    if (policy.reads_sensors) {  // the sensors' adjoint at (q_t, v_t), into the state's
      size_contact_buffers(data, work);
      const Eigen::Index na = qacc_size(model), nf = forces_size(model, data);
      sensor_readings_vjp<double>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), work.zero_qacc.head(na),
                                  work.zero_contact_forces.head(nf), work.readings_bar, work.q_bar, work.v_bar,
                                  work.qacc_bar.head(na), work.contact_forces_bar.head(nf));
    }
    if (step_sensors) {
      // The readings of step t - 1 at (q_{t-1}, v_{t-1}) with qacc = (v_t - v_{t-1}) / dt: their adjoint
      // reaches v_t now and state t - 1 at the next iteration (pending). Touch readings come from the
      // contact solver's forces, which are held: their adjoint stops here.
      work.pending_q_bar.setZero(), work.pending_v_bar.setZero();
      if (t > 0 && !work.step_readings_bar.isZero(0)) {
        size_contact_buffers(data, work);
        const Eigen::Index na = qacc_size(model), nf = forces_size(model, data);
        work.qacc = (vs.row(t) - vs.row(t - 1)).transpose() / options.dt;
        work.qacc_bar.setZero();
        sensor_readings_vjp<double>(model, data, qs.row(t - 1).transpose(), vs.row(t - 1).transpose(),
                                    work.qacc.head(na), work.zero_contact_forces.head(nf), work.step_readings_bar,
                                    work.pending_q_bar, work.pending_v_bar, work.qacc_bar.head(na),
                                    work.contact_forces_bar.head(nf));
        work.v_bar += work.qacc_bar / options.dt;
        work.pending_v_bar -= work.qacc_bar / options.dt;
      }
    }
    // Carried back one step, decayed (paper 002's truncation), plus the loss's own adjoint at t;
    // the memory's adjoint is part of the carried state and decays with it.
    work.lambda_q = decay * work.q_bar + qs_bar.row(t).transpose();
    work.lambda_v = decay * work.v_bar + vs_bar.row(t).transpose();
    work.memory_bar *= decay;
    clip_carried_adjoint(clip_norm, work);
  }
  q0_bar += work.lambda_q;
  v0_bar += work.lambda_v;
}

}  // namespace gradyn
