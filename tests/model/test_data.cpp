// Data: a copy is a workspace of its own, solver blocks included (they are held by pointer so that
// their headers stay out of data.hpp; a shallow copy would let two Data share one PGS warm start).
#include <gtest/gtest.h>

#include <utility>

#include "../support/laikago_scene.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

void step_once(const Model& m, Data& d, const Eigen::VectorXd& q, double push) {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(m.nv), tau = Eigen::VectorXd::Zero(m.nv), qn(m.nq), vn(m.nv);
  v[2] = push;  // the base's vertical velocity: into the ground or away from it
  step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
}

TEST(Data, CopiesOwnTheirSolverWorkspaces) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const test::LaikagoScene s = test::laikago_standing(contact);
    Data original(s.model);
    step_once(s.model, original, s.q, -0.2);
    const Eigen::VectorXd pgs_lambda = original.pgs->lambda;
    const Eigen::VectorXd ipm_z = original.ipm->z;
    const int contacts = original.ncontacts;

    Data copy = original;
    EXPECT_NE(&*copy.pgs, &*original.pgs);
    EXPECT_NE(&*copy.ipm, &*original.ipm);
    EXPECT_EQ(copy.pgs->lambda, original.pgs->lambda);
    EXPECT_EQ(copy.ipm->z, original.ipm->z);
    step_once(s.model, copy, s.q, 0.3);  // another step on the copy changes the copy alone
    EXPECT_EQ(original.pgs->lambda, pgs_lambda);
    EXPECT_EQ(original.ipm->z, ipm_z);
    EXPECT_EQ(original.ncontacts, contacts);

    Data assigned(s.model);
    assigned = original;
    EXPECT_NE(&*assigned.pgs, &*original.pgs);
    EXPECT_EQ(assigned.pgs->lambda, pgs_lambda);

    const PgsDataTpl<double>* block = &*copy.pgs;
    Data moved = std::move(copy);  // a move hands the blocks over
    EXPECT_EQ(&*moved.pgs, block);
  }
}

// A copy steps exactly as the original would: the warm start it carries is the original's.
TEST(Data, ACopyStepsAsTheOriginal) {
  const test::LaikagoScene s = test::laikago_standing(ContactModel::Pgs);
  Data original(s.model);
  step_once(s.model, original, s.q, -0.2);
  Data copy = original;
  step_once(s.model, original, s.q, -0.1);
  step_once(s.model, copy, s.q, -0.1);
  EXPECT_EQ(copy.pgs->lambda, original.pgs->lambda);
  EXPECT_EQ(copy.pgs->warm_start, original.pgs->warm_start);
}

}  // namespace
}  // namespace gradyn
