r"""The LASSO on a sparse Gauss--Bernoulli teacher with Gaussian covariates of a given diagonal
covariance, declared from its parts: :func:`replica.glm.ERM` with ``L1("lam")`` and
:class:`replica.glm.Covariates` (``--covariance SPEC`` the diagonal input covariance, ``--d``
its dimension). The worked case is a two-level spectrum: half the coordinates with eigenvalue
1/2, half with 3/2 (``examples/two_level_covariance.txt``, two eigenvalues at ``--d 2``: the
spectral average of the infinite-dimensional model is the mean over the two levels).

The penalty's scalar problem at a coordinate of eigenvalue :math:`c` has the curvature
:math:`\hat Vc`; its maximum :math:`(|b| - \lambda)_+^2/(2\hat Vc)` is averaged over the field
:math:`b = \hat mc\,a + \sqrt{\hat qc}\,Z` (:math:`a` from the prior) in closed form -- the
truncated Gaussian moments, :math:`\operatorname{erfc}` and :math:`e^{-x^2/2}`
(:func:`replica.glm.calculus.expect_piecewise`) -- so the spectral average holds no Gaussian
integral. Checked in ``tests/test_glm_lasso_spectrum.py`` against a state evolution written
there with mpmath quadrature, against the isotropic ``examples/glm_lasso.py`` when both levels
are equal, and against the LASSO solved by coordinate descent at d = 400 to 1600 (slow tier).
A covariance SPEC that is not diagonal, or has a zero eigenvalue, is refused (exit status 2).

    replica solve --model examples/glm_lasso_spectrum.py --alpha 3/4 --eps 1/5 --lam 1/2 \
        --sigma 1/5 --d 2 --covariance file:examples/two_level_covariance.txt
"""

from replica.glm import ERM, Covariates, GaussBernoulli, L1, Linear, Square, Teacher

MODEL = ERM("glm_lasso_spectrum", loss=Square(), penalty=L1("lam"),
            teacher=Teacher(Linear("sigma"), prior=GaussBernoulli("eps")),
            covariates=Covariates(teacher=None))
