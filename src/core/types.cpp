#include "gradyn/core/types.hpp"

#include <sstream>

#include "gradyn/model/errors.hpp"

namespace gradyn {

void check_size(const char* what, Eigen::Index actual, Eigen::Index expected) {
  if (actual == expected) return;
  std::ostringstream s;
  s << what << ": expected shape (" << expected << ",), got (" << actual << ",)";
  throw ArgumentError(s.str());
}

}  // namespace gradyn
