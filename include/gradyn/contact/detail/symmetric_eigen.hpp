// Eigendecomposition of a symmetric matrix into buffers kept between calls (the PGS contact VJP's
// sym(A_bar), src/contact/pgs_contact_vjp.cpp). Eigen's SelfAdjointEigenSolver::compute step for step,
// so the same values, but its one per-call allocation (the workspace that forms Q from the
// Householder reflectors, Tridiagonalization.h) comes from here: nothing is allocated once sized.
// Built from Eigen 3.4's internal tridiagonalization and QL steps, which SelfAdjointEigenSolver calls.
#pragma once

#include <algorithm>

#include <Eigen/Eigenvalues>

static_assert(EIGEN_VERSION_AT_LEAST(3, 4, 0), "symmetric_eigen.hpp follows Eigen 3.4's SelfAdjointEigenSolver");

namespace gradyn::detail {

struct SymmetricEigen {
  Eigen::VectorXd eigenvalues;   ///< increasing
  Eigen::MatrixXd eigenvectors;  ///< column k for eigenvalues[k]
  Eigen::ComputationInfo info = Eigen::Success;

  /// Sizes the buffers for n x n matrices (compute does too: only needed to size them ahead).
  void resize(Eigen::Index n) {
    eigenvalues.resize(n);
    eigenvectors.resize(n, n);
    subdiagonal_.resize(std::max<Eigen::Index>(n - 1, 0));
    householder_coeffs_.resize(std::max<Eigen::Index>(n - 1, 0));
    reflector_scratch_.resize(n);
  }

  /// A's eigenvalues and eigenvectors, reading A's lower triangle. Allocates only when A's size
  /// changes.
  void compute(const Eigen::MatrixXd& A) {
    const Eigen::Index n = A.rows();
    resize(n);
    if (n == 1) {
      eigenvalues(0) = A(0, 0);
      eigenvectors.setOnes(1, 1);
      info = Eigen::Success;
      return;
    }
    // Scaled into [-1, 1] against over- and underflow.
    Eigen::MatrixXd& Q = eigenvectors;
    Q = A.triangularView<Eigen::Lower>();
    double scale = Q.cwiseAbs().maxCoeff();
    if (scale == 0.0) scale = 1.0;
    Q.triangularView<Eigen::Lower>() /= scale;
    // A = Q T Q^T with T tridiagonal, Q formed in place over its Householder vectors.
    Eigen::internal::tridiagonalization_inplace(Q, householder_coeffs_);
    eigenvalues = Q.diagonal();
    subdiagonal_ = Q.diagonal<-1>();
    Eigen::Tridiagonalization<Eigen::MatrixXd>::HouseholderSequenceType(Q, householder_coeffs_)
        .setLength(n - 1)
        .setShift(1)
        .evalTo(Q, reflector_scratch_);
    info = Eigen::internal::computeFromTridiagonal_impl(eigenvalues, subdiagonal_, kMaxIterations,
                                                        /*computeEigenvectors=*/true, Q);
    eigenvalues *= scale;
  }

 private:
  static constexpr int kMaxIterations = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>::m_maxIterations;
  Eigen::VectorXd subdiagonal_, householder_coeffs_, reflector_scratch_;
};

}  // namespace gradyn::detail
