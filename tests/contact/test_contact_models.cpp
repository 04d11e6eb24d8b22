// The contact-model registry (contact/contact_models.hpp): every registered model is reachable by
// its name, says its level consistently wherever the step asks, and owns a workspace slot of its own.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "../support/laikago_scene.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/stages.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

TEST(ContactModels, EveryModelIsFoundByItsOwnName) {
  std::set<std::string> names;
  for_each_contact_model([&](ContactModel m) {
    const std::string name = contact_model_name(m);
    EXPECT_TRUE(names.insert(name).second) << "two models named " << name;
    ContactModel found = ContactModel::None;
    ASSERT_TRUE(contact_model_from_name(name, found)) << name;
    EXPECT_EQ(found, m);
    visit_contact_model(m, [&](auto model) { EXPECT_EQ(decltype(model)::id, m) << name; });
  });
  EXPECT_EQ(static_cast<int>(names.size()), kContactModelCount);
  ContactModel untouched = ContactModel::Pgs;
  EXPECT_FALSE(contact_model_from_name("lcp", untouched));
  EXPECT_FALSE(contact_model_from_name("PGS", untouched));  // names are exact
  EXPECT_EQ(untouched, ContactModel::Pgs);
}

// has_impulses, the RK4 refusal and the constraints stage agree with each model's level.
TEST(ContactModels, TheStepTreatsEachModelByItsLevel) {
  for_each_contact_model([&](ContactModel m) {
    const test::LaikagoScene s = test::laikago_standing(m);
    const ContactLevel level = contact_level(m);
    EXPECT_EQ(has_impulses(m), level == ContactLevel::Impulse) << contact_model_name(m);
    Data data(s.model);
    const int nv = s.model.nv;
    const Eigen::VectorXd v = Eigen::VectorXd::Constant(nv, -0.1), tau = Eigen::VectorXd::Zero(nv);
    Eigen::VectorXd q_next(s.model.nq), v_next(nv);
    if (level == ContactLevel::Impulse)
      EXPECT_THROW(step<double>(s.model, data, s.q, v, tau, 1e-3, Integrator::RK4, q_next, v_next), ArgumentError)
          << contact_model_name(m);
    else
      EXPECT_NO_THROW(step<double>(s.model, data, s.q, v, tau, 1e-3, Integrator::RK4, q_next, v_next))
          << contact_model_name(m);
    // Without impulses the constraints stage is v + dt a, bit for bit; the standing robot's feet
    // press into the floor, so an impulse model changes it.
    const Eigen::VectorXd a = stage_accelerations<double>(s.model, data, s.q, v, tau, Eigen::VectorXd());
    stage_constraints<double>(s.model, data, s.q, v, a, 1e-3, v_next);
    const Eigen::VectorXd free_motion = v + 1e-3 * a;
    if (level == ContactLevel::Impulse)
      EXPECT_NE(v_next, free_motion) << contact_model_name(m);
    else
      EXPECT_EQ(v_next, free_motion) << contact_model_name(m);
  });
}

// Each model's settings are checked whichever model is on, so switching models later finds them valid.
TEST(ContactModels, EachModelsSettingsAreCheckedUnderAnyModel) {
  for_each_contact_model([&](ContactModel m) {
    ContactSettings settings;
    settings.model = m;
    EXPECT_NO_THROW(check_contact_settings(settings)) << contact_model_name(m);
    settings.pgs_iterations = 0;
    EXPECT_THROW(check_contact_settings(settings), ModelError) << contact_model_name(m);
    settings.pgs_iterations = 1;
    settings.ipm_friction_directions = 2;
    EXPECT_THROW(check_contact_settings(settings), ModelError) << contact_model_name(m);
  });
}

}  // namespace
}  // namespace gradyn
