// Everything in gradyn's C++ API.
#pragma once

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/jacobian.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/rnea.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/data.hpp"
#include "gradyn/model/model.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/spatial/spatial.hpp"
