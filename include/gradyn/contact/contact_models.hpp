// The contact models, registered: each model is a struct of its own, contact/models/<model>.hpp,
// whose hooks (contact/models/contact_model_defaults.hpp lists them) are all that the step's stages,
// their adjoints, the step Jacobian, Data, the sensors and the batch know of it. This header
// dispatches on ContactModel (model.hpp) to them. A new model is its files plus two lines here (the
// include, its visit case), its enumerator and settings in model.hpp (kLastContactModel when it
// comes last), and its settings in Python (python/src/bind_contact.cpp); docs/architecture.md
// section 9 has the list.
#pragma once

#include <string>

#include "gradyn/contact/models/ipm.hpp"
#include "gradyn/contact/models/none.hpp"
#include "gradyn/contact/models/penalty.hpp"
#include "gradyn/contact/models/pgs.hpp"

namespace gradyn {

/// Calls f(Model{}) with the contact model registered for `model` (NoContact, PenaltyContact, ...).
template <class F>
decltype(auto) visit_contact_model(ContactModel model, F&& f) {
  switch (model) {
    case ContactModel::None: return f(NoContact{});
    case ContactModel::Penalty: return f(PenaltyContact{});
    case ContactModel::Pgs: return f(PgsContact{});
    case ContactModel::Ipm: return f(IpmContact{});
  }
  return f(NoContact{});
}

/// Every registered model, in enumerator order.
template <class F>
void for_each_contact_model(F&& f) {
  for (int m = 0; m < kContactModelCount; ++m) f(static_cast<ContactModel>(m));
}

inline ContactLevel contact_level(ContactModel model) {
  return visit_contact_model(model, [](auto m) { return decltype(m)::level; });
}

/// The model registered under `name` (contact_model_name's) into `model`; false if none is.
bool contact_model_from_name(const std::string& name, ContactModel& model);

/// Forgets every model's warm start in data (Batch's reset).
template <class S>
void forget_contact_warm_starts(DataTpl<S>& data) {
  for_each_contact_model([&](ContactModel m) { visit_contact_model(m, [&](auto c) { decltype(c)::forget_warm_start(data); }); });
}

}  // namespace gradyn
