// Data: a copy is a workspace of its own, solver blocks included (held by type-erased pointer so that
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
    const Eigen::VectorXd pgs_lambda = pgs_data(original).lambda;
    const Eigen::VectorXd ipm_z = ipm_data(original).z;
    const int contacts = original.ncontacts;

    Data copy = original;
    EXPECT_NE(&pgs_data(copy), &pgs_data(original));
    EXPECT_NE(&ipm_data(copy), &ipm_data(original));
    EXPECT_EQ(pgs_data(copy).lambda, pgs_data(original).lambda);
    EXPECT_EQ(ipm_data(copy).z, ipm_data(original).z);
    step_once(s.model, copy, s.q, 0.3);  // another step on the copy changes the copy alone
    EXPECT_EQ(pgs_data(original).lambda, pgs_lambda);
    EXPECT_EQ(ipm_data(original).z, ipm_z);
    EXPECT_EQ(original.ncontacts, contacts);

    Data assigned(s.model);
    assigned = original;
    EXPECT_NE(&pgs_data(assigned), &pgs_data(original));
    EXPECT_EQ(pgs_data(assigned).lambda, pgs_lambda);

    const PgsDataTpl<double>* block = &pgs_data(copy);
    Data moved = std::move(copy);  // a move hands the blocks over
    EXPECT_EQ(&pgs_data(moved), block);
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
  EXPECT_EQ(pgs_data(copy).lambda, pgs_data(original).lambda);
  EXPECT_EQ(pgs_data(copy).warm_start, pgs_data(original).warm_start);
}

}  // namespace
}  // namespace gradyn
