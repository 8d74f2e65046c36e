"""The SIMD path of the batch kernel (issue 18): the ``<W x double>`` type of
:mod:`pkm.kernels.simd_vec` against numpy, and the SIMD kernel against the scalar kernel and the
reference path (pkm.algorithms.manipulator) on every robot file, with and without sample times,
on a trajectory with hard corners (lanes that converge differently), for trajectory lengths that
fill the lanes partly, with the host's lane count and with 4 lanes."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import pkm
from pkm.algorithms import manipulator as man
from pkm.kernels import batch
from pkm.kernels.simd_general import GJ, vgj_inverse
from pkm.kernels.simd_kernel import _chord_lanes, supports
from pkm.kernels.simd_linalg import vcholesky
from pkm.kernels.simd_pipeline import vplatform_error, vsmall_error
from pkm.kernels.simd_lane import lget, lset, prefetch_read, prefetch_write
from pkm.kernels.simd_vec import (aligned_zeros, all_lanes, any_lane, get_lane, host_lanes, lane_bits, lanes,
                                  select, set_lane, splat, vabs, vcos, vfma, vload, vmax, vmin, vsin, vsqrt, vstore,
                                  vzero, width)
from pkm.kernels.simd_width import simd_width
from pkm.lie.small import cross, mm

from test_batch_start import FILES, _load, corner, smooth

#: The widths the SIMD path runs on this machine (measured once: pkm.kernels.simd_width), for robots with
#: constant-H limbs and with general ones, and 4.
LANES = simd_width()
WIDTHS = sorted({LANES, simd_width(True), 4})


def _width(robot):
    """The lanes of the default call for this robot (its kind of limbs)."""
    return batch._lane_count(robot._packed(), batch.SIMD_MIN_SAMPLES, None)


# ----------------------------------------------------------------------------- the vector type
@numba.njit
def _ops(a, out, L):
    x, y = vload(a, 0, L), vload(a, 1, L)
    vstore(out, 0, x * y + 2.0 - x / y)
    vstore(out, 1, select(x < y, -x, 3.0 - y))
    vstore(out, 2, vsqrt(vabs(x)) + vsin(y) * vcos(x))
    vstore(out, 3, vmax(x, y) - vmin(x, 0.5) + vfma(x, y, 1.0))
    vstore(out, 4, -x + splat(7.0, L) * vzero(L) + 1.0 * x - 2.0 * x)
    m = x < 0.0
    return lane_bits(m), any_lane(m), all_lanes(m | (x >= 0.0)), any_lane(m & ~m), get_lane(set_lane(x, 1, 9.0), 1), \
        width(x)


@numba.njit
def _tuples(a, out, L):
    """The tuple primitives of pkm.lie.small compile for vectors unchanged."""
    v = (vload(a, 0, L), vload(a, 1, L), vload(a, 2, L))
    R = (v[0], v[1], v[2], v[1], v[2], v[0], v[2], v[0], v[1])
    P = mm(R, R)
    c = cross(v, (v[2], v[0], v[1]))
    for k in range(9):
        vstore(out, k, P[k])
    for k in range(3):
        vstore(out, 9 + k, c[k])


@pytest.mark.parametrize("w", WIDTHS)
def test_vector_operations_equal_numpy(w):
    rng = np.random.default_rng(w)
    a = aligned_zeros(3, w)
    a[:] = rng.normal(size=(3, w))
    a[0, 0] = -abs(a[0, 0])
    a[0, 1] = abs(a[0, 1])
    out = aligned_zeros(12, w)
    bits, anyneg, full, none, lane1, wd = _ops(a, out, lanes(w))
    x, y = a[0], a[1]
    assert wd == w and lane1 == 9.0 and full and not none
    assert bits == sum(1 << k for k in range(w) if x[k] < 0) and anyneg
    np.testing.assert_allclose(out[0], x * y + 2 - x / y, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(out[1], np.where(x < y, -x, 3 - y))
    np.testing.assert_allclose(out[2], np.sqrt(abs(x)) + np.sin(y) * np.cos(x), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out[3], np.maximum(x, y) - np.minimum(x, 0.5) + (x * y + 1), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(out[4], -2 * x, rtol=1e-14, atol=1e-15)
    _tuples(a, out, lanes(w))
    for k in range(w):  # lane by lane, the scalar formulas
        v = a[:, k]
        R = np.array([v[0], v[1], v[2], v[1], v[2], v[0], v[2], v[0], v[1]]).reshape(3, 3)
        np.testing.assert_allclose(out[:9, k], (R @ R).ravel(), rtol=1e-14)
        np.testing.assert_allclose(out[9:, k], np.cross(v, [v[2], v[0], v[1]]), rtol=1e-14, atol=1e-15)


@numba.njit
def _lane_copies(a, rows, out, L):
    """Scalars in and out of single lanes (pkm.kernels.simd_lane), with prefetch hints on the way."""
    for s in range(rows.shape[0]):
        prefetch_read(rows, s, 0)
        prefetch_write(rows, s, 8 * rows.shape[1] - 1)
        for j in range(rows.shape[1]):
            rows[s, j] = lget(a, s, j, L)
            lset(out, s, j, 2.0 * rows[s, j], L)


@pytest.mark.parametrize("w", WIDTHS)
def test_single_lanes_address_the_element_of_their_row(w):
    a = aligned_zeros(3, w)
    a[:] = np.arange(3 * w).reshape(3, w)
    rows, out = np.zeros((3, w)), aligned_zeros(3, w)
    _lane_copies(a, rows, out, lanes(w))
    np.testing.assert_array_equal(rows, a)
    np.testing.assert_array_equal(out, 2 * a)


def test_scratch_is_aligned_and_lanes_follow_the_cpu():
    for w in (2, 4, 8):
        a = aligned_zeros((5, 3), w)
        assert a.shape == (5, 3, w) and a.ctypes.data % 64 == 0 and a.flags.c_contiguous and not a.any()
    assert host_lanes({"avx512f": True, "avx": True}) == 8
    assert host_lanes({"avx512f": False, "avx2": True, "avx": True}) == 4
    assert host_lanes({}) == 2


# ----------------------------------------------------------------------------- the kernel
def _long(robot, kind, count):
    if kind == "smooth":  # the robot's trajectory repeated (the sines are periodic over it; the line jumps back)
        X, XD, XDD, t = smooth(robot, 10 ** 6, 1)
        k = -(-count // (len(t) - 1))
        T = np.arange(k * (len(t) - 1)) * (t[1] - t[0])
        return tuple(np.tile(a[:-1], (k, 1))[:count] for a in (X, XD, XDD)) + (T[:count],)
    X, XD, XDD, t = zip(*(corner(robot, 60, 3) for _ in range(-(-count // 60))))  # a corner every 60 samples
    T = np.concatenate([ti + k * (t[0][-1] + t[0][1]) for k, ti in enumerate(t)])
    return np.concatenate(X)[:count], np.concatenate(XD)[:count], np.concatenate(XDD)[:count], T[:count]


def _assert_same(a, b, robot, what):
    scale = np.abs(b.tau).max()
    np.testing.assert_allclose(a.tau, b.tau, rtol=0, atol=1e-12 * scale, err_msg=what)
    np.testing.assert_allclose(a.limb_wrenches, b.limb_wrenches, rtol=0, atol=1e-12 * scale, err_msg=what)
    for limb in robot.limbs:
        np.testing.assert_allclose(a.joints[limb.name], b.joints[limb.name], rtol=0, atol=1e-12, err_msg=what)
        big = max(1.0, np.abs(b.joints_d[limb.name]).max())
        np.testing.assert_allclose(a.joints_d[limb.name], b.joints_d[limb.name], rtol=0, atol=1e-11 * big,
                                   err_msg=what)


# With SPLIT = 2 (fixture below; batch.segment_length): 3 and 13: one lane, partly; 1100: 5 segments of 256 (the last
# short), fewer than 8 lanes; 2400: 10 segments of 256 on 8 lanes, 8 of 300 on 4, two groups either way; the scalar
# kernel: 2 segments of 550 and 1200 (so the SIMD and scalar runs are cut differently: cold starts at other samples)
LENGTHS = [3, 13, 1100, 2400]


@pytest.fixture(autouse=True)
def _two_threads_split(monkeypatch):
    """The segmentation of a 2-thread pool whatever the host's, so that LENGTHS mean what they say."""
    monkeypatch.setattr(batch, "SPLIT", 2)
#: The robots tested at every width in WIDTHS: limbs with a constant H (Delta) and a general H (IRSBot-2).
BOTH_WIDTHS = ("delta_3rr2rrr", "irsbot2")


#: The robots the SIMD path takes: the redundantly actuated ones run the scalar kernel
#: (test_which_robots_take_the_simd_path), which tests/test_batch_start.py checks against the reference.
SIMD_FILES = [p for p in FILES if p.stem not in ("planar_4rpr", "delta_4rr2rrr")]


@pytest.mark.parametrize("path", SIMD_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("kind", ["smooth", "corner"])
@pytest.mark.parametrize("with_times", [True, False], ids=["t", "no-t"])
def test_simd_equals_scalar_and_reference(path, kind, with_times):
    robot = _load(path)
    # A task space that is not twist-closed runs the Python reference path whatever `simd` says
    # (pkm.robot): a few samples show that `simd` is accepted there; long runs would only time Python.
    lengths = LENGTHS if robot._closed else LENGTHS[:2]
    # Every compiled variant of the lanes is a type signature (W, the limbs' count and task dimension,
    # constant or general H): both widths on one robot of each kind of limb, the host's W on the rest.
    widths = sorted({_width(robot), 4}) if path.stem in BOTH_WIDTHS else [_width(robot)]
    X, XD, XDD, t = _long(robot, kind, max(lengths))
    for N in lengths:
        tt = t[:N] if with_times else None
        scalar = robot.inverse_dynamics(X[:N], XD[:N], XDD[:N], t=tt, simd=False)
        for w in widths:
            for threads in (1, 2):
                fast = robot.inverse_dynamics(X[:N], XD[:N], XDD[:N], t=tt, simd=w, threads=threads)
                _assert_same(fast, scalar, robot, f"N={N} W={w} threads={threads}")
    # the reference on every 97th sample (each warm-started from the last)
    idx = np.arange(0, max(lengths), 97 if robot._closed else 4)
    ref = man.inverse_dynamics(robot, X[idx], XD[idx], XDD[idx], tol=1e-14)
    fast = robot.inverse_dynamics(X, XD, XDD, t=t if with_times else None, simd=True)
    scale = np.abs(ref.tau).max()
    np.testing.assert_allclose(fast.tau[idx], ref.tau, rtol=0, atol=1e-12 * scale)
    for limb in robot.limbs:
        np.testing.assert_allclose(fast.joints[limb.name][idx], ref.joints[limb.name], rtol=0, atol=1e-12)


def test_which_robots_take_the_simd_path():
    """Every robot of the kernel, constant H or general loops (IRSBot-2, 3R[2US]: simd_general), except
    the redundantly actuated ones (the lanes invert a square J_IK: the scalar kernel runs them)."""
    took = {p.stem: supports(_load(p)._packed()) for p in FILES}
    redundant = {p.stem for p in FILES if _load(p).redundancy > 0}
    assert redundant == {"planar_4rpr", "delta_4rr2rrr"} & set(took)
    assert all(v for k, v in took.items() if k not in redundant) and not any(took[k] for k in redundant)
    assert {"delta_3rr2rrr", "delta_rus", "irsbot2", "delta_3r2us"} <= set(took)


@numba.njit
def _gj(A, m, L):
    return lane_bits(vgj_inverse(A, 0, GJ * GJ, m, L))


@pytest.mark.parametrize("w", WIDTHS)
def test_lane_inverse_pivots_per_lane(w):
    """G_y⁻¹ in lanes (Gauss–Jordan, rows exchanged per lane by select) against numpy: each lane a
    matrix whose largest first-column entry is in another row (lane 0 needs no exchange, the
    others a different one; the other entries of that column 1e-9 small, a leading pivot that
    loses ~9 digits without pivoting), and one singular lane, which the mask reports."""
    rng = np.random.default_rng(7)
    m = 4
    A = aligned_zeros(2 * GJ * GJ, w)
    mats = []
    for k in range(w):
        M = rng.normal(size=(m, m))
        M[:, 0] *= 1e-9
        M[k % m, 0] = 2.0 + k  # the pivot of column 0 in row k mod m
        if k == w - 1:
            M[:, 2] = 0.0  # singular: that column's pivot is exactly zero
        mats.append(M)
        for a in range(m):
            for b in range(m):
                A[a * GJ + b, k] = M[a, b]
    assert _gj(A, m, lanes(w)) == (1 << (w - 1)) - 1
    for k in range(w - 1):
        X = np.array([[A[GJ * GJ + a * GJ + b, k] for b in range(m)] for a in range(m)])
        np.testing.assert_allclose(X @ mats[k], np.eye(m), rtol=0, atol=1e-13)


@numba.njit
def _chol(A, d, inv, L):
    return lane_bits(vcholesky(A, 0, 36, d, 6, 72 if inv else -1, L))


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("d", range(1, 7))
def test_lane_cholesky_against_numpy(w, d):
    """The lanes' Cholesky factor (the limb geometry's ``L_pᵀL_p = CCᵀ`` and the lanes' ``M_t`` solve) against
    numpy, each lane its own Gram matrix ``BᵀB`` of a 6 × d ``B``: scales from 1e-5 to 1e4 and condition numbers up
    to ~1e8 (two nearly dependent columns), so that an error of its elimination shows against ``cond(C)·ε``; the
    diagonal of ``C⁻¹``; and one lane that is not positive definite, which the mask reports and which gets ``C = I``
    without touching the others."""
    rng = np.random.default_rng(100 * d + w)
    A = aligned_zeros(108, w)
    mats = []
    for k in range(w):
        B = rng.normal(size=(6, d)) * 10.0 ** rng.uniform(-5, 4)
        if d > 1 and k % 2:
            B[:, -1] = B[:, 0] + 1e-4 * 10.0 ** rng.uniform(0, 2) * B[:, -1]
        G = B.T @ B
        if k == w - 1:
            G[d - 1, d - 1] = -abs(G[d - 1, d - 1])  # not positive definite at the last pivot
        mats.append(G)
        for a in range(d):
            A[a * 6:a * 6 + d, k] = G[a]
    for inv in (True, False):
        B0 = A.copy()
        assert _chol(B0, d, inv, lanes(w)) == (1 << (w - 1)) - 1
        for k in range(w):
            C = np.array([[B0[36 + a * 6 + b, k] if b <= a else 0.0 for b in range(d)] for a in range(d)])
            if k == w - 1:
                np.testing.assert_array_equal(C, np.eye(d))
                continue
            ref = np.linalg.cholesky(mats[k])
            bound = 8 * d * np.finfo(float).eps * np.linalg.cond(ref) * np.abs(ref).max()
            np.testing.assert_allclose(C, ref, rtol=0, atol=bound)
            if inv:
                np.testing.assert_allclose([B0[72 + a * 6 + a, k] for a in range(d)], 1 / np.diag(ref),  # a small
                                           rtol=8 * d * np.finfo(float).eps * np.linalg.cond(mats[k]))  # pivot: cond(G)


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "irsbot2"])
def test_the_simd_path_runs_and_falls_back(monkeypatch, name):
    """``simd=True`` calls the lanes; a lane that fails (an unreachable sample in the third segment)
    has its segment run again on the scalar kernel, which names the sample as without SIMD; for a
    robot with constant-H limbs and one with general loops."""
    robot = _load(FILES[[p.stem for p in FILES].index(name)])
    calls = []
    orig = batch._Run.lanes
    monkeypatch.setattr(batch._Run, "lanes", lambda self, *a: calls.append(a[1]) or orig(self, *a))
    X, XD, XDD, t = smooth(robot, 1100, 1)
    robot.inverse_dynamics(X, XD, XDD, t=t, simd=True, threads=1)
    w = _width(robot)
    assert calls and len(calls[0]) == min(w, -(-len(X) // batch.segment_length(len(X), w)))
    calls.clear()
    robot.inverse_dynamics(X, XD, XDD, t=t, simd=False, threads=1)
    assert not calls
    X = X.copy()
    X[600] = 3.0  # every task coordinate 3 m: out of reach
    for simd in (False, True):
        with pytest.raises(pkm.IKError, match="sample 600"):
            robot.inverse_dynamics(X, XD, XDD, t=t, simd=simd, threads=1)


@pytest.mark.parametrize("name", BOTH_WIDTHS)
def test_the_default_call_takes_the_simd_path(name):
    """``robot.inverse_dynamics(x, xd, xdd)`` and ``(…, t=t)`` with no ``simd`` argument run the lanes
    (``batch.PATHS``) at the machine's width from ``SIMD_MIN_SAMPLES`` samples on, with times or without, and
    give the scalar kernel's results (constant-H limbs and general loops)."""
    robot = _load(FILES[[p.stem for p in FILES].index(name)])
    X, XD, XDD, t = _long(robot, "smooth", batch.SIMD_MIN_SAMPLES + 76)
    for tt in (t, None):
        before = batch.PATHS.copy()
        fast = robot.inverse_dynamics(X, XD, XDD) if tt is None else robot.inverse_dynamics(X, XD, XDD, t=tt)
        took = batch.PATHS - before
        assert took == {"simd": 1, f"simd{_width(robot)}": 1}, took
        _assert_same(fast, robot.inverse_dynamics(X, XD, XDD, t=tt, simd=False), robot, f"t={tt is not None}")
        assert (batch.PATHS - before)["scalar"] == 1
    before = batch.PATHS.copy()
    robot.inverse_dynamics(X[:batch.SIMD_MIN_SAMPLES - 1], XD[:batch.SIMD_MIN_SAMPLES - 1],
                           XDD[:batch.SIMD_MIN_SAMPLES - 1])  # shorter: the scalar kernel
    assert batch.PATHS - before == {"scalar": 1}


def test_bad_simd_option():
    robot = _load(FILES[[p.stem for p in FILES].index("delta_3rr2rrr")])
    X, XD, XDD, t = smooth(robot, 5, 1)
    with pytest.raises(ValueError, match="simd must be"):
        robot.inverse_dynamics(X, XD, XDD, simd=3)


# ----------------------------------------------------------------------------- the platform stage in lanes
@pytest.mark.parametrize("w", WIDTHS)
def test_platform_stage_in_lanes_equals_the_scalar_one(w):
    """:func:`pkm.kernels.simd_platform.platform_lanes` against the scalar kernel's
    :func:`pkm.kernels.dynamics._actuator_forces`, sample by sample, on random platform states,
    wrenches and ``J_IK``: one lane needs row exchanges in every column, one ``J_IK`` is singular
    (a zero row: a zero pivot), one is ill conditioned (condition above the threshold), one lane is
    not active; the failures are the scalar kernel's and the other lanes' forces equal its own (and
    their J_IK and W̄ reach the outputs)."""
    from conftest import numba_only
    from pkm.kernels.dynamics import OK, _actuator_forces
    from pkm.kernels.simd_platform import pl_rows, platform_lanes
    from pkm.kernels.work import make_work
    from pkm.lie import exp_so3

    robot = _load(FILES[[p.stem for p in FILES].index("delta_3rr2rrr")])
    km = robot._packed()
    L, dp, thresh = km.mi.shape[0], len(km.dp_static), 1e6
    rng = np.random.default_rng(w)
    Cd = np.zeros((w, 4, 4))
    Cd[:, 3, 3] = 1.0
    for s in range(w):
        Cd[s, :3, :3], Cd[s, :3, 3] = exp_so3(rng.normal(size=3)), rng.normal(size=3)
    Vp, dVp, Wee = rng.normal(size=(w, 6)), rng.normal(size=(w, 6)), rng.normal(size=(w, 6))
    limbW, JIK = rng.normal(size=(w, L, dp)), rng.normal(size=(w, dp, dp))
    JIK[1] = np.array([[1e-3, 2.0, 0.5], [0.2, 1e-3, 3.0], [4.0, 0.1, 1e-3]])  # J_IKᵀ: row exchanges at columns 0 and 1
    JIK[2, 1] = 0.0
    JIK[3, 2] = JIK[3, 0] + 1e-9 * rng.normal(size=dp)
    active = (1 << w) - 1 & ~(1 << (w - 1))
    SMP, PL = aligned_zeros(24, w), aligned_zeros(pl_rows.py_func(L, dp)[-1], w)
    SMP[:9], SMP[9:12] = Cd[:, :3, :3].reshape(w, 9).T, Cd[:, :3, 3].T
    SMP[12:18], SMP[18:24] = Vp.T, dVp.T
    ojik, ow = pl_rows.py_func(L, dp)[:2]
    PL[ojik:ojik + dp * dp] = JIK.reshape(w, dp * dp).T
    PL[ow:ow + L * dp] = limbW.reshape(w, L * dp).T
    tau, platW, status = np.full((w, dp), np.nan), np.full((w, dp), np.nan), np.zeros((w, 4))
    JIK_out, limbW_out = np.full_like(JIK, np.nan), np.full_like(limbW, np.nan)
    g0 = np.array([0.0, 0.0, -9.81])
    good = numba_only(platform_lanes)(L, km.Mp, km.dp_static, SMP, Wee, g0, thresh, PL, np.arange(w), active,
                                      JIK_out, limbW_out, tau, platW, status, -1, lanes(w))
    mat, vec = (a[0] for a in make_work(km, 1)[2:4])
    forces = numba_only(_actuator_forces)
    for s in range(w):
        tau1, platW1, st1 = np.full((w, dp), np.nan), np.full((w, dp), np.nan), np.zeros(4)
        ok = forces(km.Mp, km.dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW1, JIK, tau1, mat, vec, thresh, st1)
        if not active >> s & 1:
            assert not good >> s & 1 and np.isnan(tau[s]).all()
            continue
        assert bool(good >> s & 1) == ok, s
        if ok:
            assert status[s, 0] == OK
            np.testing.assert_allclose(tau[s], tau1[s], rtol=1e-14, atol=1e-14 * np.abs(tau1[s]).max())
            np.testing.assert_allclose(platW[s], platW1[s], rtol=1e-14, atol=1e-14 * np.abs(platW1[s]).max())
            np.testing.assert_array_equal(JIK_out[s], JIK[s])  # the outputs of the lanes' stashed rows
            np.testing.assert_array_equal(limbW_out[s], limbW[s])
        else:
            assert tuple(status[s, :3]) == (-1, s, -1) and np.isnan(tau[s]).all()
    assert good & 0b1110 == 0b0010  # the exchanges lane is regular, the singular and ill-conditioned ones not


def test_static_shape_holds_the_sizes_the_lanes_compile_with():
    """``static_shape``: each size as the length − 1 of a tuple (numba knows it when it compiles), ``()``
    where the limbs or loops differ; checked against the model's arrays for every robot; the general limbs'
    dependent variables ``y`` and platform path as bits, checked against the limb models."""
    from pkm.kernels.model import (LAY_DMAX, LAY_LMAX, LAY_LOOPS, LAY_NMAX, LAY_QIDX, LI_AFF, LI_N, LI_NLOOP, LP_M,
                                   LP_SIZE, LP_Y)
    from pkm.kernels.simd_pipeline import static_shape

    dynamic, structured = set(), set()
    for p in FILES:
        robot = _load(p)
        km = robot._packed()
        mi, lay = km.mi, km.lay
        S = static_shape(km)
        assert [len(S[k]) - 1 for k in range(3)] == [lay[LAY_NMAX], lay[LAY_DMAX], lay[LAY_LMAX]]
        ls = range(mi.shape[0])
        for k, values in ((3, {mi[l, LI_N] for l in ls}), (4, {mi[l, LI_NLOOP] for l in ls}),
                          (5, {mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_M] for l in ls for lp in range(mi[l, LI_NLOOP])})):
            if len(values) == 1:
                assert len(S[k]) - 1 == values.pop(), (p.stem, k)
            else:
                assert S[k] == (), (p.stem, k)
                dynamic.add(k)
        general = [limb for limb, aff in zip(robot.limbs, mi[:, LI_AFF]) if aff == 0]
        if not general:
            assert S[6:] == ((),) * 4
            continue
        # the general limbs' dependent variables and platform paths as bits, from the limb models (not from mi)
        ys = {sum(1 << int(v) for lp in limb.loops for v in lp.y) for limb in general}
        paths = set()
        for limb in general:
            bits, j = 0, limb.platform
            while j >= 0:
                bits, j = bits | 1 << j, limb.tree.parent[j]
            paths.add(bits)
        assert [len(S[k]) - 1 + 32 * (len(S[k + 1]) - 1) for k in (6, 8)] == [ys.pop(), paths.pop()], p.stem
        structured.add(p.stem)
        bad = km.mi.copy()  # a q that is also a y: no partition, so H stays dense (no bits)
        g = next(l for l in range(len(robot.limbs)) if mi[l, LI_AFF] == 0)
        bad[g, lay[LAY_QIDX]] = mi[g, lay[LAY_LOOPS] + LP_Y]
        assert static_shape(km._replace(mi=bad))[6:] == ((),) * 4
    assert 5 in dynamic  # IRSBot-2's limbs have loops of 2 and 4 rows: the lanes read m from mi there
    assert structured == {"delta_3r2us", "irsbot2"}
    assert static_shape(_load(FILES[[p.stem for p in FILES].index("delta_3r2us")])._packed())[3:] == (
        (0,) * 10, (0,) * 2, (0,) * 5, (0,) * 29, (0,) * 2, (0,) * 32, (0,) * 2)  # n_l = 9, one loop of 4 rows
    # (paper Ex. 2); y = 2…5 (60 = 28 + 32), the path 0…5 (63 = 31 + 32: the platform is body 5)


def test_lanes_with_sizes_read_at_run_time_give_the_same_torques(monkeypatch):
    """The same lanes compiled without the constants (every size read from ``mi``/``lay`` at run time, ``H`` and
    ``J_p`` dense) give the torques of the specialised code (3R[2US] Delta, general loops)."""
    from pkm.kernels import simd_pipeline

    robot = _load(FILES[[p.stem for p in FILES].index("delta_3r2us")])
    X, XD, XDD, t = _long(robot, "smooth", 600)
    fast = robot.inverse_dynamics(X, XD, XDD, t=t, simd=True, threads=1)
    real = simd_pipeline.static_shape
    monkeypatch.setattr(simd_pipeline, "static_shape", lambda km: ((),) * 10)   # (batch imports it per call)
    slow = robot.inverse_dynamics(X, XD, XDD, t=t, simd=True, threads=1)
    _assert_same(fast, slow, robot, "sizes at run time")
    assert all(real(robot._packed()))


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "delta_3r2us", "irsbot2"])
def test_lanes_keep_and_read_the_history_of_the_right_samples(monkeypatch, name):
    """The lanes keep the last two samples' ``θ, θ̇, θ̈`` and ``L_p⁺`` in a ring of two slots (the slot of sample
    ``s − 1`` is ``k & 1`` at lane step ``k``, :func:`pkm.kernels.simd_kernel.run_lanes`). Read from the wrong slot,
    the start is predicted from another sample; the lane's scalar IK then still lands within ``tol`` (the torques
    agree with the scalar kernel, test above), so count those solves (``status[:, 3]``): on a smooth trajectory
    the lanes need none (constant-H limbs and general loops, with and without times). And after the last step
    the ring holds the last sample in the slot written last and the one before in the other: ``θ`` (every
    ``θ_i``: the scalar IK's fallback start), ``θ̇, θ̈`` (a constant-H limb's independent coordinates, which its
    prediction reads; every variable of a general limb) as written to the outputs, and a constant-H limb's
    ``L_p⁺`` = ``pinv(J_p H)`` at that sample's ``θ`` (:meth:`pkm.algorithms.limb.LimbModel.platform_jacobian`)."""
    import inspect

    from pkm.kernels import simd_kernel
    from pkm.kernels.model import LI_AFF

    robot = _load(FILES[[p.stem for p in FILES].index(name)])
    real = simd_kernel.run_lanes
    sig = inspect.signature(real.py_func)
    calls = []

    def spy(*args):  # (batch imports run_lanes per call)
        real(*args)
        calls.append({k: v.copy() if isinstance(v, np.ndarray) else v for k, v in sig.bind(*args).arguments.items()})

    monkeypatch.setattr(simd_kernel, "run_lanes", spy)
    X, XD, XDD, t = _long(robot, "smooth", 600)
    for tt in (t, None):
        n0 = len(calls)
        fast = robot.inverse_dynamics(X, XD, XDD, t=tt, simd=True, threads=1)
        assert sum((a["seg_e"] - a["seg_a"]).sum() for a in calls[n0:]) == len(X)
        assert sum(a["status"][:, 3].sum() for a in calls[n0:]) == 0, f"t={tt is not None}"
        _assert_same(fast, robot.inverse_dynamics(X, XD, XDD, t=tt, simd=False, threads=1), robot,
                     f"t={tt is not None}")
    checked = 0
    for a in calls:
        L, nmax = a["mi"].shape[0], a["TH"].shape[0] // a["mi"].shape[0]
        nn, dmax = L * nmax, a["PH"].shape[0] // (12 * L)
        longest = (a["seg_e"] - a["seg_a"]).max()
        last = 1 - ((longest - 1) & 1)  # the slot written at the last step, k = longest − 1
        for j in np.flatnonzero(a["seg_e"] - a["seg_a"] == longest):
            for l, limb in enumerate(robot.limbs):
                Ps = []
                for slot, s in ((last, a["seg_e"][j] - 1), (1 - last, a["seg_e"][j] - 2)):
                    o = slot * 3 * nn + l * nmax
                    rows = range(limb.n) if a["mi"][l, LI_AFF] == 0 else limb.q_index
                    for kind, out in enumerate((a["theta"], a["thetad"], a["thetadd"])):
                        rs = range(limb.n) if kind == 0 else rows
                        np.testing.assert_array_equal([a["HIST"][o + kind * nn + i, j] for i in rs], out[s, l, rs])
                    if a["mi"][l, LI_AFF]:
                        P = np.linalg.pinv(limb.platform_jacobian(a["theta"][s, l, :limb.n]))
                        ph = a["PH"][((slot * L + l) * dmax + np.arange(P.shape[0])[:, None]) * 6 + np.arange(6), j]
                        np.testing.assert_allclose(ph, P, rtol=0, atol=1e-11 * np.abs(P).max())
                        Ps.append(P)
                if Ps:  # the two samples' L_p⁺ differ by far more than that tolerance
                    assert np.abs(Ps[0] - Ps[1]).max() > 1e-8 * np.abs(Ps[0]).max()
                checked += 1
    assert checked >= 4 * len(robot.limbs)  # (at least two lanes of a full length with times and without)


@numba.njit
def _chord_caller(l, mi, S, mf, lay, d, SMP, VM, PH, TH, oe, flags, p, lanes):
    _chord_lanes(l, mi, S, mf, lay, d, SMP, VM, PH, TH, oe, vload(flags, 0, lanes) > 0.5, p, lanes)


@pytest.mark.parametrize("p", [0, 1])
def test_the_chord_step_extrapolates_the_last_two_samples_pseudo_inverses_in_order(p):
    """``q += (P₁ + r (P₁ − P₂)) e`` with ``P₁`` the ``L_p⁺`` of sample s − 1 (the ring's slot ``p`` of ``PH``) and
    ``P₂`` that of s − 2, in the lanes whose start is a candidate only: the older and the newer sample exchanged
    gives ``P₂ + r (P₂ − P₁)``, a chord step that still lands within the IK's margin from a close start, so the
    kernel's equality tests alone would not see it."""
    from pkm.kernels.model import LAY_QIDX, pack
    from pkm.kernels.simd_kernel import SMP_ROWS, make_lane_work
    from pkm.kernels.simd_pipeline import static_shape, vm_rows

    robot = _load(FILES[0].parent / "delta_3rr2rrr.toml")
    km = pack(robot)
    S, w, l = static_shape(km), 4, 1
    L, nmax, dmax, d = km.mi.shape[0], len(S[0]) - 1, len(S[1]) - 1, len(km.d_static)
    TH, HIST, VB, VM, SMP, PH, sj, PL, TRIG = make_lane_work(km, w)
    rng = np.random.default_rng(3)
    P1, P2, e = rng.normal(size=(d, 6, w)), rng.normal(size=(d, 6, w)), rng.normal(size=(6, w))
    r = np.array([0.5, 1.0, 2.0, 0.0])
    q_index = km.mi[l, km.lay[LAY_QIDX]:km.lay[LAY_QIDX] + d]
    TH[l * nmax + q_index] = rng.normal(size=(d, w))
    q0 = TH[l * nmax + q_index].copy()
    for slot, P in ((p, P1), (1 - p, P2)):
        o = (slot * L + l) * dmax * 6
        PH[o:o + d * 6] = P.reshape(d * 6, w)
    SMP[SMP_ROWS + dmax] = r
    oe = vm_rows.py_func(nmax, dmax)[7]
    VM[oe:oe + 6] = e
    flags = aligned_zeros(1, w)
    flags[0] = [1.0, 1.0, 0.0, 1.0]   # lane 2 is no candidate: its q stays
    _chord_caller(l, km.mi, S, km.mf, km.lay, d, SMP, VM, PH, TH, oe, flags, p, lanes(w))
    want = q0 + np.einsum("arj,rj->aj", P1 + r * (P1 - P2), e * flags[0])
    np.testing.assert_allclose(SMP[SMP_ROWS:SMP_ROWS + d], want, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(SMP[SMP_ROWS:SMP_ROWS + d, 2], q0[:, 2])


def test_below_the_tiny_step_the_series_is_sin_d_and_one():
    """:func:`pkm.kernels.simd_pipeline.vfk` updates a joint that moved by at most ``TINY_STEP`` (every lane: a
    Newton step's correction) by ``c₀ − s₀Δ, s₀ + c₀Δ``: there the series of :func:`pkm.kernels.ik._sincos_step`
    gives exactly ``sin Δ = Δ`` and ``cos Δ = 1``; at twice the step ``cos Δ`` is no longer 1 (the bound is tight)."""
    from pkm.kernels.ik import _sincos_step
    from pkm.kernels.simd_pipeline import TINY_STEP

    ds = np.concatenate([np.geomspace(1e-300, TINY_STEP, 2000), [TINY_STEP, np.nextafter(TINY_STEP, 0.0)]])
    for d in np.concatenate([ds, -ds, [0.0]]):
        assert _sincos_step.py_func(d) == (d, 1.0), d
    assert _sincos_step.py_func(2.0 * TINY_STEP)[1] < 1.0



@numba.njit
def _errors_caller(l, mi, S, mf, lay, VB, SMP, VM, lanes):
    a, near_a, _, _ = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, 0, lanes)
    b, near_b, _, _ = vsmall_error(l, mi, S, mf, lay, VB, SMP, VM, 6, lanes)
    vstore(VM, 12, a)
    vstore(VM, 13, b)
    return lane_bits(near_a), lane_bits(near_b)


def test_the_small_error_is_the_logarithm_to_first_order():
    """:func:`pkm.kernels.simd_pipeline.vsmall_error` (the constant-H limbs' chord step and its acceptance) against
    the logarithm of :func:`pkm.kernels.simd_pipeline.vplatform_error` and against the twist ``ξ`` itself: platform
    poses ``C_p = C_d exp(−ξ)`` (so ``log(C_p⁻¹C_d) = ξ``) at rotation errors from 1e-15 to 1e-5, with random
    directions, translations and target poses; where the small error answers (``|ω| < SMALL_ROTATION``) its ``e``
    and ``|e|`` are the logarithm's within ``2|ω|`` relative (plus rounding), and it declines the larger rotations
    (their lanes go to the scalar IK)."""
    from pkm.kernels.model import LAY_NMAX, LAY_QP, LI_PLAT
    from pkm.kernels.simd_pipeline import SMALL_ROTATION, static_shape
    from pkm.kernels.work import BW_K, BW_SIZE
    from pkm.lie import exp_se3, exp_so3

    robot = _load(FILES[[p.stem for p in FILES].index("delta_3rr2rrr")])
    km = robot._packed()
    rng = np.random.default_rng(7)
    rot = np.array([1e-15, 1e-12, 1e-10, 3e-9, 0.9e-8, 1.1e-8, 1e-6, 1e-5])
    w, l = len(rot), 1
    VB = aligned_zeros(int(km.lay[LAY_NMAX]) * BW_SIZE, w)
    SMP, VM = aligned_zeros(26, w), aligned_zeros(14, w)
    o = km.lay[LAY_QP] + 12
    Q = np.eye(4)
    Q[:3, :3], Q[:3, 3] = km.mf[l, o:o + 9].reshape(3, 3), km.mf[l, o + 9:o + 12]
    ok = km.mi[l, LI_PLAT] * BW_SIZE + BW_K
    xis = []
    for j, r in enumerate(rot):
        Cd = np.eye(4)
        Cd[:3, :3], Cd[:3, 3] = exp_so3(rng.normal(size=3)), rng.normal(size=3)
        u = rng.normal(size=3)
        xi = np.concatenate([r * u / np.linalg.norm(u), r * rng.normal(size=3)])
        Kp = Cd @ exp_se3(-xi) @ np.linalg.inv(Q)   # C_p = K_p Q (vplatform_pose)
        VB[ok:ok + 12, j] = np.concatenate([Kp[:3, :3].ravel(), Kp[:3, 3]])
        SMP[:12, j] = np.concatenate([Cd[:3, :3].ravel(), Cd[:3, 3]])
        xis.append(xi)
    near_a, near_b = _errors_caller(l, km.mi, static_shape(km), km.mf, km.lay, VB, SMP, VM, lanes(w))
    assert near_a == (1 << w) - 1
    assert near_b == sum(1 << j for j, r in enumerate(rot) if r < SMALL_ROTATION)
    for j, (r, xi) in enumerate(zip(rot, xis)):
        e = np.linalg.norm(xi)
        np.testing.assert_allclose(VM[0:6, j], xi, rtol=0, atol=1e-6 * e + 2e-15)  # (the poses' rounding)
        if near_b >> j & 1:
            tol = 2 * r * e + 1e-15 * e
            np.testing.assert_allclose(VM[6:12, j], VM[0:6, j], rtol=0, atol=tol)
            assert abs(VM[13, j] - VM[12, j]) <= tol, j


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "delta_3r2us", "irsbot2"])
@pytest.mark.parametrize("noise", [1e-12, 1e-9, 1e-6])
def test_noisy_samples_are_solved_in_the_lanes(name, noise):
    """Samples off a smooth path by noise (measured or rounded data) are predicted to worse than ``tol``: the
    constant-H limbs' starts take chord steps in the lanes (``simd_kernel.CHORD_REACH``) instead of going one by
    one to the scalar IK, which had run the Delta at the scalar kernel's speed with noise of 1e-12 m; the general
    limbs (IRSBot-2, 3R[2US]) took their second chord step and Newton step in lanes already. The torques equal the
    scalar kernel's as on smooth samples; with and without sample times, noise from 1e-12 to 1e-6 (two seeds), and no
    limb sample handed to the scalar IK (``batch.PATHS["lane_scalar_ik"]``), where before this every Delta sample
    was."""
    robot = _load(next(p for p in FILES if p.stem == name))
    X, XD, XDD, t = _long(robot, "smooth", 1100)
    for seed in (1, 2):
        Xn = X + noise * np.random.default_rng(seed).standard_normal(X.shape)
        for tt in (t, None):
            scalar = robot.inverse_dynamics(Xn, XD, XDD, t=tt, simd=False)
            batch.PATHS.clear()
            fast = robot.inverse_dynamics(Xn, XD, XDD, t=tt, simd=True)
            what = f"noise {noise:g} seed {seed} {'t' if tt is not None else 'no t'}"
            _assert_same(fast, scalar, robot, what)
            assert batch.PATHS["simd"] == 1 and batch.PATHS["lane_fallbacks"] == 0, what
            # without t the steps are inferred from the noisy samples (pkm.kernels.batch.infer_steps): at 1e-6 the
            # predictions from wrong steps miss further, and 16 % of the Delta's limb samples (540 of 3300) need the
            # scalar IK; every one did before
            limit = 0 if tt is not None or noise < 1e-6 else 0.25 * len(X) * len(robot.limbs)
            assert batch.PATHS["lane_scalar_ik"] <= limit, (what, batch.PATHS["lane_scalar_ik"])
