"""``--certify`` with the Gauss--Legendre rule of :mod:`replica.symbolic.ballquad` (issue 29,
job logcert): the certification overhead (certified / verified CPU time at 30 digits) of the
logistic models and of the rows of ``certify_tails``, side by side with another checkout.

Each point runs in a fresh process per tree with its own warm code cache (an untimed verified
and certified solve first, then timed ones: ``benchmarks/certify_tails.py``'s child), the trees
alternating; the logistic models one timed run of each kind per round, the others medians of 3.
Run ``python -m benchmarks.certify_quadrature --baseline PATH [--rounds N] [--section NAME]``; it
rewrites the section ``certify_quadrature`` (or ``NAME``: ``cert``, job cert's, ``cert2``,
job cert2's, ``certnode``, job certnode's, ``certlog``, job certlog's, or ``certjac``, job
certjac's, each with its own note)
of ``benchmarks/README.md``; ``--only LABEL,LABEL`` keeps the rows whose labels hold one of
these, ``--caches BASELINE,THIS`` reuses the code caches of an earlier run.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile

try:
    from ._util import baseline_argument, machine_line, table, write_section
    from .certify_tails import LOGISTIC_POINTS, POINTS, REPO, measure
except ImportError:  # run as a script
    from _util import baseline_argument, machine_line, table, write_section  # type: ignore
    from certify_tails import LOGISTIC_POINTS, POINTS, REPO, measure  # type: ignore

NAME = "certify_quadrature"

NOTE = """\
Certification overhead (issue 29's target <= 1.5x): logistic_regression 49.1x -> 15.9x (the
certificate 3.6x faster), glm_logistic 24.6x -> 15.6x (1.5x faster); not reached for either.
The other rows are unchanged within this machine's noise (one round; the certified solves of
the two trees differ by 0.01-0.05 s); capacity's 1.31x -> 1.47x is 0.04 s against 0.05 s, at
the timer's resolution. Every certificate proved, verified values identical.

What changed (job logcert): (1) ``codegen._gauss_arb`` integrates over [-T, T] by
``replica.symbolic.ballquad.enclose``: intervals of length about 2, each by an n-point
Gauss-Legendre rule (python-flint's ``arb.legendre_p_root`` nodes and weights) plus the a-priori
bound (64/15) M h r^(-2n) / (r^2 - 1) of an integrand analytic in the Bernstein ellipse E_r
(Trefethen, ATAP, Thm 19.3), M from ball evaluations on 4-16 overlapping strips that cover the
ellipse and meet the real axis (r from B/h = 1/2, 1/4, 1/8, 1/16; an interval with none halved
up to 4 times, then ``acb.integral``: none at the logistic point), n the smallest meeting the
same tolerance ``acb.integral`` was given. The tails |z| > T stay as before. (2) The proximal
root's equation in complex balls is written through S = 1/(1 + e^p) (``implicit._in_sigmoid``):
as declared, dp F = 1 + V e^-p/(1 + e^-p) - V e^-2p/(1 + e^-p)^2 cancels two terms of size V at
p << 0 and its ball over a complex box of radius 0.05 is not finite (omega = -10: the Krawczyk
test failed on every complex box there, so ``acb.integral`` subdivided towards the real axis
over the whole left half of the line; this, not the root's singularities -- which lie at
Im omega = pi, Im z = 1.5 at q = 4.15 -- was the cause of the subdivisions).

Counted at the logistic point (one certified solve, warm cache, load 4-6): the 22 ball integrals
of the certificate took 24.4 s by ``acb.integral`` before (2), 11.7 s after (2), 7.1 s by (1)
(all enclosures overlapping ``acb.integral``'s; the rule's are 1-100x narrower at the 32-bit
goal of the Jacobian); 38,279 node and 12,891 box evaluations of the integrand (113 us and
160 us each; 2,109 boxes not finite: an ellipse too wide). Left: the central intervals
(|z| < 4) need thin ellipses (B = h/8 in z, r = 1.13, ~0.36 bits per node) because a complex
box taller than ~0.25 in omega fails the root's Krawczyk test (ball arithmetic of e^p on the
box, not the function: its singularities are 6x further); letting the ellipse grow to Im
omega ~ 1 would need boxes off the real axis, chained upwards (each Krawczyk box containing
the enclosure below it, so that uniqueness identifies the branch) -- not done. Tried and
dropped: trying thinner ellipses after one passes (no fewer nodes, 50% more boxes); starting at
B/h = 1/4 (10 intervals fell back to ``acb.integral``: slower). The teacher, hinge, capacity and
LASSO certificates go through the same rule (no fallback at the teacher; about half of the rule's
time there is its Python bookkeeping, not the integrand). glm_logistic spends about half its
certificate outside the ball integrals (not examined). The "this" logistic_regression row ran
while ``_gauss_arb``'s tolerance was changed from a float to an ``arb`` (same n; guards dps >
~300, where 2^-bits underflows a float)."""
"""What the table of the last run shows and why (written by hand after it; update it with the
numbers of a new run)."""

CERT_NOTE = """Job cert (session 47, issue 29 part A): the teacher (both priors) and hinge
certificates under 1.5x -- 1.42x, 1.36x and 1.31x here (the baseline beside it 1.51x, 1.43x,
1.75x); capacity 1.25x and LASSO 1.23x. Every certificate proved, verified values identical.
The logistic rows are unchanged within the noise (their cost is the proximal root's boxes, part
B, not done). One run, 2 rounds, load 4.6-7.3 on 2 cores shared with three other jobs: single
rows move by 0.02-0.05 s between runs; the verified solves got faster too (0.35 -> 0.31 s at the
Rademacher teacher: the verified solve's rounding bound goes through the same rule), which
raises the ratio.

Where the certificate's time went (the Rademacher teacher, alpha = 1, 30 digits, one certified
solve after an untimed one, warm cache; counted by wrapping ``ballquad``): 5,386 box and
14,357 node evaluations of the integrands, 925 boxes not finite, 306 halved intervals
(depths 1-2): the integrand with H(cz) = erfc(cz/sqrt 2)/2 in a denominator is not finite in
balls on complex boxes (nor on real segments) for z > ~1, its error propagation in ``erfc``
wider than the value, so every interval there tried 4 ellipses, then its halves 4 again, down to
boxes small enough -- including the far tail inside T, where the integrand is below 1e-45 and
all that work bought a radius below the tolerance. The rule's own Python was ~14% of it
(cProfile), the integrand evaluations the rest.

Changed (``replica/symbolic/ballquad.py``, ``codegen._gauss_arb``): (1) an interval whose
integral of |F| phi is below its share of the tolerance by the integrand's growth envelope
(``codegen._envelope_integral``: length times the ball of C e^((Q - 1/2)z^2 + B|z|)|z|^P /
sqrt(2 pi) over the interval, the envelope of ``gaussian.growth_envelope``, valid for real |z| >=
1 and checked conditions) is [-E, E], no evaluation of the integrand; (2) with pieces > 1 the
whole range is tried first in one rule (B/h = 1/2, 8 strips, at most 16 nodes a piece): an
entire integrand on a piece between kinks (the hinge's polynomials times the Gaussian weight)
takes ~200 nodes there against ~17 intervals of 4 boxes and 10-50 nodes each; (3) a wider first
ellipse (B/h = 1, r = 2.414: 2.5 bits a node at 4 boxes against 1.4 at B/h = 1/2), each interval
starting at the shape before the one that passed on its left neighbour, and the tallest strips
evaluated first (a failing ellipse fails there). Which shapes are tried changes the work only;
every enclosure is the same theorem's. After: 2,453 boxes (432 not finite) and 11,852 nodes, 138
halved intervals, at the Rademacher teacher; at the hinge SVM 144 boxes and 1,227 nodes (3,796
nodes and 764 boxes with (1) alone). Logistic regression: 9,889 boxes and 36,674 nodes against
9,432 and 38,051 with (1) alone (the central intervals need the thin ellipses; (2) fails there
at its first box). Tried and dropped: a real-segment enclosure (length times f on the segment)
before the ellipses (accepted 4 of 182 intervals, the ball of the erfc ratio is not finite on real
segments either); starting the halves of an interval at the parent's shape (more nodes: the
children would have passed a wider one); a first ellipse B/h = 2 (the teacher's boxes fail,
more of them).

Tests (``tests/test_ballquad.py``): the envelope's bound of an interval against mpmath's integral
of |F| phi (F = e^(-c^2 z^2) z^2 / erfc(cz/sqrt 2), c = 5/4, 7 intervals; with the power |z|^P
dropped it falls below the integral: planted in the test, and planted in the code it fails the
test); ``enclose`` with it contains mpmath's integral over [-10, 10] at 200 bits (the constant C
10^6 too small: misses; the tolerance check dropped in the code: the radius test fails); the
whole-range rule on z^4 e^(-z^2/2) over [-8, 8] in one rule contains mpmath's value (M 2^100 too
small: misses; the whole range shortened by a piece in the code: misses).

A second run of the three target rows (the same child, 2 rounds alternating, medians of 3, load
5.1-6.2, while tests ran on the other core): verified / certified CPU, certify/verified -- the
Rademacher teacher baseline 0.339 / 0.533 s = 1.58x, this 0.312 / 0.437 s = 1.40x; the Gaussian
teacher 0.276 / 0.417 s = 1.51x, this 0.266 / 0.362 s = 1.36x; hinge 0.118 / 0.208 s = 1.76x,
this 0.112 / 0.139 s = 1.24x; all proved, values identical. The margin at the Rademacher teacher
is thin (1.40-1.42x against 1.5x); what is left there: the thin ellipses of the erfc ratio for z
in ~[1, 7] (21 intervals at B/h = 1/4 hold ~2,650 of its ~7,000 nodes at 144 bits) -- boxes off
the real axis (allowed for explicit integrands, not for the implicit roots) or a tighter ball
erfc far right would let them widen."""
"""The note of the section ``cert`` (job cert, session 47: the teacher and hinge certificates)."""

CERT2_NOTE = """Job cert2 (session 47, issue 29, the logistic certificates; baseline 838561e): where the
logistic certificate's time goes, measured, and one small change that removes repeated work
without touching any enclosure. The 1.5x target is not reached for the logistic models
(14.0x glm_logistic, 13.0x logistic_regression in this run); the three other targets stay
under it (Rademacher teacher 1.42x, Gaussian 1.39x, hinge 1.28x). Every certificate proved,
verified values identical. One run, 2 rounds, load 3.0-5.9 (shared with three other jobs, and
this job's own tests ran beside it part of the time): the logistic rows' this/baseline (1.10x,
0.98x) are the machine's noise -- separate runs of one tree at the logistic_regression point
gave 5.1-6.8 s; the in-process A/B below is the measure of the change.

Where the time goes (cProfile of one certified solve in one process, after an untimed
certified solve, warm code cache, the benchmark's child; glm_logistic alpha = 2, lam = 1/10,
eta = 1, 30 digits: verified 0.26 s, certified 3.72 s unprofiled, 6.3 s profiled): the
certificate (``certify_point``) 5.94 s profiled, of which the 21 ball integrals
(``codegen._gauss_arb`` -> ``ballquad.enclose``) 5.91 s -- the Krawczyk test of the solution
outside its integrals (preconditioner, inflation, parameter balls) 0.03 s. The "about half
outside the ball integrals" of the ``certify_quadrature`` section is not reproduced in this
measurement. By phase: the equations at the centre (144 bits) 1.39 s, the rough Jacobian over
the box (56 bits, goal 32) 2.03 s, the admissibility and reported values over the box 2.5 s.
Inside the integrals: 38,580 integrand evaluations, 5.70 s, of which the proximal root's
enclosure (``implicit._Numeric.ball``) 4.08 s: 35,973 Krawczyk tests (2,607 memo hits; 30,415
real at the nodes, 5,558 on the complex strips of the ellipse bounds; 23,451 at 144 bits,
12,184 at 56, 338 at 30), each the float64 start 0.83 s in all, the slope over the box 1.03,
the declared-root check (the bracket's ends in arb) 0.31, the Newton evaluations 0.35, its own
Python 0.60; the rest of the integrand ~1.6 s. logistic_regression (verified 0.35 s,
certified 5.08 s): the same shape -- 11.92 of the certificate's 11.98 s profiled in the ball
integrals, 7.38 s in 42,824 root enclosures. At the CLI (a fresh process, warm disk cache,
``/usr/bin/time``): glm_logistic verified 8.2 s user, ``--certify`` 13.2 s -- imports and code
loading dominate there.

Changed (``implicit._Numeric._ball_start``): the float64 root that starts the Krawczyk test's
Newton iteration, a function of the balls' midpoints rounded to float64 alone, is remembered
under those floats until ``forget_ball_enclosures`` (start and end of every certificate). The
same node is enclosed in the equations at the centre, in the Jacobian over the box and in the
reported values: radii and precisions differ, the float64 midpoints do not. Float64 roots
computed: glm_logistic 35,973 -> 23,586, logistic_regression 42,824 -> 30,837. Every
enclosure unchanged bit for bit (a start is only a start, and a remembered one is the one a
new call computes; logistic_regression's 12 enclosures' exact midpoints and radii compared with
the memo on and off). Saved: in one process, the memo on and off alternating 3 rounds at the
logistic_regression point, 5.33 / 5.39 / 5.43 s against 5.33 / 5.56 / 5.49 s -- about 0.1 s,
~1.5%, at the noise. Small: a float64 root is ~8 us against ~100 us an integrand evaluation.

Left (not done): the cost is the number of integrand evaluations times the root's Krawczyk
test (~57 us a test, 3.5 ball evaluations of F, F', F'', F''' on average); 1.5x needs the
certificate's ~3.5 s at glm_logistic to become ~0.13 s (half the verified 0.26 s), ~27x less. Two directions: (1) the integrals of one group share few nodes -- each picks its own n
per interval, so the enclosure memo hits 2,607 of 38,580 evaluations; a common node ladder or
one rule for all integrands of a group would enclose each node's root once; (2) wider ellipses
at the central intervals (complex root boxes chained off the real axis, the certify_quadrature
section's note). Tried for (1) and dropped (a measurement, not kept): n rounded up to
the next power of sqrt 2 in ``ballquad._nodes_needed`` (in one process, 2 rounds alternating):
integrand evaluations 38,580 -> 44,199, Krawczyk tests 35,973 -> 37,513 (memo hits 2,607 ->
6,686), certified 4.14 / 3.87 s -> 4.16 / 4.12 s -- the hits stay few (whether the integrals'
intervals or their argument balls at a node differ was not examined)."""
"""The note of the section ``cert2`` (job cert2, session 47: the logistic certificates' profile
and the remembered Newton starts)."""

CERTNODE_NOTE = """Job certnode (session 48, issue 29, the logistic certificates; baseline
edb037a): the Gaussian integrals of one ball evaluation share their Gauss-Legendre nodes, so
that the proximal root at a node is enclosed once for all of them (the enclosure memo of
``implicit._Numeric.ball``, keyed on the exact balls, then hits). The 1.5x target is not reached
for the logistic models (the table); their certificates are faster by the factor in the column
"certify this/baseline". The other rows do exactly the baseline's work (integrand evaluations
counted in one certified solve, both trees: LASSO 2,730 nodes / 704 boxes, the Rademacher
teacher 7,702 / 1,552, hinge 1,066 / 128): their differences are this shared machine's noise
(load 6-9; separate A/B runs of one row moved by 0.05-0.15 s).

This run (1 round, load 7.2-10.1 on 2 cores shared with three other jobs): the
logistic_regression certificate 7.67 -> 4.70 s (1.63x faster), certify/verified 11.2x -> 9.9x;
glm_logistic 4.97 -> 3.27 s (1.52x faster), 14.6x -> 10.6x. The Rademacher teacher's row is
above 1.5x in both trees here (baseline 1.79x, this 1.60x; the same integrand evaluations in
both, above): at this load its 0.5 s certificate moves by 0.1-0.15 s between runs; the sections
cert and cert2 measured it at 1.40-1.43x at load 3-6. An earlier run (2 rounds, load 6.1-9.1,
the same code but plans on every ball evaluation, before ``codegen._calls_implicit``):
logistic_regression 6.65 -> 5.22 s, glm_logistic 5.25 -> 3.97 s, the Rademacher teacher 0.55 /
0.57 s (1.34x / 1.56x), LASSO 0.41 / 0.59 s (without an implicit root nothing is remembered, so
a plan can only add nodes; how much of the 0.18 s that was, against the load, was not
separated).

Changed: (1) ``codegen._gauss_arb`` integrates a piece with exact ends in z itself (the nodes m
+ h x_j of an interval), and under a plan rounds T up to an even integer (the tail bound is
computed at the T used; a larger T only shrinks it): the intervals of length 2 then lie on one
grid of even integers and the node balls are the same balls whatever an integral's envelope (at
glm_logistic the integrals' T differed by up to 5 with their powers P = 0-5, and an odd T
shifted every interval by 1: why job cert2's node ladder found few hits). (2)
``ballquad.NodePlan``, one per ball evaluation (``Evaluator.gaussian_values``) whose integrands
name an implicit function (``codegen._calls_implicit``; elsewhere nothing is remembered and
sharing is only work): an interval's node count is raised to a count already used there if at
most 3x the one needed, else rounded up to four significant bits (at most 1/8 more); an interval
another integral halved is halved at once. Any n' >= n keeps Trefethen's bound below the
tolerance (r^-2n' <= r^-2n) and the error added is computed for the n' used: the plan changes
the work, never what is proved. Every certificate proved, verified values identical.

Counted (glm_logistic, alpha = 2, lam = 1/10, eta = 1, 30 digits; one certified solve in one
process after an untimed one, each tree; load 6-8): Krawczyk tests 35,973 -> 15,267 (the
centre's integrals at 144 bits 8,480 -> 4,334, the Jacobian's at 56 bits 12,366 -> 4,399, the
reported values' at 144 bits 15,127 -> 6,534); CPU inside: the Krawczyk tests 2.72 -> 1.29 s,
the ellipse bounds 1.69 -> 0.91 s, the 21 ball integrals 5.46 -> 3.74 s, the certified solve
5.88 -> 4.21 s. Tried and dropped (not committed): the integrands evaluated in real ``arb`` at
the real nodes instead of ``acb`` (21-32 us against 21-31 us an evaluation: no gain).

Left, and what the next factor needs: sharing cannot go below one root enclosure per node per
phase (the centre, the Jacobian and the report differ in argument balls and precision), about
one integral's count per phase, ~10,000 here, against 15,267 -- the rest is integrals that halve
an interval an earlier one did not (new nodes) and their boxes. The integrand is evaluated more
often than before (38,745 nodes and 6,044 boxes against 30,565 and 7,511: the shared counts are
larger than each integral's own, most of them at remembered roots). The ball integrals'
remaining ~3.7 s: ~1.3 s Krawczyk tests, ~0.9 s ellipse bounds, the rest the integrands at
remembered roots (~25 us an evaluation) and the rule's bookkeeping. A further factor needs fewer
nodes per integral: the central intervals take ~90 nodes per interval of length 1/4 at 144 bits
because their ellipses are thin (B/h = 1/8, 1/16: a complex root box taller than ~0.25 in omega
fails the Krawczyk test), ~3,000 nodes per integral where B/h = 1 on intervals of length 2 would
need ~500 (an estimate: 2.5 bits a node); that needs root boxes off the real axis chained from
the real one (each Krawczyk box containing the enclosure of the box below it, so uniqueness
identifies the branch), not done; then a fused integrand (the group's common subexpressions once
per node) for the per-evaluation cost."""
"""The note of the section ``certnode`` (job certnode, session 48: shared nodes of the ball
integrals of one evaluation)."""

CERTLOG_NOTE = """Job certlog (session 49, issue 29, the logistic certificates; baseline e034596). The lead's
next factor -- root boxes off the real axis chained from the real enclosure, so that the
central ellipses grow from B/h = 1/8 to ~1 -- was measured first and is NOT the limit: no code
for it is kept. What is kept is smaller: the complex Krawczyk box of the proximal root starts
closer to the Newton image (``implicit._Numeric.COMPLEX_START`` = 1.25 instead of 2, then the
2x box and its inflations as before), which narrows the root's enclosure on the ellipse boxes,
so that the integrand built on it stays finite on taller boxes. The 1.5x target is not reached
for the logistic models (table); the other rows do the same work as the baseline (no implicit
root: the change is inside the complex Krawczyk test only), their differences are this
machine's noise (load 6.8-12.1 on 2 cores shared with three other jobs).

Measured first (glm_logistic, alpha = 2, lam = 1/10, eta = 1, 30 digits, one certified solve
after an untimed one, in one process; experiment code monkeypatched outside the repository):
(1) of the 754 ellipses refused, 398 fail in the root's Krawczyk test and 356 elsewhere in the
integrand with the root finite (none of exp, log, erfc, sqrt returned a non-finite ball from
finite arguments there: a division or power, not located; a candidate is V/(2e^p + e^2p + 1),
the expanded (1 + e^p)^2 of the generated code, over a wide root ball). (2) An
upper bound on what chained boxes could buy: each strip of the ellipse cut into k boxes stacked
upwards, the off-axis root boxes ACCEPTED WITHOUT any branch check (unsound, for the count
only): k = 2: 42,387 nodes (baseline 38,745), 14,469 boxes (6,044), certified 5.3-6.1 s (3.8-4.4
s); k = 4 with 8 strips per shape: 28,028 nodes, 29,350 boxes, 6.5 s; k = 8: 27,010 nodes,
59,107 boxes, 8.4 s. The nodes fall by at most 1.4x (not ~6x), because the stacked boxes still
fail above Im z ~ 0.25 (the root and the rest of the integrand both), while the boxes grow 5-10x
at ~100-160 us each: slower in every variant. (3) The root alone on symmetric boxes omega =
w +/- 0.1 + i[-y, y] at V = 3.9765, 144 bits: passes up to y = 0.25-0.3 (Im z ~ 0.15) at |w| <=
2 (0.35 at w = -1, -2), 0.4 at w = 4; at z = 0-3 boxes of width 0.025-0.1 in z pass at Im z =
0.125 and fail at 0.25 whatever the width: the height, not the strips' width, limits it; the enclosure with the 2x first box was 1.5-2.6x the roots' range (mpmath, 7 x 7
grid), with 1.25 1.03-1.37x. Tried and dropped: one more Krawczyk step on the enclosure (K(K(P))
with P = K(P)): 32,198 -> 32,102 nodes, not worth its code; starts 1.1 / 1.5 (36,315 / 34,756
nodes against 32,198 at 1.25, glm_logistic).

Counted (one certificate, START 2 -> 1.25 with the 2x fallback): glm_logistic 38,745 -> 32,174
nodes, 9,564 -> 7,352 box evaluations, 754 -> 595 ellipses refused, 12,937 -> 12,500 real and
2,330 -> 1,804 complex Krawczyk tests; logistic_regression 42,870 -> 38,450 nodes, 15,736 ->
14,828 boxes, 17,985 -> 15,038 real Krawczyk tests. In one process, alternating (load 7-8): the
glm_logistic certificate 3.23 / 2.98 s -> 2.63 / 2.63 s, logistic_regression 4.40 / 4.47 s ->
3.93 / 3.92 s, about 12-18% (the table's separate processes at load ~11: logistic_regression 4.79 -> 4.56 s, 0.95x; glm_logistic 3.87 -> 3.54 s, 0.91x;
certify/verified 11.2x -> 9.6x and 10.1x -> 9.1x). Every
certificate proved, verified values identical.

Left, and what the next factor needs: the central ellipses are limited at Im z ~ 0.125-0.25 by
ball arithmetic on the box (the root's Krawczyk slope over a box of height ~0.5 in p, and
expanded forms such as (1 + e^p)^2 in the integrands), not by the functions' singularities
(Im omega = pi). Candidates, none tried here: the integrands' ball code written through S =
1/(1 + e^p) as the root's equation already is (``implicit._in_sigmoid``), so that V/(1 + e^p)^2
is V S^2 and stays finite on a wide root ball; a centred (mean-value) form of the whole
integrand on the ellipse boxes instead of its direct ball; lower precision on the Jacobian's
integrals (13,236 of the 38,745 nodes are at 56 bits)."""
"""The note of the section ``certlog`` (job certlog, session 49: the complex Krawczyk box's
first radius; chained root boxes measured and dropped)."""

CERTJAC_NOTE = """Job certjac (session 53, issue 29, the logistic certificates; baseline da205f0). Two changes
of the work, none of what is proved; every certificate proved, verified values identical, and
in one process of this tree with the baseline's settings toggled back (no segment enclosure,
Jacobian goal 32) the certified enclosures and boxes printed at dps + 3 digits identical at
all seven points (logistic_regression there: 38,450 -> 28,604 nodes, 7,438 -> 6,064 boxes,
certified 5.01 -> 3.93 s, one round). The 1.5x target is NOT reached for the
logistic models: 12.7x -> 8.6x (logistic_regression) and 12.9x -> 9.5x (glm_logistic) in this
run, the certificates 0.79x and 0.82x of the baseline's time. Load 12.8-20 on 2 cores (seven
jobs): the other rows move by 0.05-0.1 s between runs; the Rademacher teacher's 1.18x is that
noise (in one process, 3 rounds alternating, load ~9: median 0.655 s baseline, 0.656 s this;
its work 7,702 -> 7,045 nodes, 1,552 -> 1,506 boxes).

Measured first (glm_logistic, alpha = 2, lam = 1/10, eta = 1, 30 digits; one certified solve
after an untimed one, in one process): the certificate's three ball evaluations -- the
equations at the centre (3 integrals, goal 120 bits at 176-bit balls) 7,442 nodes, 790 boxes,
~0.6 s; the Jacobian over the box (12 integrals, goal 32 bits at 66-bit balls) 10,171 nodes,
2,587 boxes (308 of 495 ellipses refused), ~0.7 s; the reported values over the box (6
integrals, 120 bits) 14,561 nodes, 1,368 boxes, ~1.1 s; the Krawczyk algebra and
admissibility ~0. The Jacobian's rough try always passed (no full-precision Jacobian).

Changed: (1) ``certify.JACOBIAN_FEW_GOAL`` = 10: the Jacobian over the box is tried first with
its integrals aiming at 10 bits (then 32, then the working precision, where the inclusion fails
because of the Jacobian's width). The test needs ||I - YJ(X)|| < 1/2, a few bits; on the thin
ellipses of the central intervals (B/h = 1/8, ~0.36 bits a node) the nodes grow ~3 a bit:
the Jacobian's nodes 10,171 -> 4,540 (goal 8: 4,080; 12: 5,096). (2) ``ballquad._segment``:
before the ellipses, an interval is enclosed by its length times the integrand's ball over the
real segment where that ball's radius is within the interval's tolerance (inf f <= f <= sup f
on the segment, integrated: no analyticity needed) -- the Gaussian tails inside T that the
growth envelope bounds too loosely (M ~ 1e-125 at z = -26 took an ellipse of 16 boxes and a
node there). glm_logistic: 77 intervals accepted, 542 tries refused (0.06 s of the
certificate); the Rademacher teacher 4 accepted, 179 refused (0.02 s). Together, glm_logistic:
32,174 -> 26,465 nodes, 4,745 -> 3,724 boxes; in one process, 2 rounds alternating (load ~9):
certified 3.01 / 3.79 s (min / median) -> 2.72 / 2.72 s.

Tried and dropped (measured, not committed): the ellipses' boxes at 64-bit balls (same boxes and
nodes, time within the noise); the shape that passed on an interval remembered in the plan for
the group's other integrals (logistic_regression: boxes 6,064 -> 6,050, nodes 28,604 -> 30,650);
intervals of length 4 for the Jacobian (more refused ellipses, slower); 4 strips instead of 8 at
B/h = 1/4 and 8 instead of 16 at 1/8 (fewer boxes, more nodes, not faster).

Left: now (glm_logistic) the reported values over the box are ~45% of the certificate (14,541
nodes at 120 bits, 5 of its 6 integrands through the proximal root, which the equations at the
centre cannot share: other argument balls), the equations ~25%, the Jacobian ~20%
(logistic_regression's Jacobian still refuses 806 of 1,032 ellipses: 4,145 boxes). 1.5x needs
the certificate at ~0.15 s, ~15x less: the per-evaluation cost (the integrands recompute their
z-free parts -- sqrt(2), sqrt(pi), m eta / sqrt(q - m^2 eta^2) -- at every node and box;
hoisting them, or one fused function per group) and taller central ellipses (certlog's limit)
are the levers left."""
"""The note of the section ``certjac`` (job certjac, session 53: the Krawczyk Jacobian's
integrals at 10 bits first; the zero-order segment enclosure of negligible intervals)."""

CERTJAC2_NOTE = """Job certjac2 (session 54, issue 29, the logistic certificates; baseline 4bd3015): profiled
again, then two changes of the work, none of what is proved. The 1.5x target is NOT reached for
the logistic models: glm_logistic 9.9x -> 7.2x (certificate 2.44 -> 2.05 s, 0.84x),
logistic_regression 10.5x -> 10.0x (4.11 -> 4.02 s, 0.98x: one timed run each at load 13-16, within
this machine's noise). A second run of the two logistic rows (same warm caches, load 11.8-13.1):
logistic_regression verified 0.53 / 0.41 s, certified 4.38 -> 3.34 s (0.76x), 8.2x -> 8.1x (the
baseline's verified solve slow in that run); glm_logistic verified 0.28 / 0.30 s, certified 2.45
-> 2.16 s (0.88x), 8.8x -> 7.2x. The Gaussian teacher 1.85x -> 1.74x and
hinge 1.72x -> 1.58x are one round at load 13-16 too (their differences, 0.03 s and 0.00 s, are
noise-sized). Every certificate proved, verified values identical.

Certified outputs: in a fresh cache per tree, the certificates of glm_logistic and
logistic_regression (this table's points) printed at 33 digits (``to_json_dict(30)``): radius,
box and every enclosure identical to the baseline's; ``replica solve --model
examples/perceptron_capacity.py --kappa 0 --dps 40 --certify --json``: stdout byte-identical to
the baseline's, alpha_c = 2 proved.

Profile first (glm_logistic, one certified solve after an untimed one, one process, CPU, load
~7, baseline code): certified 2.56-2.63 s, verified 0.27-0.30 s; the certificate ~2.25 s: the
equations at the centre 0.61-0.67 s, the Jacobian over the box 0.45 s, the reported values over
the box 1.1 s, admissibility ~0. Inside them: 31,312 calls of the proximal root's ball
enclosure, 1.12 s -- its 10,000 Krawczyk tests 0.70 s (7,477 real at 144 bits 0.41 s, 971
complex at 144 bits 0.18 s, 1,377 at 34 bits 0.10 s) and 0.42 s of the call itself at memo hits
(the memo key 12 us, an import 2.4 us, the key's hash 1.8 us); the ellipse bounds 0.45-0.5 s (844
ellipses); the integrands' own arithmetic most of the rest.

Changed: (1) ``codegen._arb_hoisted``: each ball integrand takes the largest sub-expressions free
of z and the switches (sqrt(2)/sqrt(pi), eta m/sqrt(q - eta^2 m^2), sqrt(q), 1/V, their
products) as balls computed once per integral by ``_gauss_arb`` at the integrand's precision
(cached as ``gauss_h_k`` beside ``gauss_f_k``). Sound by inclusion isotonicity (a hoisted ball
contains the part at every point of the argument balls); not bit for bit the same balls (a
product is regrouped), the same to the 33 digits printed. Per evaluation (two integrand shapes
of glm_logistic, the root from its memo, 970 real nodes at 144 bits, 5 rounds alternating, min):
21.8 -> 17.0 us and 24.4 -> 17.6 us. (2) ``implicit._ball_key`` reuses the key part of a ball
object it has seen (the parameter and hoisted balls are the same objects at every node: 12 ->
~3 us a key) and ``_Numeric.ball`` no longer imports at each call. In one process (load ~7): the
certificate ~2.25 -> ~2.0 s, root calls 31,312 -> 31,369 and ellipses 844 -> 845 (the
regrouped balls).

Tried and dropped (measured, not committed): the Newton centre a Krawczyk test reached,
remembered under the float64 midpoints and precision as the next test's start (the equations
at the centre, the Jacobian and the report meet a node with the same midpoints): real 144-bit
equation evaluations 22,623 -> 20,103, but in one process, 4 rounds alternating, 1.99 / 2.22 s
(min / median) without against 2.09 / 2.27 s with -- no gain.

Left: 1.5x needs the glm_logistic certificate at ~0.14 s, ~14x less. Per integrand evaluation
now ~17 us of arithmetic plus ~12 us of the root's call at a memo hit; the 6 reported integrals
(and the 3 equations, the 12 Jacobian entries) are enclosed one by one, each with its own
ellipse boxes and its own root look-ups, though at a node they share the root, e^p, the erfc
and e^(-z^2/2). One rule per group (one function returning the members' integrands with their
common subexpressions once, the ellipse boxes evaluated once for all, n the largest the members
need) is the next lever; then the mean-value form of the reported values (their values at the
centre, sharing the equations' root enclosures, plus a few-bit derivative over the box times
the box's radius) instead of the 144-bit integrals over the box. Neither done."""
"""The note of the section ``certjac2`` (job certjac2, session 54: the ball integrands' z-free
parts hoisted; the root's ball key)."""

NOTES = {NAME: NOTE, "cert": CERT_NOTE, "cert2": CERT2_NOTE, "certnode": CERTNODE_NOTE,
         "certlog": CERTLOG_NOTE, "certjac": CERTJAC_NOTE, "certjac2": CERTJAC2_NOTE}


def main():
    baseline = baseline_argument(NAME)
    if baseline is None:
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    trees = {"baseline": os.path.abspath(baseline), "this": REPO}
    caches = {k: tempfile.mkdtemp(prefix=f"certify-quadrature-{k}-") for k in trees}
    if "--caches" in sys.argv:  # (BASELINE,THIS: code caches of an earlier run, kept warm)
        caches = dict(zip(trees, sys.argv[sys.argv.index("--caches") + 1].split(",")))
    points = LOGISTIC_POINTS[:2] + POINTS
    if "--only" in sys.argv:  # (comma-separated parts of the rows' labels)
        keep = sys.argv[sys.argv.index("--only") + 1].split(",")
        points = [pt for pt in points if any(k in pt[0] for k in keep)]
    rows = []
    loads = [os.getloadavg()[0]]
    for label, path, raw in points:
        repeats = 1 if "logistic" in path else 3
        runs = {k: [] for k in trees}
        for _ in range(rounds):
            for k, tree in trees.items():
                runs[k].append(measure(tree, caches[k], path, raw, repeats))
                loads.append(os.getloadavg()[0])
        med = {k: {q: statistics.median(r[q] for r in runs[k]) for q in ("verified", "certified")}
               for k in trees}
        same = runs["baseline"][-1]["values"] == runs["this"][-1]["values"]
        proved = {k: "proved" if runs[k][-1]["proved"] else "NOT proved" for k in trees}
        rows.append([label, f"{med['baseline']['verified']:.2f} s",
                     f"{med['this']['verified']:.2f} s",
                     f"{med['baseline']['certified']:.2f} s ({proved['baseline']})",
                     f"{med['this']['certified']:.2f} s ({proved['this']})",
                     f"{med['this']['certified'] / med['baseline']['certified']:.2f}x",
                     f"{med['baseline']['certified'] / med['baseline']['verified']:.2f}x",
                     f"{med['this']['certified'] / med['this']['verified']:.2f}x",
                     "identical" if same else "DIFFERENT"])
        print(rows[-1], flush=True)
    md = [f"Machine: {machine_line()}, load average {min(loads):.1f}-{max(loads):.1f} during "
          f"the runs (shared); baseline `{trees['baseline']}`. CPU times (`time.process_time` "
          f"of the child), {rounds} round(s) alternating the trees; logistic models one timed "
          "run of each kind per round, the others medians of 3.", "",
          table(["point (30 digits unless said)", "verified, baseline", "verified, this",
                 "--certify, baseline", "--certify, this", "certify this/baseline",
                 "certify/verified (baseline)", "certify/verified (this)",
                 "verified values"], rows), "", NOTE]
    section = sys.argv[sys.argv.index("--section") + 1] if "--section" in sys.argv else NAME
    md[-1] = NOTES.get(section, "")
    write_section(section, "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
