"""Tests for pkm.lie.small: the tuple small-matrix primitives.

Conventions (see pkm/lie/small.py): a rotation is a row-major 9-tuple ``R``, a pose the pair
``(R, p)`` with ``C = [[R, p], [0, 1]]``, a twist ``(ω, v)`` and a wrench ``(m, f)`` pairs of
3-tuples.  Each primitive is compared with its numpy / :mod:`pkm.lie` array counterpart (and
``exp_screw`` with ``scipy.linalg.expm``) to 1e-12 relative to the magnitudes involved.

"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from pkm.lie import small as sm
from pkm import lie

from conftest import NumbaOnly

# the primitives have no Python entry point (no_cpython_wrapper): call them through jitted callers
SM = NumbaOnly(sm)

TOL = 1e-12
SET = settings(max_examples=30, deadline=None, database=None,
               phases=[Phase.explicit, Phase.generate, Phase.shrink],  # no slow 'explain' on failure
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# ----------------------------------------------------------------------------- helpers
def flat(x):
    """Nested tuples / arrays → flat float64 array."""
    if isinstance(x, tuple):
        return np.concatenate([flat(y) for y in x]) if x else np.zeros(0)
    return np.atleast_1d(np.asarray(x, dtype=float)).ravel()


def check(got, expected, mag=1.0, tol=TOL):
    """``max|got − expected| ≤ tol · max(1, mag, max|expected|)``; shapes must agree."""
    g, e = flat(got), flat(expected)
    assert g.shape == e.shape, (g.shape, e.shape)
    assert np.all(np.isfinite(g))
    scale = max(1.0, float(mag), float(np.max(np.abs(e))) if e.size else 0.0)
    err = float(np.max(np.abs(g - e))) if e.size else 0.0
    assert err <= tol * scale, f"error {err:.3e} > {tol:.0e} · {scale:.3g}"


def t3(a):
    return tuple(float(x) for x in a)


def t9(R):
    return tuple(float(x) for x in np.asarray(R).ravel())


def pose4(R9, p):
    C = np.eye(4)
    C[:3, :3] = np.asarray(R9, float).reshape(3, 3)
    C[:3, 3] = p
    return C


def skew_np(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def hat_np(X):
    M = np.zeros((4, 4))
    M[:3, :3], M[:3, 3] = skew_np(X[:3]), X[3:]
    return M


def nrm(*xs):
    return float(np.prod([1.0 + np.linalg.norm(x) for x in xs]))


# ----------------------------------------------------------------------------- strategies
def fl(lo=-10.0, hi=10.0):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


vec3 = st.tuples(fl(), fl(), fl()).map(np.array)
vec6 = st.tuples(*[fl()] * 6).map(np.array)
mat3 = st.tuples(*[fl()] * 9).map(lambda t: np.array(t).reshape(3, 3))
scalar = fl()


@st.composite
def rotations(draw):
    q = np.array(draw(st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1), fl(-1, 1))))
    assume(np.linalg.norm(q) > 1e-3)
    return Rotation.from_quat(q / np.linalg.norm(q)).as_matrix()


@st.composite
def poses(draw):
    return pose4(draw(rotations()), draw(vec3))


@st.composite
def units(draw):
    v = np.array(draw(st.tuples(fl(-1, 1), fl(-1, 1), fl(-1, 1))))
    n = np.linalg.norm(v)
    assume(n > 1e-3)
    return v / n


def split_pose(C):
    return t9(C[:3, :3]), t3(C[:3, 3])


# ----------------------------------------------------------------------------- 3-vectors
@SET
@given(vec3, vec3, scalar)
def test_vector_ops(a, b, s):
    ta, tb = t3(a), t3(b)
    mag = nrm(a, b) * (1.0 + abs(s))
    check(SM.cross(ta, tb), np.cross(a, b), mag)
    check(SM.dot(ta, tb), a @ b, mag)
    check(SM.add(ta, tb), a + b, mag)
    check(SM.sub(ta, tb), a - b, mag)
    check(SM.scale(s, ta), s * a, mag)
    check(SM.axpy(s, ta, tb), s * a + b, mag)
    for r in (SM.cross(ta, tb), SM.add(ta, tb), SM.sub(ta, tb), SM.scale(s, ta), SM.axpy(s, ta, tb)):
        assert isinstance(r, tuple) and len(r) == 3


def test_vector_ops_exact():
    e1, e2, e3 = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    assert SM.cross(e1, e2) == e3 and SM.cross(e2, e3) == e1 and SM.cross(e3, e1) == e2
    assert SM.dot((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)) == 32.0
    assert SM.axpy(2.0, (1.0, 2.0, 3.0), (1.0, 1.0, 1.0)) == (3.0, 5.0, 7.0)


# ----------------------------------------------------------------------------- 3×3
@SET
@given(mat3, mat3, vec3)
def test_matrix_ops(A, B, x):
    tA, tB, tx = t9(A), t9(B), t3(x)
    mag = nrm(A, B, x)
    check(SM.mv(tA, tx), A @ x, mag)
    check(SM.mtv(tA, tx), A.T @ x, mag)
    check(SM.mm(tA, tB), (A @ B).ravel(), mag)
    check(SM.mtm(tA, tB), (A.T @ B).ravel(), mag)
    assert len(SM.mm(tA, tB)) == 9 and len(SM.mtm(tA, tB)) == 9


def test_matrix_ops_row_major():
    A = np.arange(9.0).reshape(3, 3) + 1.0
    B = np.arange(9.0).reshape(3, 3)[::-1] - 4.0
    x = np.array([1.0, -2.0, 0.5])
    assert SM.mv(t9(A), t3(x)) == t3(A @ x)
    assert SM.mtv(t9(A), t3(x)) == t3(A.T @ x)
    assert SM.mm(t9(A), t9(B)) == t9(A @ B)
    assert SM.mtm(t9(A), t9(B)) == t9(A.T @ B)


# ----------------------------------------------------------------------------- array access
def test_get_set_rows():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5))
    for i in range(4):
        assert SM.get3(a, i) == t3(a[i, :3])
    X = rng.standard_normal((4, 6))
    for i in range(4):
        w, v = SM.get6(X, i)
        assert w == t3(X[i, :3]) and v == t3(X[i, 3:])
    Y = X.copy()
    SM.set6(Y, 2, (1.0, 2.0, 3.0), (4.0, 5.0, 6.0))
    assert Y[2].tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    mask = np.arange(4) != 2
    assert np.array_equal(Y[mask], X[mask])
    # round trip
    for i in range(4):
        SM.set6(Y, i, *SM.get6(X, i))
    assert np.array_equal(Y, X)


@SET
@given(poses(), st.integers(0, 2))
def test_get_set_pose(C, i):
    Cs = np.random.default_rng(1).standard_normal((3, 4, 4))
    Cs[i] = C
    R, p = SM.get_pose(Cs, i)
    assert R == t9(C[:3, :3]) and p == t3(C[:3, 3])
    D = np.full((3, 4, 4), np.nan)
    SM.set_pose(D, i, R, p)
    assert np.array_equal(D[i], C)             # includes the bottom row [0, 0, 0, 1]
    assert np.isnan(np.delete(D, i, axis=0)).all()  # other poses untouched
    E = np.full((3, 4, 4), 7.0)
    SM.set_pose(E, i, R, p)
    assert np.array_equal(E[i, 3], [0.0, 0.0, 0.0, 1.0])


@SET
@given(st.integers(0, 3))
def test_inertia_mul(i):
    rng = np.random.default_rng(i)
    M = rng.standard_normal((4, 6, 6))
    x = rng.standard_normal(6)
    m, f = SM.inertia_mul(M, i, t3(x[:3]), t3(x[3:]))
    check((m, f), M[i] @ x, nrm(M[i], x))
    # symmetric positive inertia, too
    M[i] = M[i] @ M[i].T + np.eye(6)
    check(SM.inertia_mul(M, i, t3(x[:3]), t3(x[3:])), M[i] @ x, nrm(M[i], x))


def test_inertia_mul_basis():
    M = np.arange(2 * 36, dtype=float).reshape(2, 6, 6)
    for k in range(6):
        e = np.eye(6)[k]
        m, f = SM.inertia_mul(M, 1, t3(e[:3]), t3(e[3:]))
        assert m + f == t3(M[1, :, k])


# ----------------------------------------------------------------------------- SE(3)
@SET
@given(poses(), poses())
def test_pose_mul(C1, C2):
    R, p = SM.pose_mul(*split_pose(C1), *split_pose(C2))
    check((R, p), np.concatenate([(C1 @ C2)[:3, :3].ravel(), (C1 @ C2)[:3, 3]]), nrm(C1, C2))
    mul = np.empty((4, 4))
    lie.mul_se3_into(C1, C2, mul)
    check(pose4(R, p), mul, nrm(C1, C2))


def _check_exp(R, p, X, q):
    E = scipy.linalg.expm(q * hat_np(X))
    assert np.allclose(E[3], [0.0, 0.0, 0.0, 1.0], atol=1e-14)
    mag = (1.0 + abs(q)) * nrm(X)
    check(pose4(R, p), E, mag)
    check(pose4(R, p), lie.exp_se3(q * X), mag)
    Rm = np.asarray(R).reshape(3, 3)
    check(Rm @ Rm.T, np.eye(3))


@SET
@given(units(), vec3, fl(-2 * np.pi, 2 * np.pi))
def test_exp_screw_revolute(e, v, q):
    R, p = SM.exp_screw(t3(e), t3(v), q)
    _check_exp(R, p, np.concatenate([e, v]), q)
    assert abs(np.linalg.det(np.asarray(R).reshape(3, 3)) - 1.0) < 1e-12


@SET
@given(vec3, fl(-10, 10))
def test_exp_screw_prismatic(v, q):
    R, p = SM.exp_screw((0.0, 0.0, 0.0), t3(v), q)
    assert R == (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    check(p, q * v, nrm(v) * (1 + abs(q)))
    _check_exp(R, p, np.concatenate([np.zeros(3), v]), q)


def test_exp_screw_special_values():
    v = (0.3, -1.0, 2.0)
    for e in [(1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, 0.0)]:
        R, p = SM.exp_screw(e, v, 0.0)
        assert R == (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0) and p == (0.0, 0.0, 0.0)
    R, _ = SM.exp_screw((0.0, 0.0, 1.0), v, np.pi / 2)  # quarter turn about z: x ↦ y
    check(np.asarray(R).reshape(3, 3) @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])


@SET
@given(st.integers(0, 3), fl(-2 * np.pi, 2 * np.pi), units(), vec3)
def test_exp_joint(i, q, e, v):
    X = np.random.default_rng(i).standard_normal((4, 6))
    X[i, :3], X[i, 3:] = e, v
    X[(i + 1) % 4, :3] = 0.0  # a prismatic row as well
    for k in (i, (i + 1) % 4):
        got = SM.exp_joint(X, k, q)
        assert got == SM.exp_screw(t3(X[k, :3]), t3(X[k, 3:]), q)
        if k == i:
            _check_exp(*got, X[k], q)
        else:
            check(pose4(*got), scipy.linalg.expm(q * hat_np(X[k])), (1 + abs(q)) * nrm(X[k]))


# ----------------------------------------------------------------------------- adjoints
@SET
@given(poses(), vec6)
def test_Ad(C, V):
    R, p = split_pose(C)
    mag = nrm(C, V)
    got = SM.Ad(R, p, t3(V[:3]), t3(V[3:]))
    check(got, lie.Ad(C) @ V, mag)
    S = C @ hat_np(V) @ lie.inv_se3(C)  # hat(Ad_C V) = C hat(V) C⁻¹
    check(got, [S[2, 1], S[0, 2], S[1, 0], *S[:3, 3]], mag * nrm(C))


@SET
@given(poses(), vec6)
def test_Ad_inv(C, V):
    R, p = split_pose(C)
    mag = nrm(C, V)
    got = SM.Ad_inv(R, p, t3(V[:3]), t3(V[3:]))
    check(got, lie.Ad_inv(C) @ V, mag)
    check(got, lie.Ad(lie.inv_se3(C)) @ V, mag)
    check(SM.Ad(R, p, *got), V, mag * nrm(C))     # Ad_C Ad_C⁻¹ = id
    check(SM.Ad_inv(R, p, *SM.Ad(R, p, t3(V[:3]), t3(V[3:]))), V, mag * nrm(C))


@SET
@given(poses(), vec6, vec6)
def test_Ad_inv_T(C, W, V):
    R, p = split_pose(C)
    mag = nrm(C, W)
    got = SM.Ad_inv_T(R, p, t3(W[:3]), t3(W[3:]))
    check(got, lie.Ad_inv(C).T @ W, mag)
    Rm, pv = C[:3, :3], C[:3, 3]
    AdT = np.block([[Rm, skew_np(pv) @ Rm], [np.zeros((3, 3)), Rm]])  # (Ad_C⁻¹)ᵀ in closed form
    check(got, AdT @ W, mag)
    check(AdT.T @ lie.Ad(C), np.eye(6), nrm(C) ** 2)  # … and it is the inverse transposed
    out = np.empty(6)
    lie.Ad_inv_T_apply_into(C, W, out)
    check(got, out, mag)
    # duality ⟨Ad_C⁻ᵀ W, V⟩ = ⟨W, Ad_C⁻¹ V⟩
    lhs = flat(got) @ V
    rhs = W @ flat(SM.Ad_inv(R, p, t3(V[:3]), t3(V[3:])))
    check(lhs, rhs, mag * nrm(V))


@SET
@given(vec6, vec6, vec6)
def test_ad_coad(V, Y, W):
    tv = (t3(V[:3]), t3(V[3:]))
    ty = (t3(Y[:3]), t3(Y[3:]))
    tw = (t3(W[:3]), t3(W[3:]))
    mag = nrm(V, Y, W)
    a = SM.ad(*tv, *ty)
    check(a, lie.ad(V) @ Y, mag)
    check(a, np.concatenate([np.cross(V[:3], Y[:3]), np.cross(V[3:], Y[:3]) + np.cross(V[:3], Y[3:])]), mag)
    br = hat_np(V) @ hat_np(Y) - hat_np(Y) @ hat_np(V)  # hat(ad_V Y) = [hat V, hat Y]
    check(a, np.concatenate([[br[2, 1], br[0, 2], br[1, 0]], br[:3, 3]]), mag)
    c = SM.coad(*tv, *tw)
    check(c, lie.coad(V) @ W, mag)
    check(c, lie.ad(V).T @ W, mag)
    # ⟨coad(V, W), Y⟩ = ⟨W, ad(V, Y)⟩
    check(flat(c) @ Y, W @ flat(a), mag)
