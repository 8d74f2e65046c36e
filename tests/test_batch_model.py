"""The batch kernel's joint-frame model (pkm.kernels.model) and its small kernel pieces, each against
something it was not derived from: pkm.algorithms.kinematics / pkm.lie / numpy, and rebuilt matrices."""

from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.kernels.model import (BF_A, BF_B, BF_SIZE, LAY_HNZ, LAY_NMAX, LAY_QP, LOOP_TOL, inertia6, inertia10,
                             joint_frame, pack, reference_inertia)
from pkm.algorithms.kinematics import forward_kinematics
from pkm.lie import Ad
from pkm.algorithms.manipulator import dynamics_trees

from conftest import ROBOTS, numba_only

FILES = ("delta_3rr2rrr.toml", "delta_3r2us.toml", "irsbot2.toml")


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize("kind", ["R", "H", "P"])
def test_joint_frame_reproduces_the_screw(kind):
    rng = np.random.default_rng({"R": 1, "H": 2, "P": 3}[kind])
    for _ in range(20):
        e, y, h = _unit(rng), rng.normal(size=3), rng.normal()
        X = np.r_[np.zeros(3), e] if kind == "P" else np.r_[e, np.cross(y, e) + (h if kind == "H" else 0.0) * e]
        Q, a, b = joint_frame(X, kind)
        np.testing.assert_allclose(Q[:3, :3].T @ Q[:3, :3], np.eye(3), atol=1e-14)
        assert np.linalg.det(Q[:3, :3]) == pytest.approx(1.0)
        np.testing.assert_allclose(Q[:3, 2], e, atol=1e-14)  # z is the axis
        np.testing.assert_allclose(Ad(Q) @ [0, 0, a, 0, 0, b], X, atol=1e-13)  # pkm.lie, not the pack's own
        if kind == "R":
            assert (a, b) == (1.0, 0.0)
            assert np.linalg.norm(np.cross(Q[:3, 3] - y, e)) < 1e-12  # origin on the axis
        elif kind == "H":
            assert a == 1.0 and b == pytest.approx(h)
        else:
            assert a == 0.0 and b == pytest.approx(1.0)


def test_joint_frame_rejects_a_bad_screw():
    with pytest.raises(ValueError, match="|e| ≠ 1"):
        joint_frame(np.array([0, 0, 2.0, 0, 0, 0]), "R")
    with pytest.raises(ValueError, match="not \\(0; v\\)"):
        joint_frame(np.array([0, 0, 1.0, 0, 1, 0]), "P")


def test_inertia_parameters_round_trip_and_check():
    rng = np.random.default_rng(4)
    for _ in range(20):
        m, c = rng.uniform(0.1, 3.0), rng.normal(size=3)
        A = rng.normal(size=(3, 3))
        Ic = A @ A.T + 0.1 * np.eye(3)  # about the centre of mass
        cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        M = np.zeros((6, 6))
        M[:3, :3] = Ic - m * cx @ cx  # about the origin (parallel axes)
        M[:3, 3:] = m * cx
        M[3:, :3] = -m * cx
        M[3:, 3:] = m * np.eye(3)
        p = inertia10(M)
        assert p[0] == pytest.approx(m)
        np.testing.assert_allclose(p[1:4], m * c, rtol=1e-12)
        np.testing.assert_allclose(inertia6(p), M, atol=1e-13)
    M[0, 3] += 1.0  # no longer a rigid-body inertia
    with pytest.raises(ValueError, match="rigid-body inertia"):
        inertia10(M)


@pytest.mark.parametrize("name", FILES)
def test_packed_inertias_are_the_limb_trees(name):
    """Back in the body frames, the packed 10 parameters are the limb trees' mass matrices with the
    platform massless (paper Sec. 6.1, eq. 99)."""
    robot = pkm.load(ROBOTS / name)
    km = pack(robot)
    for l, tree in enumerate(dynamics_trees(robot)):
        np.testing.assert_allclose(reference_inertia(km, robot, l), tree.M, rtol=0, atol=1e-13)


def test_packed_constant_H_is_the_affine_closure():
    """The sparse rows packed for a constant H (the Delta's parallelogram: one ±1 per row) rebuild
    the H of pkm.algorithms.limb.LimbModel.affine_closure (evaluated as pack does, with the kernels
    run as Python: pkm.lie.interpret; tests/test_interpret.py compares that to the compiled kernels);
    a general-path pack has none."""
    from pkm.lie.interpret import python_kernels

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    km, general = pack(robot), pack(robot, affine=False)
    for l, limb in enumerate(robot.limbs):
        with python_kernels():
            H, _ = limb.affine_closure(LOOP_TOL)
        np.testing.assert_array_equal(km.H(l), H)
        assert km.mi[l, km.lay[LAY_HNZ]:km.lay[LAY_HNZ] + limb.n].sum() == np.count_nonzero(H)
        assert not general.H(l).any()


@pytest.mark.parametrize("name", FILES)
def test_joint_frame_kinematics_is_the_tree_kinematics(name):
    """The kernel's forward kinematics K_i = K_parent P_i Z(θ_i) gives C_i = K_i Q_i⁻¹ of
    pkm.algorithms.kinematics at random θ, and its platform frame K_p Q_p⁻¹ is C_p."""
    from pkm.kernels.ik import _fk
    from pkm.kernels.work import BW_K, BW_SIZE

    robot = pkm.load(ROBOTS / name)
    km = pack(robot)
    rng = np.random.default_rng(5)
    nmax = int(km.lay[LAY_NMAX])
    bw = np.zeros((nmax, BW_SIZE))
    for l, limb in enumerate(robot.limbs):
        for _ in range(3):
            th = np.zeros(nmax)
            th[:limb.n] = rng.uniform(-1, 1, limb.n)
            C = forward_kinematics(limb.tree, th[:limb.n])
            numba_only(_fk)(l, km.mi, km.mf, th, bw, True)
            for i in range(limb.n):
                Q, _, _ = joint_frame(limb.tree.X[i], limb.tree.axis_kind[i])
                K = np.eye(4)
                K[:3, :3] = bw[i, BW_K:BW_K + 9].reshape(3, 3)
                K[:3, 3] = bw[i, BW_K + 9:BW_K + 12]
                np.testing.assert_allclose(K, C[i] @ Q, atol=1e-13)
                b = km.body(l, i)
                assert (b[BF_A], b[BF_B]) == joint_frame(limb.tree.X[i], limb.tree.axis_kind[i])[1:]
            Qpi = km.mf[l, km.lay[LAY_QP] + 12:km.lay[LAY_QP] + 24]
            p = limb.platform
            Kp = np.eye(4)
            Kp[:3, :3] = bw[p, BW_K:BW_K + 9].reshape(3, 3)
            Kp[:3, 3] = bw[p, BW_K + 9:BW_K + 12]
            Cq = np.eye(4)
            Cq[:3, :3] = Qpi[:9].reshape(3, 3)
            Cq[:3, 3] = Qpi[9:]
            np.testing.assert_allclose(Kp @ Cq, C[p], atol=1e-13)
    assert BF_SIZE * nmax <= km.lay[LAY_QP]


def test_incremental_trig_is_exact():
    """The series used after a Newton step agrees with libm to the last bits, and the angle-addition
    update with direct evaluation to a few roundings."""
    from pkm.kernels.ik import SERIES_STEP, _sincos_step

    for d in np.linspace(-SERIES_STEP, SERIES_STEP, 2001):
        s, c = numba_only(_sincos_step)(d)
        assert abs(s - np.sin(d)) <= 2e-18 and abs(c - np.cos(d)) <= 2.3e-16
    rng = np.random.default_rng(6)
    for x, d in zip(rng.uniform(-4, 4, 200), rng.uniform(-SERIES_STEP, SERIES_STEP, 200)):
        s, c = numba_only(_sincos_step)(d)
        assert abs(np.cos(x) * c - np.sin(x) * s - np.cos(x + d)) < 1e-15
        assert abs(np.sin(x) * c + np.cos(x) * s - np.sin(x + d)) < 1e-15


def test_log_pose_is_log_se3():
    """The tuple logarithm equals pkm.lie.log_se3, also within 1e-9 of φ = 0 and of φ = π, and on
    both sides of the angle below which it uses series (_NEAR_IDENTITY)."""
    from pkm.lie.small import log_pose
    from pkm.lie import exp_se3, log_se3

    rng = np.random.default_rng(7)
    angles = np.r_[rng.uniform(0, np.pi, 30), 1e-12, 1e-9, 1e-6, 0.99e-4, 1.01e-4, 1e-3, np.pi - 1e-9,
                   np.pi - 1e-6, np.pi]
    for phi in angles:
        X = np.r_[phi * _unit(rng), rng.normal(size=3)]
        C = exp_se3(X)
        w, v = numba_only(log_pose)(tuple(C[:3, :3].ravel()), tuple(C[:3, 3]))
        ref = log_se3(C)
        np.testing.assert_allclose(np.r_[w, v], ref, atol=1e-12 * max(1.0, np.abs(ref).max()))
        if phi < 1e-3:  # tiny angles: relative accuracy of ω
            np.testing.assert_allclose(w, ref[:3], rtol=1e-12, atol=0)


def test_start_argument():
    """``start`` (the joints of an earlier result) gives the same result as the default cold start
    from the reference configuration; a mis-shaped start is refused."""
    from pkm.trajectory import from_spec

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    a = robot.inverse_dynamics(tr.x[:300], tr.xd[:300], tr.xdd[:300], t=tr.t[:300], threads=1)
    b = robot.inverse_dynamics(tr.x[300:600], tr.xd[300:600], tr.xdd[300:600], t=tr.t[300:600], threads=1,
                               start=[a.joints[l.name][-1] for l in robot.limbs])
    c = robot.inverse_dynamics(tr.x[300:600], tr.xd[300:600], tr.xdd[300:600], t=tr.t[300:600], threads=1)
    # both converge to the IK tolerance (1e-12), from different starts: the torque tolerance of
    # test_batch.py::test_kernel_equals_reference
    np.testing.assert_allclose(b.tau, c.tau, rtol=0, atol=1e-12 * np.abs(c.tau).max())
    np.testing.assert_allclose(b.q_act, c.q_act, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="start for limb"):
        robot.inverse_dynamics(tr.x[:3], tr.xd[:3], tr.xdd[:3], start=[np.zeros(2)] * 3)


def test_task_rows_are_the_rows_p_p_selects():
    from pkm.kernels.model import task_rows

    for name, rows in (("delta_3rr2rrr", (3, 4, 5)), ("irsbot2", (3, 5))):
        robot = pkm.load(ROBOTS / f"{name}.toml")
        assert task_rows(robot.P_p) == rows
        assert robot._packed().dp_static == rows
    assert task_rows(np.eye(6)[:, [2, 0, 4]]) == (2, 0, 4)
    for bad in (np.eye(6)[:, [1, 1]], 2.0 * np.eye(6)[:, [3]], np.eye(6)[:, [3]] + np.eye(6)[:, [4]], np.eye(5),
                np.zeros((6, 1))):
        with pytest.raises(ValueError, match="P_p must select"):
            task_rows(bad)
