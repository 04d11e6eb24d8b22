// A Model as bytes and back: what Python's pickle and copy.deepcopy of a gradyn.Model use, e.g. to
// send models to other processes (multiprocessing, Ray).
//
// Format, version kModelFormatVersion, little-endian throughout:
//   magic    12 bytes  "GRADYN-MODEL"
//   version  u32       the format version of the writer
//   length   u64       bytes of payload that follow
//   checksum u64       FNV-1a (64-bit) of the payload
//   payload            every stored field of the Model in a fixed order (src/model/serialize.cpp)
// Doubles are written as their IEEE-754 bits, so a round trip gives the same numbers bit for bit
// (infinities, NaNs and signed zeros included); strings as a u64 length and their bytes;
// containers as a u64 count and their elements; enums as their u8 value. Fields derived from
// others (nq, nv, idx_q, idx_v, joint_nq_, joint_nv_, children) are not written: the reader
// recomputes them as ModelBuilder does. A convex hull shared by several geoms is written once and
// is shared again after reading.
//
// Versioning: a change to the payload (a new Model field, say) must bump kModelFormatVersion.
// This build reads its own version only and names both versions when they differ.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gradyn/model/model.hpp"

namespace gradyn {

inline constexpr std::uint32_t kModelFormatVersion = 8;  // 2: ContactSettings::max_correction_velocity; 3: sensors;
                                                        // 4: frictionloss, joint couplings, body connections;
                                                        // 5: networks at contact sites (Network::other_body),
                                                        // cameras (Model::cameras, FrameKind::Camera);
                                                        // 6: welds (BodyConnection::weld, rotation);
                                                        // 7: fixed tendons (Model::tendons);
                                                        // 8: tendon couplings (JointCoupling::tendons)

/// The model as bytes in the format above. deserialize_model(serialize_model(m)) equals m in every
/// field, so every algorithm gives bit-identical results on it.
std::string serialize_model(const Model& model);

/// The model that serialize_model wrote. Throws ModelError (element "serialized model") saying what
/// is wrong when the bytes are not such a model: not starting with the magic ("not a gradyn model
/// pickle"), another format version ("made by format version N, this gradyn reads M"), truncated
/// or with trailing bytes, a checksum mismatch (bytes changed after writing), or contents that do
/// not form a consistent model (an index out of range, a size that does not match). Never reads
/// past the end of `bytes`.
Model deserialize_model(std::string_view bytes);

}  // namespace gradyn
