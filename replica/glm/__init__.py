r"""Generalised linear models declared from their parts (issue 26): a data law (Gaussian
covariates), a teacher (:mod:`~replica.glm.parts` channels and priors) and an estimator (a loss and
a penalty, or the Bayes-optimal posterior). :func:`ERM` and :func:`BayesOptimal` return a
:class:`~replica.modeling.SaddlePointModel` whose replica-symmetric free energy is *derived* from
the parts by the Gaussian replica calculus (:mod:`replica.glm.calculus`; the general formulas are
stated once, in :mod:`replica.glm.builders`), with the record of the steps (``derivation=``, shown
by ``replica equations`` and ``replica appendix``) and the replica-symmetry stability
(``stability=``). :func:`~replica.glm.committee.Committee` declares the Bayes-optimal committee
machine (a two-layer network, matrix order parameters: :mod:`replica.glm.committee`)::

    from replica.glm import ERM, Teacher, Logistic, Ridge, Probit
    MODEL = ERM("logistic_probit", loss=Logistic(), penalty=Ridge("lam"),
                teacher=Teacher(Probit("eta")))
    SIMULATION = simulation_of(MODEL)   # replica simulate / check / sweep (replica.glm.simulation)
"""

from .builders import (ERM, REFERENCES, BayesOptimal, Covariates, GLMDerivation, GLMParts,
                       Teacher, replicon_at)
from .parts import (CHANNELS, LOSSES, PENALTIES, PRIORS, Absolute, Channel, ElasticNet,
                    GaussBernoulli, Gaussian, Hinge, Huber, L1, Linear, Logistic, Loss, PartError,
                    Penalty, Prior, Probit, Rademacher, ReLU, AbsoluteValue, Ridge, Sign,
                    Square)
from .simulation import simulation_of
from .committee import Committee

__all__ = ["ERM", "BayesOptimal", "Committee", "Teacher", "Covariates", "GLMDerivation", "GLMParts",
           "simulation_of", "REFERENCES", "replicon_at", "Loss", "Penalty", "Channel", "Prior", "PartError",
           "Square", "Absolute", "Huber", "Logistic", "Hinge", "Ridge", "L1", "ElasticNet",
           "Linear", "Sign", "Probit", "ReLU", "AbsoluteValue", "Gaussian", "Rademacher",
           "GaussBernoulli", "LOSSES", "PENALTIES", "CHANNELS", "PRIORS"]
