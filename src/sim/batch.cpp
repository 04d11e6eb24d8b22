// Many worlds at once (sim/batch.hpp): the thread pool is OpenMP's (this file alone is compiled
// with it: CMakeLists.txt), the worlds' workspaces are the caller's.
#include "gradyn/sim/batch.hpp"

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

int batch_threads(int threads) {
  if (threads < 0)
    throw ArgumentError("threads: expected a positive number of threads (or none for all " +
                        std::to_string(omp_get_num_procs()) + " cores), got " + std::to_string(threads));
  return threads > 0 ? threads : omp_get_num_procs();
}

void for_each_world(int worlds, int threads, const std::function<void(int world, int thread)>& f) {
  threads = batch_threads(threads);
  if (worlds <= 0) return;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(worlds));
  if (threads == 1 || worlds == 1) {  // no pool for a single thread: the caller's thread runs them
    for (int w = 0; w < worlds; ++w) {
      try {
        f(w, 0);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    }
  } else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int w = 0; w < worlds; ++w) {
      try {
        f(w, omp_get_thread_num());
      } catch (...) {
        errors[w] = std::current_exception();
      }
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

template <class S>
void forget_history(const ModelTpl<S>& model, DataTpl<S>& data) {
  data.status = kStatusOk;
  for (int g = 0; g < model.ngeoms(); ++g) data.sweep_order[g] = g;
  pgs_forget_warm_start<S>(data);
  data.ipm->warm_ncontacts = -1;
}

#define GRADYN_INSTANTIATE(S) template void forget_history<S>(const ModelTpl<S>&, DataTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
