// A closed-loop policy inside the rollout (paper 002, Eq. 4; paper 003's policy enhancement): at every
// step a dense network (nn/dense.hpp) maps an observation to the actuators' controls, and the step
// runs under them. The whole loop, and its adjoint with respect to the policy's weights, the initial
// state, the world's task parameters and every model parameter, runs in C++:
//
//   policy_rollout       T steps of  ctrl_t = net(obs(q_t, v_t, t dt, task)),  (q, v) <- step(ctrl_t)
//   policy_rollout_vjp   the reverse sweep: step_vjp, then the network's and the observation's VJPs
//
// Observations are named (policy_observations lists them for a model):
//   "<joint>.q"         the position of a 1-DoF joint (revolute, continuous, prismatic)
//   "<joint>.v"         the velocity of a 1-DoF joint; "<joint>.v[k]" DoF k of a multi-DoF joint
//   "clock.sin(<f>)"    sin(2 pi f t), t = step index x dt; "clock.cos(<f>)" likewise (f in Hz)
//   "task[<k>]"         entry k of the world's task parameters (a target, a commanded speed)
//   "memory[<k>]"       entry k of the policy's memory: a recurrent policy (paper 002, Eq. 3) has
//                       `memory` outputs after its controls, fed back as these inputs at the next
//                       step (zero at the first)
//   "sensor.<name>"     a one-entry sensor of the model (model.sensors; MJCF <sensor>); "sensor.<name>[k]"
//                       entry k of a longer one (sensors/sensors.hpp): a body's or site's pose
//                       (framepos, framequat), its velocities (framelinvel, frameangvel), an IMU's
//                       angular rate (gyro), read at the current state. Accelerometer and touch
//                       read a step, so the policy sees the last step's (step_sensor_readings of
//                       step t-1, zero at t = 0; as MuJoCo's sensordata after mj_step): an IMU's
//                       acceleration, differentiated through the two states it is made of, and a
//                       contact's normal force (a contact flag), which carries no gradient (the
//                       contact solver's forces are not differentiated through a sensor). Observing
//                       these makes the adjoint replay the closed loop forward once more.
// The network's outputs are the model's controls, one per actuator in order (model.nu()), then
// the memory.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gradyn/model/params.hpp"
#include "gradyn/nn/dense.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

struct PolicyObservation {
  enum class Kind : std::uint8_t { Position, Velocity, ClockSin, ClockCos, Task, Memory, Sensor, StepSensor } kind =
      Kind::Position;
  int index = 0;           // entry of q (Position), of v (Velocity), of the task vector (Task), of the memory
                           // or of the sensor readings (Sensor: at the state; StepSensor: of the last step)
  double frequency = 0.0;  // ClockSin, ClockCos: in Hz
  std::string name;
};

struct Policy {
  DenseShape shape;  // inputs: observations.size(); outputs: the model's nu, then memory
  std::vector<PolicyObservation> observations;
  int task_size = 0;  // entries of the task vector the observations read (1 + the largest index)
  int memory = 0;     // recurrent state carried from one step to the next (0: feed-forward)
  bool reads_sensors = false;       // some observation is a sensor's at the state: read at every step
  bool reads_step_sensors = false;  // some observation is an accelerometer's or a touch sensor's
  bool open_loop = false;  // it reads task entries alone (no state, clock or memory): its controls are
                           // the same at every step, so the network runs once per rollout (and once
                           // in the adjoint, on the controls' adjoint summed over the steps)
};

/// Every observation name the model offers (without the clock and task forms, which take numbers).
std::vector<std::string> policy_observations(const Model& model);

/// The policy reading `observations` (names as above) through hidden layers of the given widths,
/// with `memory` recurrent outputs. Throws ArgumentError naming an unknown observation and listing
/// the valid ones, a memory[k] past the memory, or when the model has no actuators.
Policy make_policy(const Model& model, const std::vector<std::string>& observations, const std::vector<int>& hidden,
                   Activation hidden_activation, Activation output_activation, int memory = 0);

/// Throws ArgumentError naming expected and actual sizes unless weights and task fit the policy.
void check_policy_arguments(const Model& model, const Policy& policy, Eigen::Index weights, Eigen::Index task);

/// Scratch of a policy rollout and its adjoint, sized once.
struct PolicyWorkspace {
  PolicyWorkspace(const Model& model, const Policy& policy);
  DenseWorkspace net;
  Eigen::VectorXd ctrl, no_torque, q_bar, v_bar, tau_bar, ctrl_bar, lambda_q, lambda_v;
  Eigen::VectorXd memory, output_bar, memory_bar;  // the recurrent state, the outputs' adjoint, the memory's
  // Sensor observations: the model's readings and their adjoint; zero step inputs for the sensors a
  // policy cannot read (accelerometer: qacc; touch: one normal force per contact), and their adjoints.
  Eigen::VectorXd readings, readings_bar, zero_qacc, qacc_bar, zero_contact_forces, contact_forces_bar;
  // Accelerometer and touch observations: the last step's readings (forward), every step's (the
  // adjoint's replay, T x nsensordata), their adjoint, the step's qacc and contact normal forces, and
  // the adjoint of the state before the last step that they send back (added one step later).
  Eigen::VectorXd step_readings, step_readings_bar, qacc, contact_forces, pending_q_bar, pending_v_bar;
  Eigen::VectorXd replay_q, replay_v;  // the replayed step's next state (not used: the trajectory's is)
  Eigen::VectorXd ctrl_bar_sum;        // an open-loop policy's adjoint: the controls' over every step
  MatrixXr<double> step_readings_replay;
  MatrixXr<double> memories;  // the adjoint's replay: the memory at every step (T x memory)
  // The adjoint's steps a chunk at a time (nn/dense_batch.hpp): each row one step's network input,
  // layer z and outputs (for a closed-loop policy without sensors, the network of the whole chunk is
  // recomputed at once) and layer z adjoints, which go to the weights' adjoint once per chunk.
  static constexpr int kChunk = 64;
  MatrixXr<double> chunk_inputs, chunk_pres, chunk_posts, chunk_z_bars;
  Eigen::VectorXd chunk_weights_bar;  // one chunk's weight adjoint, added to the caller's
  int chunk_rows = 0;
};

/// T steps of the closed loop from (q0, v0): qs (T+1, nq), vs (T+1, nv), ctrls (T, nu) (the policy's
/// outputs; the actuators clamp them to their ctrlrange), status[t] the step's Status flags (a step
/// never throws for numerical trouble).
void policy_rollout(const Model& model, Data& data, const Policy& policy, const VecRef<double>& weights,
                    const VecRef<double>& task, const VecRef<double>& q0, const VecRef<double>& v0,
                    const StepOptions& options, PolicyWorkspace& work, RowsOut<double> qs, RowsOut<double> vs,
                    RowsOut<double> ctrls, std::span<std::uint32_t> status);

/// Adjoint of policy_rollout given its trajectory (qs, vs) and the adjoints of qs, vs and (when not
/// empty) ctrls. decay: the adjoint carried from step t+1 back to step t is multiplied by it (paper
/// 002, section 3.2; 1: the exact gradient). clip_norm > 0: the adjoint carried back to step t (the
/// state's and the memory's together) is scaled down to that norm when it is longer (gradient-norm
/// clipping through time, after the decay; 0: no clipping). Accumulates into q0_bar, v0_bar,
/// weights_bar, task_bar and model_bar (+=).
void policy_rollout_vjp(const Model& model, Data& data, const Policy& policy, const VecRef<double>& weights,
                        const VecRef<double>& task, const RowsRef<double>& qs, const RowsRef<double>& vs,
                        const StepOptions& options, const RowsRef<double>& qs_bar, const RowsRef<double>& vs_bar,
                        const RowsRef<double>& ctrls_bar, double decay, PolicyWorkspace& work, VecOut<double> q0_bar,
                        VecOut<double> v0_bar, VecOut<double> weights_bar, VecOut<double> task_bar,
                        ModelTangent& model_bar, double clip_norm = 0.0);

}  // namespace gradyn
