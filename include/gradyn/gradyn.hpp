// The main C++ API (collision/, contact/, dynamics/actuators.hpp and kinematics_vjp.hpp are
// included separately).
#pragma once

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/jacobian.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/dynamics/rnea_derivatives.hpp"
#include "gradyn/grad/gradcheck.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/data.hpp"
#include "gradyn/model/model.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"
#include "gradyn/spatial/spatial.hpp"
