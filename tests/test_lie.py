"""Property tests for pkm.lie (SE(3)/se(3) primitives, paper App. A, eq. 148–151, 155; eq. 7 and App. A).

Conventions: twist X = (ω; v), wrench W = (m; f), pose C = [[R, r], [0, 1]].
Random twists draw their rotation angle near 0 (within 1e-8, including exactly 0), near π
(within 1e-8), at the Taylor/closed-form switch of pkm.lie (φ = 1), near π/2 (log_so3 axis
branch switch) and generically.  All identities are checked to 1e-10 (max-abs error, relative to
max(1, max|expected|)) unless a finite-difference truncation bound says otherwise.
"""
import doctest

import numba
import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from conftest import numba_only
from pkm import lie
from pkm.lie import series as lie_series
from pkm.lie import (Ad, Ad_apply_into, Ad_into, Ad_inv, Ad_inv_apply_into, Ad_inv_into, ad,
                     ad_apply_into, coad, coad_apply_into, dexp_inv_se3, dexp_inv_so3, dexp_se3,
                     dexp_so3, dexp_so3_dot, rotvec_motions_into, exp_se3, exp_se3_into, exp_so3, hat, inv_se3, inv_se3_into,
                     log_se3, log_se3_into, log_so3, log_so3_into, mul_se3_into, skew, vee)

PI = np.pi
TOL = 1e-10
THR = lie_series._SERIES_PHI
SET = settings(max_examples=100, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def err(a, b):
    """Max-abs error of a against b, relative to max(1, max|b|)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


def check(a, b, tol=TOL):
    e = err(a, b)
    assert np.all(np.isfinite(a)) and e <= tol, f"error {e:.3e} > {tol:.0e}"


def skew_np(x):  # independent reference implementation
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def hat_np(X):
    M = np.zeros((4, 4))
    M[:3, :3], M[:3, 3] = skew_np(X[:3]), X[3:]
    return M


# ----------------------------------------------------------------------------- strategies
def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


_AXES = [np.eye(3)[i] for i in range(3)] + [np.array([1.0, 1, 0]) / np.sqrt(2),
                                            np.array([1.0, 1, 1]) / np.sqrt(3),
                                            np.array([-1.0, 2, -3]) / np.sqrt(14)]


@st.composite
def units(draw):
    if draw(st.booleans()):
        return draw(st.sampled_from(_AXES)) * draw(st.sampled_from([1.0, -1.0]))
    v = np.array(draw(st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1))))
    n = np.linalg.norm(v)
    assume(n > 1e-3)
    return v / n


A_ZERO = st.one_of(st.just(0.0), fl(0.0, 1e-8))
A_PI_BELOW = fl(1e-13, 1e-8).map(lambda d: PI - d)   # strictly below π, off the branch cut
A_PI_BOTH = st.one_of(st.just(PI), fl(-1e-8, 1e-8).map(lambda d: PI + d))
A_THR = fl(-1e-6, 1e-6).map(lambda d: THR * (1.0 + d))
A_HALF = fl(-1e-9, 1e-9).map(lambda d: PI / 2 + d)
A_BELOW_PI = st.one_of(A_ZERO, A_PI_BELOW, A_THR, A_HALF, fl(0.0, PI - 1e-8))  # |ω| < π
A_ALL = st.one_of(A_ZERO, A_PI_BOTH, A_THR, A_HALF, fl(0.0, 2 * PI))          # any rotation
A_MOD = st.one_of(A_ZERO, A_PI_BELOW, A_PI_BOTH, A_THR, fl(0.0, PI))           # |ω| ≲ π


@st.composite
def rotvecs(draw, angles=A_ALL):
    return draw(angles) * draw(units())


@st.composite
def twists(draw, angles=A_ALL, vmax=2.0):
    v = np.array(draw(st.tuples(fl(-vmax, vmax), fl(-vmax, vmax), fl(-vmax, vmax))))
    return np.concatenate([draw(rotvecs(angles)), v])


@st.composite
def poses(draw, angles=A_ALL):
    return exp_se3(draw(twists(angles)))


vec6 = st.tuples(*[fl(-1, 1)] * 6).map(np.array)


# ----------------------------------------------------------------------------- 1. exp/log
@SET
@given(rotvecs(A_ALL))
def test_exp_log_so3_roundtrip(x):
    R = exp_so3(x)
    w = log_so3(R)
    assert np.linalg.norm(w) <= PI + 1e-15
    check(exp_so3(w), R)


@SET
@given(st.one_of(fl(-1e-8, 1e-8), fl(-1.0, 1.0)), units())
def test_exp_log_so3_quaternions(qw, u):
    """Rotations from an independent source (scipy); qw ≈ 0 gives angles within ~2e-8 of π."""
    q = np.concatenate([np.sqrt(1.0 - qw * qw) * u, [qw]])
    R = Rotation.from_quat(q).as_matrix()
    check(exp_so3(log_so3(R)), R)


@SET
@given(units(), st.one_of(st.just(0.0), fl(-1e-13, 1e-13)))
def test_log_so3_special_cases(u, noise):
    """Exactly I, exact half turns (2uuᵀ − I), and slightly non-orthonormal matrices: no NaN."""
    assert np.all(log_so3(np.eye(3)) == 0.0)
    for R in (np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0]),
              2.0 * np.outer(u, u) - np.eye(3)):
        w = log_so3(R)
        assert abs(np.linalg.norm(w) - PI) < 1e-14
        check(exp_so3(w), R)
    for R in (np.eye(3), 2.0 * np.outer(u, u) - np.eye(3), exp_so3(0.7 * u)):
        Rp = R + noise * np.outer(u, u[::-1])
        check(exp_so3(log_so3(Rp)), Rp)


@SET
@given(rotvecs(A_BELOW_PI))
def test_log_exp_so3(x):
    check(log_so3(exp_so3(x)), x)


@SET
@given(fl(0.0, 1e-8), units())
def test_log_exp_so3_branch_cut(d, u):
    """At angle π − d the log is x or, when d is at round-off level, possibly x − 2πu."""
    x = (PI - d) * u
    w = log_so3(exp_so3(x))
    e = min(err(w, x), err(w, x - 2 * PI * u))
    assert e <= TOL
    if d >= 1e-13:
        check(w, x)


@SET
@given(poses(A_ALL))
def test_exp_log_se3_roundtrip(C):
    X = log_se3(C)
    assert np.linalg.norm(X[:3]) <= PI + 1e-15
    check(exp_se3(X), C)


@SET
@given(twists(A_BELOW_PI))
def test_log_exp_se3(X):
    check(log_se3(exp_se3(X)), X)


# ----------------------------------------------------------------------------- 2. hat/vee/exp
@SET
@given(twists(A_ALL), st.tuples(*[fl(-1, 1)] * 6))
def test_hat_vee(X, s):
    check(hat(X), hat_np(X), 0.0)
    check(hat(X[:3]), skew_np(X[:3]), 0.0)
    check(skew(X[:3]) @ X[3:], np.cross(X[:3], X[3:]), 1e-15)
    check(vee(hat(X)), X, 0.0)
    check(vee(hat(X[:3])), X[:3], 0.0)
    S = np.array([[s[0], s[3], s[4]], [s[3], s[1], s[5]], [s[4], s[5], s[2]]])
    check(vee(hat(X[:3]) + S), X[:3], 1e-15)  # symmetric part ignored


@SET
@given(rotvecs(A_ALL))
def test_exp_so3_orthonormal(x):
    R = exp_so3(x)
    check(R.T @ R, np.eye(3))
    assert abs(np.linalg.det(R) - 1.0) <= TOL


@SET
@given(twists(A_MOD))
def test_exp_se3_vs_expm(X):
    C = exp_se3(X)
    check(C, scipy.linalg.expm(hat_np(X)))
    check(C[:3, :3], exp_so3(X[:3]), 1e-15)
    assert np.all(C[3] == [0.0, 0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- 3./4. Ad
@SET
@given(poses(), poses())
def test_Ad_formula_and_product(C1, C2):
    R, r = C1[:3, :3], C1[:3, 3]
    ref = np.block([[R, np.zeros((3, 3))], [skew_np(r) @ R, R]])
    check(Ad(C1), ref, 1e-15)
    ref_inv = np.block([[R.T, np.zeros((3, 3))], [-R.T @ skew_np(r), R.T]])
    check(Ad_inv(C1), ref_inv, 1e-15)
    check(Ad(C1 @ C2), Ad(C1) @ Ad(C2))


@SET
@given(poses())
def test_Ad_inverse(C):
    check(inv_se3(C), np.linalg.inv(C))
    check(Ad_inv(C), np.linalg.inv(Ad(C)))
    check(Ad_inv(C) @ Ad(C), np.eye(6))
    check(Ad(inv_se3(C)), Ad_inv(C))


@SET
@given(poses(), twists())
def test_Ad_conjugation(C, X):
    check(hat(Ad(C) @ X), C @ hat(X) @ np.linalg.inv(C))
    check(hat(Ad_inv(C) @ X), np.linalg.inv(C) @ hat(X) @ C)


# ----------------------------------------------------------------------------- 5./6./7. ad
@SET
@given(twists(), twists())
def test_ad_commutator(X, Y):
    check(ad(X), np.block([[skew_np(X[:3]), np.zeros((3, 3))], [skew_np(X[3:]), skew_np(X[:3])]]),
          0.0)
    hX, hY = hat(X), hat(Y)
    check(hat(ad(X) @ Y), hX @ hY - hY @ hX)
    check(ad(X) @ Y, -ad(Y) @ X)


@SET
@given(twists(A_MOD), fl(-1.5, 1.5))
def test_Ad_exp_is_exp_ad(X, t):
    """Exact: Ad(exp(tX)) = expm(t ad X), so d/dt Ad(exp(tX)) = Ad(exp(tX)) ad X = ad X Ad(exp(tX))."""
    A = Ad(exp_se3(t * X))
    check(A, scipy.linalg.expm(t * ad(X)))
    check(A @ ad(X), ad(X) @ A)


# 8th-order central stencil for f'(0): error = h^8 f^(9)(ξ)/630 + O(ε Σ|c_k|/h).
_FD_C = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])
_FD_K = np.arange(-4, 5)


def fd(f, h):
    return sum(c * f(k * h) for c, k in zip(_FD_C, _FD_K) if c != 0.0) / h


@SET
@given(twists(A_MOD), fl(-1.0, 1.0))
def test_Ad_derivative_fd(X, t0):
    """d/dt Ad(exp(tX)) = Ad(exp(tX)) ad X by finite differences.  With h = 1e-2, |ad X| ≲ 5:
    truncation ≤ 1e-16·5⁹/630 ≈ 3e-13, round-off ≈ 2·ε·|Ad|/h ≈ 5e-13; tolerance 1e-9."""
    d = fd(lambda s: Ad(exp_se3((t0 + s) * X)), 1e-2)
    check(d, Ad(exp_se3(t0 * X)) @ ad(X), 1e-9)
    if t0 == 0.0:
        check(d, ad(X), 1e-9)
    check(fd(lambda s: Ad(exp_se3(s * X)), 1e-2), ad(X), 1e-9)


@SET
@given(twists(), twists(), twists())
def test_jacobi(X, Y, Z):
    b = lambda a, c: ad(a) @ c  # noqa: E731
    check(b(X, b(Y, Z)) + b(Y, b(Z, X)) + b(Z, b(X, Y)), np.zeros(6))


@SET
@given(twists(), twists(), vec6)
def test_coad(X, Y, W):
    check(coad(X), ad(X).T, 0.0)
    G = np.block([[skew_np(X[:3]), skew_np(X[3:])], [np.zeros((3, 3)), skew_np(X[:3])]])
    check(-coad(X), G, 0.0)  # gyroscopic matrix, eq. 168
    assert abs((coad(X) @ W) @ Y - W @ (ad(X) @ Y)) <= TOL


# ----------------------------------------------------------------------------- 8. dexp
@SET
@given(twists(A_ALL), vec6)
def test_dexp_se3_fd(X, Xd):
    """Spatial ĊC⁻¹ = hat(dexp_X Ẋ), body C⁻¹Ċ = hat(dexp_{-X} Ẋ) for C(t) = exp(X + tẊ).
    8th-order stencil, h = 1e-2, |Ẋ| ≤ √6: truncation ≲ 1e-16·(√6)⁹·|C|/630 ≈ 1e-15·|C|,
    round-off ≈ 2·ε·|C|/h ≈ 5e-14·|C|; tolerance 1e-9."""
    C = exp_se3(X)
    Cd = fd(lambda s: exp_se3(X + s * Xd), 1e-2)
    Ci = np.linalg.inv(C)
    check(Cd @ Ci, hat(dexp_se3(X) @ Xd), 1e-9)
    check(Ci @ Cd, hat(dexp_se3(-X) @ Xd), 1e-9)


@SET
@given(rotvecs(A_ALL), st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1)).map(np.array))
def test_dexp_so3_fd(x, xd):
    R = exp_so3(x)
    Rd = fd(lambda s: exp_so3(x + s * xd), 1e-2)
    check(Rd @ R.T, skew(dexp_so3(x) @ xd), 1e-9)
    check(R.T @ Rd, skew(dexp_so3(-x) @ xd), 1e-9)
    check(dexp_so3(-x), dexp_so3(x).T, 1e-15)


@SET
@given(rotvecs(A_ALL), st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1)).map(np.array),
       st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1)).map(np.array))
def test_dexp_so3_dot_fd(x, xd, xdd):
    """d/dt dexp_x along ẋ against the 8th-order central difference (any angle, incl. near π and
    2π), and the body angular acceleration ω̇ = dexp_{−x}ẍ + dexp_dot(−x, −ẋ)ẋ of R(t) = exp(x(t)),
    x(t) = x + tẋ + t²ẍ/2, against the difference of ω(t) = vee(RᵀṘ) from finite differences of R."""
    check(dexp_so3_dot(x, xd), fd(lambda s: dexp_so3(x + s * xd), 1e-2), 1e-9)

    def xt(s):
        return x + s * xd + 0.5 * s * s * xdd

    def omega(t):  # body angular velocity from finite differences of R(t) alone
        R = exp_so3(xt(t))
        return vee(np.block([[R.T @ fd(lambda s: exp_so3(xt(t + s)), 1e-3), np.zeros((3, 1))],
                             [np.zeros((1, 4))]]))[:3]

    check(omega(0.0), dexp_so3(-x) @ xd, 1e-7)
    wd = dexp_so3(-x) @ xdd + dexp_so3_dot(-x, -xd) @ xd
    check(wd, fd(omega, 1e-2), 1e-7)


@SET
@given(rotvecs(A_ALL), st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1)).map(np.array),
       st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1)).map(np.array))
def test_rotvec_motions_into(x, xd, xdd):
    """The batched vector form equals exp, dexp_{−x}ẋ and dexp_{−x}ẍ + dexp_dot(−x, −ẋ)ẋ (matrices)."""
    R, W, WD = np.empty((1, 3, 3)), np.empty((1, 3)), np.empty((1, 3))
    rotvec_motions_into(x[None], xd[None], xdd[None], R, W, WD)
    check(R[0], exp_so3(x), 1e-14)
    check(W[0], dexp_so3(-x) @ xd, 1e-14)
    check(WD[0], dexp_so3(-x) @ xdd + dexp_so3_dot(-x, -xd) @ xd, 1e-13)


def series(M, kmax):
    out, P, f = np.zeros_like(M), np.eye(M.shape[0]), 1.0
    for k in range(kmax + 1):
        f *= k + 1  # (k+1)!
        out += P / f
        P = P @ M
    return out


@SET
@given(twists(st.one_of(A_ZERO, A_THR, fl(0.0, 1.0)), vmax=1.0))
def test_dexp_series_small(X):
    """dexp_X = Σ_{k≤30} ad_X^k/(k+1)! for |X| ≤ 1 (remainder < 1/31!)."""
    n = np.linalg.norm(X)
    if n > 1.0:
        X = X / n
    check(dexp_se3(X), series(ad(X), 30))
    check(dexp_so3(X[:3]), series(skew(X[:3]), 30))


@SET
@given(twists(st.one_of(A_PI_BOTH, fl(1.0, 3.5))))
def test_dexp_series_large(X):
    """Same for |ω| ≤ 3.5, |v| ≤ 2√3 (|ad X| ≤ 7) summed to k = 80 (remainder < 7⁸¹/82! ≈ 1e-54)."""
    check(dexp_se3(X), series(ad(X), 80))
    check(dexp_so3(X[:3]), series(skew(X[:3]), 80))


# ----------------------------------------------------------------------------- 9. dexp⁻¹
@SET
@given(twists(st.one_of(A_ZERO, A_THR, A_PI_BELOW, A_PI_BOTH, fl(0.0, 1.8 * PI))))
def test_dexp_inv(X):
    check(dexp_inv_se3(X) @ dexp_se3(X), np.eye(6))
    check(dexp_se3(X) @ dexp_inv_se3(X), np.eye(6))
    check(dexp_inv_so3(X[:3]) @ dexp_so3(X[:3]), np.eye(3))
    check(dexp_so3(X[:3]) @ dexp_inv_so3(X[:3]), np.eye(3))


# ----------------------------------------------------------------------------- 10. _into
@SET
@given(poses(), poses(), twists(), vec6)
def test_into_variants(C1, C2, X, V):
    o4, o6, o = np.full((4, 4), np.nan), np.full((6, 6), np.nan), np.full(6, np.nan)
    exp_se3_into(X, o4)
    check(o4, exp_se3(X), 0.0)
    mul_se3_into(C1, C2, o4)
    check(o4, C1 @ C2, 1e-14)
    inv_se3_into(C1, o4)
    check(o4, inv_se3(C1), 0.0)
    Ad_into(C1, o6)
    check(o6, Ad(C1), 0.0)
    Ad_inv_into(C1, o6)
    check(o6, Ad_inv(C1), 0.0)
    o3 = np.full(3, np.nan)
    log_so3_into(C1[:3, :3], o3)
    check(o3, log_so3(C1[:3, :3]), 0.0)
    log_se3_into(C1, o)
    check(o, log_se3(C1), 1e-14)
    for f, M in ((Ad_apply_into, Ad(C1)), (Ad_inv_apply_into, Ad_inv(C1))):
        f(C1, V, o)
        check(o, M @ V, 1e-14)
        Vc = V.copy()
        f(C1, Vc, Vc)  # in place
        check(Vc, M @ V, 1e-14)
    for f, M in ((ad_apply_into, ad(X)), (coad_apply_into, coad(X))):
        f(X, V, o)
        check(o, M @ V, 1e-14)
        Vc = V.copy()
        f(X, Vc, Vc)
        check(Vc, M @ V, 1e-14)


@numba.njit(cache=True)
def _kernel(X, V):
    C = exp_se3(X)
    C2 = np.empty((4, 4))
    mul_se3_into(C, inv_se3(C), C2)
    out = np.empty(6)
    Ad_apply_into(C, V, out)
    return C2, out - Ad(C) @ V, log_se3(C) - X, dexp_inv_se3(X) @ dexp_se3(X)


@SET
@given(twists(A_BELOW_PI), vec6)
def test_callable_from_njit(X, V):
    C2, dv, dX, I6 = _kernel(X, V)
    check(C2, np.eye(4))
    check(dv, np.zeros(6))
    check(dX, np.zeros(6))
    check(I6, np.eye(6))


# ----------------------------------------------------------------------------- 11. branches
@pytest.mark.parametrize("f", [lie_series._coeffs, lie_series._dcoeffs, lie_series._alpha])
def test_coefficient_continuity_at_threshold(f):
    f = numba_only(f)  # numba-only helpers
    lo, hi = np.atleast_1d(f(np.nextafter(THR, 0.0))), np.atleast_1d(f(THR))  # series | closed
    assert np.all(np.abs(lo - hi) <= 1e-13 * np.abs(hi))


@SET
@given(st.sampled_from(range(3)), st.tuples(fl(-2, 2), fl(-2, 2), fl(-2, 2)).map(np.array))
def test_public_continuity_at_threshold(i, y):
    """|x| just below (series branch) and exactly at (closed-form branch) the switch; axis-aligned
    x so the branch taken is exact.  The functions vary by ~1e-16 between the two points."""
    lo, hi = np.zeros(3), np.zeros(3)
    lo[i], hi[i] = np.nextafter(THR, 0.0), THR
    for f in (exp_so3, dexp_so3, dexp_inv_so3):
        check(f(lo), f(hi), 1e-12)
    for f in (exp_se3, dexp_se3, dexp_inv_se3):
        check(f(np.concatenate([lo, y])), f(np.concatenate([hi, y])), 1e-12)


@pytest.mark.parametrize("phi", [0.0, 1e-12, 1e-8, 1e-4, 2e-3, 1e-2, 0.1, 0.3,
                                 float(np.nextafter(THR, 0.0)), THR,
                                 1.0 + 1e-9, 2.0, 3.0, PI - 1e-8, PI, PI + 1e-8, 5.0, 6.0])
def test_coefficients_vs_mpmath(phi):
    """Scalar coefficients vs 200-digit references: relative error ≤ 1e-13 on both branches."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 200  # the closed forms cancel ~50 digits at φ = 1e-12
    if phi == 0.0:
        ref = [1.0, 0.5, 1 / 6, -1 / 12, -1 / 60, 1 / 12]
    else:
        p = mp.mpf(phi)
        a, b, g = mp.sin(p) / p, (1 - mp.cos(p)) / p**2, (p - mp.sin(p)) / p**3
        ref = [a, b, g, (a - 2 * b) / p**2, (b - 3 * g) / p**2, (1 - p / 2 * mp.cot(p / 2)) / p**2]
    got = [*numba_only(lie_series._coeffs)(phi), *numba_only(lie_series._dcoeffs)(phi), numba_only(lie_series._alpha)(phi)]
    for gv, rv in zip(got, ref):
        assert abs(gv - float(rv)) <= 1e-13 * abs(float(rv)), (gv, float(rv))


# ----------------------------------------------------------------------------- docstrings
_PUBLIC = sorted(n for n, v in vars(lie).items() if not n.startswith("_") and hasattr(v, "py_func"))


@pytest.mark.parametrize("name", _PUBLIC)
def test_docstring_examples(name):
    doc = getattr(lie, name).__doc__
    test = doctest.DocTestParser().get_doctest(doc or "", {}, name, None, 0)
    assert test.examples, f"{name} has no runnable example"
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0
