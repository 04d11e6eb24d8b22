// A model as two flat arrays (integers and reals) that one pointer each can carry to a GPU, and
// the view that reads them. The per-world kernels (flat/step.hpp) read only this view, so the same
// code runs on the CPU (g++) and on a CUDA device (nvcc). flat/export.hpp builds the arrays from a
// Model and says what a flat model cannot hold.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GRADYN_HD __host__ __device__ __forceinline__
#else
#define GRADYN_HD inline
#endif

namespace gradyn::flat {

inline constexpr std::int32_t kMagic = 0x59445247;  // "GRDY"
inline constexpr std::int32_t kVersion = 2;

enum FlatJoint : std::int32_t { kHinge = 0, kSlide = 1, kFree = 2 };
enum FlatGeom : std::int32_t { kPlane = 0, kSphere = 1, kCapsule = 2, kBox = 3 };  // GeomType's numbers
enum FlatActuator : std::int32_t { kMotorLike = 0, kServo = 1 };  // affine (motor, position, velocity, general) or paper 002's servo
enum FlatContact : std::int32_t { kContactNone = 0, kContactPenalty = 1, kContactPgs = 2 };

// Status bits, the same numbers as gradyn::StatusFlag (model/data.hpp).
inline constexpr std::uint32_t kFlatNonFinite = 1u << 0, kFlatSingularInertia = 1u << 1,
                               kFlatContactOverflow = 1u << 2, kFlatSolverNotConverged = 1u << 4,
                               kFlatDeepPenetration = 1u << 5;

// Integer layout: header, then per body, per actuator, per geom, per pair.
inline constexpr int kIntHeader = 12;  // magic, version, nb, nq, nv, nu, ngeom, npairs, contact model
                                       // (FlatContact), pgs_iterations, contacts a step may hold,
                                       // constraint rows a step may need (3 per contact + joint limits)
inline constexpr int kIntsPerBody = 4;  // parent, joint type, first q index, first v index
inline constexpr int kIntsPerActuator = 5;  // kind, q index, v index, ctrl limited, force limited
inline constexpr int kIntsPerGeom = 2;  // type, body (-1: world)
inline constexpr int kIntsPerPair = 2;  // geom a, geom b: a has the lower type (the routine's order)

// Real layout: header, then per body, per DoF (3 arrays of nv), per coordinate (3 arrays of nq),
// per actuator, per geom, per pair.
inline constexpr int kRealHeader = 19;  // gravity (3), contact: stiffness, exponent, damping,
                                        // velocity_scale, margin, limit_stiffness, limit_damping,
                                        // max_penetration, (unused), and PGS's erp, slop, cfm,
                                        // restitution_threshold, max_correction_velocity,
                                        // pgs_tolerance, limit_margin
inline constexpr int kRealsPerBody = 28;  // joint placement R (9, row-major), p (3), axis (3),
                                          // mass, com (3), rotational inertia about the com (9)
inline constexpr int kRealsPerActuator = 14;  // gear, gain (3), bias (3), servo kp, kv, velocity
                                              // limit, ctrl lower, upper, force lower, upper
inline constexpr int kRealsPerGeom = 16;  // placement R (9), p (3), size (3), friction
inline constexpr int kRealsPerPair = 2;   // the pair's Coulomb coefficient and restitution (the larger ones)

/// Read access to a flat model whose arrays hold scalars of type S (double or float). Plain
/// pointers and offsets: copyable to a device kernel by value.
template <class S>
struct FlatModel {
  const std::int32_t* ints = nullptr;
  const S* reals = nullptr;
  int nb = 0, nq = 0, nv = 0, nu = 0, ngeom = 0, npairs = 0;
  // the header's contact entries, held here as the sizes are: a launcher on the host reads them
  // from a view whose arrays live on the GPU
  int contact = 0, iterations = 0, contacts = 0, rows = 0;
  int body_i = 0, act_i = 0, geom_i = 0, pair_i = 0;                     // offsets in ints
  int body_r = 0, dof_r = 0, coord_r = 0, act_r = 0, geom_r = 0, pair_r = 0;  // offsets in reals

  GRADYN_HD static FlatModel view(const std::int32_t* ints, const S* reals) {
    FlatModel m;
    m.ints = ints;
    m.reals = reals;
    m.nb = ints[2], m.nq = ints[3], m.nv = ints[4], m.nu = ints[5], m.ngeom = ints[6], m.npairs = ints[7];
    m.contact = ints[8], m.iterations = ints[9], m.contacts = ints[10], m.rows = ints[11];
    m.body_i = kIntHeader;
    m.act_i = m.body_i + kIntsPerBody * m.nb;
    m.geom_i = m.act_i + kIntsPerActuator * m.nu;
    m.pair_i = m.geom_i + kIntsPerGeom * m.ngeom;
    m.body_r = kRealHeader;
    m.dof_r = m.body_r + kRealsPerBody * m.nb;
    m.coord_r = m.dof_r + 3 * m.nv;
    m.act_r = m.coord_r + 3 * m.nq;
    m.geom_r = m.act_r + kRealsPerActuator * m.nu;
    m.pair_r = m.geom_r + kRealsPerGeom * m.ngeom;
    return m;
  }
  GRADYN_HD int total_ints() const { return pair_i + kIntsPerPair * npairs; }
  GRADYN_HD int total_reals() const { return pair_r + kRealsPerPair * npairs; }

  // --- bodies ---
  GRADYN_HD int parent(int i) const { return ints[body_i + kIntsPerBody * i]; }
  GRADYN_HD int joint(int i) const { return ints[body_i + kIntsPerBody * i + 1]; }
  GRADYN_HD int iq(int i) const { return ints[body_i + kIntsPerBody * i + 2]; }
  GRADYN_HD int iv(int i) const { return ints[body_i + kIntsPerBody * i + 3]; }
  GRADYN_HD const S* placement_R(int i) const { return reals + body_r + kRealsPerBody * i; }
  GRADYN_HD const S* placement_p(int i) const { return reals + body_r + kRealsPerBody * i + 9; }
  GRADYN_HD const S* axis(int i) const { return reals + body_r + kRealsPerBody * i + 12; }
  GRADYN_HD S mass(int i) const { return reals[body_r + kRealsPerBody * i + 15]; }
  GRADYN_HD const S* com(int i) const { return reals + body_r + kRealsPerBody * i + 16; }
  GRADYN_HD const S* inertia_com(int i) const { return reals + body_r + kRealsPerBody * i + 19; }
  // --- DoFs and coordinates ---
  GRADYN_HD S damping(int k) const { return reals[dof_r + k]; }
  GRADYN_HD S armature(int k) const { return reals[dof_r + nv + k]; }
  GRADYN_HD S stiffness(int k) const { return reals[dof_r + 2 * nv + k]; }
  GRADYN_HD S q_rest(int k) const { return reals[coord_r + k]; }
  GRADYN_HD S lower(int k) const { return reals[coord_r + nq + k]; }
  GRADYN_HD S upper(int k) const { return reals[coord_r + 2 * nq + k]; }
  // --- actuators ---
  GRADYN_HD const std::int32_t* actuator_ints(int k) const { return ints + act_i + kIntsPerActuator * k; }
  GRADYN_HD const S* actuator_reals(int k) const { return reals + act_r + kRealsPerActuator * k; }
  // --- geoms and pairs ---
  GRADYN_HD int geom_type(int g) const { return ints[geom_i + kIntsPerGeom * g]; }
  GRADYN_HD int geom_body(int g) const { return ints[geom_i + kIntsPerGeom * g + 1]; }
  GRADYN_HD const S* geom_R(int g) const { return reals + geom_r + kRealsPerGeom * g; }
  GRADYN_HD const S* geom_p(int g) const { return reals + geom_r + kRealsPerGeom * g + 9; }
  GRADYN_HD const S* geom_size(int g) const { return reals + geom_r + kRealsPerGeom * g + 12; }
  GRADYN_HD int pair_a(int k) const { return ints[pair_i + kIntsPerPair * k]; }
  GRADYN_HD int pair_b(int k) const { return ints[pair_i + kIntsPerPair * k + 1]; }
  GRADYN_HD S pair_friction(int k) const { return reals[pair_r + kRealsPerPair * k]; }
  GRADYN_HD S pair_restitution(int k) const { return reals[pair_r + kRealsPerPair * k + 1]; }
  // --- settings ---
  GRADYN_HD const S* gravity() const { return reals; }
  GRADYN_HD S contact_stiffness() const { return reals[3]; }
  GRADYN_HD S contact_exponent() const { return reals[4]; }
  GRADYN_HD S contact_damping() const { return reals[5]; }
  GRADYN_HD S velocity_scale() const { return reals[6]; }
  GRADYN_HD S margin() const { return reals[7]; }
  GRADYN_HD S limit_stiffness() const { return reals[8]; }
  GRADYN_HD S limit_damping() const { return reals[9]; }
  GRADYN_HD S max_penetration() const { return reals[10]; }
  GRADYN_HD int contact_model() const { return contact; }
  GRADYN_HD bool penalty_on() const { return contact == kContactPenalty; }
  GRADYN_HD bool pgs_on() const { return contact == kContactPgs; }
  GRADYN_HD int pgs_iterations() const { return iterations; }
  GRADYN_HD int max_contacts() const { return contacts; }
  GRADYN_HD int max_rows() const { return rows; }
  GRADYN_HD S erp() const { return reals[12]; }
  GRADYN_HD S slop() const { return reals[13]; }
  GRADYN_HD S cfm() const { return reals[14]; }
  GRADYN_HD S restitution_threshold() const { return reals[15]; }
  GRADYN_HD S max_correction_velocity() const { return reals[16]; }
  GRADYN_HD S pgs_tolerance() const { return reals[17]; }
  GRADYN_HD S limit_margin() const { return reals[18]; }
};

}  // namespace gradyn::flat
