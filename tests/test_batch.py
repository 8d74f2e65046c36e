"""The batched numba kernel (Robot.inverse_dynamics) equals the reference path (pkm.algorithms.manipulator)."""

from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.algorithms import manipulator as man
from pkm.trajectory import from_spec, pick_place

from conftest import ROBOTS
from pkm.kernels.model import LAY_NMAX, LI_AFF

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml"}


@pytest.fixture(scope="module", params=sorted(FILES))
def robot(request):
    return pkm.load(ROBOTS / FILES[request.param])


def _samples(robot, count=40, step=7):
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    return tr.x[:count * step:step], tr.xd[:count * step:step], tr.xdd[:count * step:step]


def test_irregular_sample_times(robot):
    """Samples at irregular times (gaps of 1 to 25 steps, ratios beyond MAX_STEP_RATIO) give the
    reference torques: the start is extrapolated from two samples only where the steps are alike."""
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    gaps = np.random.default_rng(3).integers(1, 26, 60)
    idx = np.cumsum(gaps)
    idx = idx[idx < len(tr.t)]
    X, XD, XDD = tr.x[idx], tr.xd[idx], tr.xdd[idx]
    fast = robot.inverse_dynamics(X, XD, XDD, t=tr.t[idx])
    # the reference path stops at the first pose residual ≤ tol; from starts this far apart that
    # can be near 1e-12 itself (torques off by ~1e-12 relative), so it is solved to 1e-14 here
    ref = man.inverse_dynamics(robot, X, XD, XDD, tol=1e-14)
    np.testing.assert_allclose(fast.tau, ref.tau, rtol=0, atol=1e-12 * np.abs(ref.tau).max())
    np.testing.assert_allclose(fast.q_act, ref.q_act, atol=1e-12)


@pytest.mark.parametrize("with_times", [False, True], ids=["no-times", "taylor-start"])
def test_kernel_equals_reference(robot, with_times):
    X, XD, XDD = _samples(robot)
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    fast = robot.inverse_dynamics(X, XD, XDD, t=tr.t[:40 * 7:7] if with_times else None)
    ref = man.inverse_dynamics(robot, X, XD, XDD)
    scale = np.abs(ref.tau).max()
    np.testing.assert_allclose(fast.tau, ref.tau, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(fast.q_act, ref.q_act, atol=1e-12)
    np.testing.assert_allclose(fast.J_IK, ref.J_IK, atol=1e-10 * np.abs(ref.J_IK).max())
    np.testing.assert_allclose(fast.limb_wrenches, ref.limb_wrenches, atol=1e-12 * scale)
    for limb in robot.limbs:
        np.testing.assert_allclose(fast.joints[limb.name], ref.joints[limb.name], atol=1e-12)
        np.testing.assert_allclose(fast.joints_d[limb.name], ref.joints_d[limb.name], atol=1e-11)
        np.testing.assert_allclose(fast.joints_dd[limb.name], ref.joints_dd[limb.name], atol=1e-10)


def test_kernel_with_end_effector_wrench(robot):
    X, XD, XDD = _samples(robot, 10)
    rng = np.random.default_rng(5)
    W = rng.normal(size=(len(X), 6))
    fast = robot.inverse_dynamics(X, XD, XDD, wrench=W)
    ref = man.inverse_dynamics(robot, X, XD, XDD, wrench=W)
    np.testing.assert_allclose(fast.tau, ref.tau, atol=1e-12 * np.abs(ref.tau).max())
    # the wrench changes the torques by −J_IK⁻ᵀ P_pᵀ W
    base = robot.inverse_dynamics(X, XD, XDD)
    for s in range(len(X)):
        delta = np.linalg.solve(fast.J_IK[s].T, -robot.P_p.T @ W[s])
        np.testing.assert_allclose(fast.tau[s] - base.tau[s], delta, atol=1e-10)


def test_pick_and_place_torques_are_finite():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    tr = pick_place(start=[0.0, 0.0, -1.0], lift=0.025, travel=0.305, cycle_time=0.5, dt=0.002)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    assert res.tau.shape == (len(tr.t), 3) and np.all(np.isfinite(res.tau))
    # the cycle returns to its start at rest: the same static torques
    np.testing.assert_allclose(res.tau[0], res.tau[-1], atol=1e-9)


def test_unreachable_sample_is_named():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X = np.array([[0.0, 0.0, -1.0], [0.05, 0.0, -1.0], [3.0, 0.0, -1.0]])
    Z = np.zeros_like(X)
    with pytest.raises(pkm.IKError, match="sample 2"):
        robot.inverse_dynamics(X, Z, Z)


def test_singularity_threshold_is_applied():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X = np.array([[0.0, 0.0, -1.0]])
    Z = np.zeros_like(X)
    with pytest.raises(pkm.SingularityError) as info:
        robot.inverse_dynamics(X, Z, Z, singularity_threshold=1.5)
    assert info.value.condition > 1.5


def test_bad_input():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    with pytest.raises(ValueError, match="NaN or inf"):
        robot.inverse_dynamics([0, 0, np.nan], [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="same shape"):
        robot.inverse_dynamics(np.zeros((3, 3)), np.zeros((2, 3)), np.zeros((3, 3)))


def test_parallel_chunks_agree_with_one_chunk():
    """Chunks computed in parallel, each warm-started by its own IK solve, give the same torques."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    one = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, threads=1)
    two = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, threads=2)
    np.testing.assert_allclose(two.tau, one.tau, rtol=0, atol=1e-10 * np.abs(one.tau).max())
    np.testing.assert_allclose(two.q_act, one.q_act, atol=1e-11)


ALLOCATION_PROBE = """
import numpy as np, pkm
from numba.core.runtime import rtsys
from pkm.kernels.batch import platform_states
from pkm.kernels.inverse_dynamics import Results, Samples, make_work, run_range
from pkm.trajectory import from_spec
robot = pkm.load(ROOT + "/robots/delta_3rr2rrr.toml")
tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
km = robot._packed()
L, nmax = km.mi.shape[0], 6
Cs = robot.continuation_poses(tr.x[0], 3)[:-1]  # two intermediate poses

def run(N):
    X, XD, XDD = tr.x[:N], tr.xd[:N], tr.xdd[:N]
    smp = Samples(*platform_states(robot, X, XD, XDD), np.zeros((N, 6)), np.full(N, 0.01), robot.spec.gravity.copy())
    out = Results(*[np.zeros((N, L, nmax)) for _ in range(3)], np.empty((N, 3)), np.empty((N, 3, 3)),
                  np.empty((N, L, 3)), np.empty((N, 3)))
    work, status = make_work(km, 1), np.zeros(4)
    before = rtsys.get_allocation_stats().alloc
    run_range(0, N, *km, *smp, *out, *(w[0] for w in work), True, Cs, None, 1e-12, 50, 1e8, status)
    assert status[0] == 0
    return rtsys.get_allocation_stats().alloc - before

run(10)
print(run(10), run(400))
"""


def test_per_sample_path_allocates_nothing():
    """numba's allocation counter grows by the same amount for 10 and for 400 samples."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", f"ROOT = {str(ROOT)!r}\n" + ALLOCATION_PROBE], capture_output=True,
                         text=True, env=env, check=True).stdout.split()
    few, many = int(out[-2]), int(out[-1])
    assert few == many, f"{few} allocations for 10 samples, {many} for 400"


# ----------------------------------------------------------------------------- constant-H (affine) limbs
def test_affine_closure_is_detected_only_for_linear_loops():
    """The Delta's parallelogram closes linearly (θ3 = θ5 = −θ4, paper Sec. 3.3, Ex. 7–9); the IRSBot-2's 4U loop
    and the 3R[2US] rod loop do not; a serial limb is trivially affine with H selecting q."""
    delta = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    for limb in delta.limbs:
        H, c = limb.affine_closure()
        col = int(np.flatnonzero(H[3])[0])  # θ4 is the parallelogram's independent variable
        np.testing.assert_array_equal(np.round(H[2:5, col], 12), [-1.0, 1.0, -1.0])
        rng = np.random.default_rng(1)
        for _ in range(3):  # the affine prediction closes the loops at random q
            q = rng.uniform(-0.5, 0.5, limb.dof)
            assert np.abs(limb.constraint_residual(H @ q + c)).max() < 1e-14
    for name in ("irsbot2.toml", "delta_3r2us.toml"):
        assert all(limb.affine_closure() is None for limb in pkm.load(ROBOTS / name).limbs)
    serial = pkm.load(ROBOTS / "serial_6r.toml").limbs[0]
    H, c = serial.affine_closure()
    np.testing.assert_array_equal(H[serial.q_index], np.eye(serial.dof))
    np.testing.assert_array_equal(c, 0.0)


def _run_packed(robot, km, X, XD, XDD, t, general):
    """The serial kernel on a given packed model (cold start); returns the Results and the status."""
    from pkm.kernels.batch import platform_states
    from pkm.kernels.inverse_dynamics import Results, Samples, make_work, run_range

    N = len(X)
    L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
    dts = np.zeros(N)
    dts[1:] = np.diff(t)
    smp = Samples(*platform_states(robot, X, XD, XDD), np.zeros((N, 6)), dts, robot.spec.gravity.copy())
    dp, na = robot.task_dof, robot.n_act
    out = Results(*[np.zeros((N, L, nmax)) for _ in range(3)], np.empty((N, na)), np.empty((N, na, dp)),
                  np.empty((N, L, dp)), np.empty((N, dp)))
    Cs = robot.continuation_poses(X[0], 2)[:-1]  # one intermediate pose
    status = np.zeros(4)
    run_range(0, N, *km, *smp, *out, *(w[0] for w in make_work(km, 1)), True, Cs, general, 1e-12, 50, 1e8, status)
    return out, status


def test_affine_path_equals_general_path():
    """The constant-H kernel path gives the general path's joints, rates and torques to 1e-12."""
    from pkm.kernels.batch import pack

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    fast, general = pack(robot), pack(robot, affine=False)
    assert fast.mi[:, LI_AFF].all() and not general.mi[:, LI_AFF].any()
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    a, sa = _run_packed(robot, fast, tr.x, tr.xd, tr.xdd, tr.t, None)  # affine path only
    b, sb = _run_packed(robot, general, tr.x, tr.xd, tr.xdd, tr.t, general.lay)
    assert sa[0] == 0 and sb[0] == 0
    scale = np.abs(b.tau).max()
    np.testing.assert_allclose(a.tau, b.tau, rtol=0, atol=1e-12 * scale)
    for k, tol in (("theta", 1e-12), ("thetad", 1e-11), ("thetadd", 1e-10)):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=0, atol=tol)
    # both paths compiled into one kernel (general given) pick the affine one per limb: same result
    c, sc = _run_packed(robot, fast, tr.x, tr.xd, tr.xdd, tr.t, fast.lay)
    assert sc[0] == 0
    np.testing.assert_allclose(c.tau, a.tau, rtol=0, atol=1e-13 * scale)


def test_limb_dof_at_run_time():
    """Limbs with different δ_l have no compile-time δ (KernelModel.d_static ``()``): the kernel
    then reads each limb's from the model, with the same results."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    km = robot._packed()
    assert km.d_static == (0,) * 4
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    a, sa = _run_packed(robot, km, tr.x[:200], tr.xd[:200], tr.xdd[:200], tr.t[:200], None)
    b, sb = _run_packed(robot, km._replace(d_static=()), tr.x[:200], tr.xd[:200], tr.xdd[:200], tr.t[:200], None)
    assert sa[0] == 0 and sb[0] == 0
    np.testing.assert_allclose(b.tau, a.tau, rtol=0, atol=1e-13 * np.abs(a.tau).max())
    np.testing.assert_allclose(b.theta, a.theta, rtol=0, atol=1e-14)


def test_affine_path_checks_the_loops():
    """A wrong constant H (the Delta's parallelogram row θ5 = −1.001 θ4; θ5 is on the parallelogram's
    side branch, so the platform pose is still reached) makes the kernel report that the loops
    cannot be closed instead of returning torques of an open parallelogram."""
    from pkm.kernels.batch import LOOP_FAILED, pack

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    km = pack(robot)
    wrong = km._replace(mf=km.mf.copy())
    for l in range(len(robot.limbs)):
        wrong.H_values(l)[4] *= 1.001  # a view into wrong.mf: row 4's nonzero
    assert not np.array_equal(wrong.mf, km.mf)
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    status = _run_packed(robot, wrong, tr.x[:50], tr.xd[:50], tr.xdd[:50], tr.t[:50], None)[1]
    assert status[0] == LOOP_FAILED and status[3] > 1e-10
    assert _run_packed(robot, km, tr.x[:50], tr.xd[:50], tr.xdd[:50], tr.t[:50], None)[1][0] == 0


def test_cold_start_continues_along_the_task_line():
    """A first sample that Gauss–Newton cannot reach from the reference configuration within
    max_iter steps is reached through the intermediate poses (continuation, as
    Robot.inverse_kinematics does), on the branch the direct solve finds with more iterations."""
    from pkm.kernels.batch import IK_FAILED, OK, platform_states
    from pkm.kernels.inverse_dynamics import Results, Samples, make_work, run_range

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    km = robot._packed()
    X = np.array([[0.3, 0.3, -0.8]])
    Z = np.zeros_like(X)

    def kernel_status(steps, max_iter):
        Cs = robot.continuation_poses(X[0], steps + 1)[:-1]  # `steps` intermediate poses
        smp = Samples(*platform_states(robot, X, Z, Z), np.zeros((1, 6)), np.zeros(1), robot.spec.gravity.copy())
        out = Results(*[np.zeros((1, 3, 6)) for _ in range(3)], np.empty((1, 3)), np.empty((1, 3, 3)),
                      np.empty((1, 3, 3)), np.empty((1, 3)))
        status = np.zeros(4)
        run_range(0, 1, *km, *smp, *out, *(w[0] for w in make_work(km, 1)), True, Cs, None, 1e-12, max_iter, 1e8,
                  status)
        return int(status[0])

    assert kernel_status(0, 4) == IK_FAILED  # directly: not within 4 steps
    assert kernel_status(9, 4) == OK         # along the line: 4 steps per leg suffice
    few = robot.inverse_dynamics(X, Z, Z, max_iter=4)
    direct = robot.inverse_dynamics(X, Z, Z)
    np.testing.assert_allclose(few.q_act, direct.q_act, rtol=0, atol=1e-12)
    np.testing.assert_allclose(few.tau, direct.tau, rtol=0, atol=1e-12 * np.abs(direct.tau).max())


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "irsbot2", "delta_3r2us", "irsbot2 rotated"])
def test_platform_states_equal_the_per_sample_poses_and_twists(name):
    """The vectorised target states (translational task spaces) are the robot's own
    ``platform_pose``/``platform_twist`` sample by sample, as contiguous float arrays; also for a
    platform frame that is not aligned with the world (every robot file's is)."""
    from pkm.kernels.batch import platform_states
    from pkm.lie import exp_so3

    robot = pkm.load(ROBOTS / f"{name.split()[0]}.toml")
    assert not robot._rot
    if name.endswith("rotated"):
        robot.R0 = exp_so3(np.array([0.3, -0.5, 0.7]))
        robot.r0 = np.array([0.1, -0.2, -0.7])
    rng = np.random.default_rng(7)
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    X = tr.x[:5] + 0.01 * rng.standard_normal((5, robot.task_dof))
    XD, XDD = rng.standard_normal((5, robot.task_dof)), rng.standard_normal((5, robot.task_dof))
    Cd, Vp, dVp = platform_states(robot, X, XD, XDD)
    for a in (Cd, Vp, dVp):
        assert a.dtype == np.float64 and a.flags.c_contiguous
    for s in range(5):
        np.testing.assert_allclose(Cd[s], robot.platform_pose(X[s]), rtol=0, atol=1e-15)
        V, dV = robot.platform_twist(X[s], XD[s], XDD[s])
        np.testing.assert_allclose(Vp[s], V, rtol=0, atol=1e-15)
        np.testing.assert_allclose(dVp[s], dV, rtol=0, atol=1e-15)


def test_blocks_are_contiguous_views_of_one_allocation():
    from pkm.kernels.batch import blocks

    a, b, c = blocks((5, 4, 4), (3,), (5, 2, 6))
    assert a.shape == (5, 4, 4) and b.shape == (3,) and c.shape == (5, 2, 6)
    for x in (a, b, c):
        assert x.dtype == np.float64 and x.flags.c_contiguous and x.base is a.base
    a.fill(1.0), b.fill(2.0), c.fill(3.0)  # no overlap
    assert (a == 1.0).all() and (b == 2.0).all() and (c == 3.0).all()
    assert (c.__array_interface__["data"][0] - a.__array_interface__["data"][0]) % 64 == 0


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "irsbot2", "delta_3r2us"])
def test_kernel_writes_every_output(name, monkeypatch):
    """The per-call arrays are uninitialised (:func:`pkm.kernels.batch.blocks`): with them filled with NaN
    beforehand, every output of a call is still finite, so the kernel (and the padding of the
    per-limb arrays) writes every entry, for one and two chunks, with and without sample times."""
    import pkm.kernels.batch as PB

    real = PB.blocks

    def nan_blocks(*shapes, **kw):
        arrays = real(*shapes, **kw)
        for a in arrays:
            a.fill(np.nan)
        return arrays

    monkeypatch.setattr(PB, "blocks", nan_blocks)
    robot = pkm.load(ROBOTS / f"{name}.toml")
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    monkeypatch.setattr(PB, "SEGMENT_MAX", PB.SEGMENT)  # two segments (two chunks) whatever the host
    n = min(len(tr), 2 * PB.SEGMENT)
    for threads, t in ((1, tr.t[:n]), (2, None)):
        r = robot.inverse_dynamics(tr.x[:n], tr.xd[:n], tr.xdd[:n], t=t, threads=threads)
        arrays = [v for v in vars(r).values() if isinstance(v, np.ndarray)]
        arrays += [v for d in (r.joints, r.joints_d, r.joints_dd) for v in d.values()]
        assert len(arrays) > 10 and all(np.isfinite(a).all() for a in arrays)
    raw = PB.inverse_dynamics_batch(robot, tr.x[:n], tr.xd[:n], tr.xdd[:n])
    assert all(np.isfinite(a).all() for a in raw)  # the padding beyond each limb's n_l too


def test_platform_states_rejects_an_out_it_cannot_fill_in_place():
    from pkm.kernels.batch import platform_states

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X = np.zeros((4, 3))
    strided = np.zeros((4, 4, 8))[:, :, ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        platform_states(robot, X, X, X, out=(strided, np.zeros((4, 6)), np.zeros((4, 6))))
