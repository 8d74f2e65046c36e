"""Task spaces that rotate about several axes (issue 17): the 3-RRR spherical wrist
(robots/wrist_3rrr.toml), the rotation-vector coordinates and their conversions, the platform
twist's derivative against finite differences (incl. rotations near π), orientation trajectories,
mirrored mounts in the file format and the clear error of a task space that is not twist-closed.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.absolute.loader import load_spec as load_absolute
from pkm.algorithms.dynamics import kinetic_energy, potential_energy
from pkm.algorithms.kinematics import forward_kinematics
from pkm.algorithms.manipulator import dynamics_trees, inverse_dynamics as reference_inverse_dynamics, platform_inertia
from pkm.description.robotfile import parse_spec
from pkm.description.taskspace import twist_closed
from pkm.errors import PkmError, RobotFileError
from pkm.lie import exp_so3
from pkm.trajectory import from_spec

ROOT = Path(__file__).resolve().parents[1]
WRIST = ROOT / "robots" / "wrist_3rrr.toml"
HEXAPOD = ROOT / "robots" / "hexapod_6ups.toml"


@pytest.fixture(scope="module")
def wrist():
    return pkm.load(WRIST)


@pytest.fixture(scope="module")
def wrist_motion(wrist):
    tr = from_spec(wrist.spec.trajectory, wrist.task.coordinate_names())
    return tr, wrist.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)


# ----------------------------------------------------------------------------- platform twist
def _vee(S):
    return np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]]) / 2


FD8 = ((1, 4 / 5), (2, -1 / 5), (3, 4 / 105), (4, -1 / 280))


def _fd(f, h):
    return sum(c * (f(k * h) - f(-k * h)) for k, c in FD8) / h


@pytest.mark.parametrize("angle", [0.0, 0.4, 2.0, np.pi - 1e-6, np.pi - 1e-3, np.pi + 1e-3, 3.0])
def test_platform_twist_derivative_fd(angle):
    """V_p and V̇_p of the hexapod (SE(3) task) against finite differences of the pose C_p(t) alone
    along x(t) = x + tẋ + t²ẍ/2, random directions, rotations up to and past π (≤ 1e-7)."""
    robot = pkm.load(HEXAPOD)
    rng = np.random.default_rng(int(angle * 1000))
    for _ in range(5):
        axis = rng.normal(size=3)
        x = np.concatenate([angle * axis / np.linalg.norm(axis), [0.1, -0.2, 2.0]])
        xd, xdd = rng.normal(size=6), rng.normal(size=6)

        def twist(t):  # body twist from finite differences of the pose
            C = robot.platform_pose(x + t * xd + 0.5 * t * t * xdd)
            dC = _fd(lambda s: robot.platform_pose(x + (t + s) * xd + 0.5 * (t + s) ** 2 * xdd), 1e-3)
            B = np.linalg.inv(C) @ dC
            return np.concatenate([_vee(B[:3, :3]), B[:3, 3]])

        V, dV = robot.platform_twist(x, xd, xdd)
        scale = max(1.0, np.abs(V).max())
        assert np.abs(V - twist(0.0)).max() <= 1e-7 * scale
        assert np.abs(dV - _fd(twist, 1e-2)).max() <= 1e-7 * max(1.0, np.abs(dV).max())
        # the conversions invert it
        Vt = robot.task_velocity(x, xd)
        np.testing.assert_allclose(robot.coordinate_rates(x, Vt), xd, rtol=0, atol=1e-9 * np.abs(xd).max())
        np.testing.assert_allclose(robot.coordinate_accelerations(x, xd, robot.P_p.T @ dV), xdd, rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(xdd).max()))


def test_rotation_vector_about_the_reference_orientation(wrist):
    x = np.array([0.2, -0.1, 0.3])
    C = wrist.platform_pose(x)
    np.testing.assert_allclose(C[:3, :3], wrist.R0 @ exp_so3(x), atol=1e-15)
    np.testing.assert_allclose(C[:3, 3], wrist.r0, atol=1e-15)


# ----------------------------------------------------------------------------- the spherical wrist
def test_wrist_kernel_equals_reference_path(wrist, wrist_motion):
    tr, res = wrist_motion
    s = slice(None, None, 7)
    ref = reference_inverse_dynamics(wrist, tr.x[s], tr.xd[s], tr.xdd[s])
    np.testing.assert_allclose(res.tau[s], ref.tau, rtol=0, atol=1e-12 * np.abs(ref.tau).max())
    np.testing.assert_allclose(res.qdd_act[s], ref.qdd_act, rtol=0, atol=1e-12 * np.abs(ref.qdd_act).max())


def test_wrist_absolute_coordinates(wrist, wrist_motion):
    """Second method: the absolute-coordinate formulation with rheonomic drives (drive multipliers
    give the torques) equals pkm's minimal-coordinate inverse dynamics."""
    _, res = wrist_motion
    model = load_absolute(wrist.spec)
    assert model.dof == 3
    peak, err = np.abs(res.tau).max(), 0.0
    for s in range(0, len(res.tau), 9):
        poses = {}
        for limb in wrist.limbs:
            C = forward_kinematics(limb.tree, res.joints[limb.name][s])
            poses.update({n: C[k] for k, n in enumerate(limb.tree.body_names) if not limb.tree.virtual[k]})
        tau, *_ = model.solve_instant(res.q_act[s], res.qd_act[s], res.qdd_act[s], model.coordinates(poses))
        err = max(err, float(np.abs(tau - res.tau[s]).max()))
    assert err <= 1e-9 * peak, (err, peak)


def test_wrist_power_balance(wrist, wrist_motion):
    """τ·θ̇_act = d/dt (T + V), energies from pkm's trees and platform, 8th-order stencil (≤ 1e-8)."""
    tr, res = wrist_motion
    trees, Mp = dynamics_trees(wrist), platform_inertia(wrist)
    plat = wrist.spec.body(wrist.spec.platform)
    local = plat.frame[:3, :3].T @ (plat.com - plat.frame[:3, 3])
    w = 2 * np.pi / tr.t[-1]
    c = np.radians([5, -3, 4])
    a = np.radians([20, -15, 25])

    def energy(t, start):
        x, xd = c + a * np.sin(w * t), a * w * np.cos(w * t)
        sol = wrist.inverse_kinematics(x, xd, start=start)
        E = sum(kinetic_energy(tr_, sol.joints[l.name][0], sol.joints_d[l.name][0])
                + potential_energy(tr_, sol.joints[l.name][0], wrist.spec.gravity) for tr_, l in zip(trees, wrist.limbs))
        Cp = wrist.platform_pose(x)
        Vp, _ = wrist.platform_twist(x, xd)
        return E + 0.5 * Vp @ Mp @ Vp - plat.mass * wrist.spec.gravity @ (Cp[:3, :3] @ local + Cp[:3, 3])

    worst = scale = 0.0
    for s in (3, 22, 48, 77, 96):
        start = [res.joints[l.name][s] for l in wrist.limbs]
        dE = _fd(lambda h: energy(tr.t[s] + h, start), 1e-3)
        worst = max(worst, abs(res.tau[s] @ res.qd_act[s] - dE))
        scale = max(scale, np.abs(res.tau[s] * res.qd_act[s]).max())
    assert worst <= 1e-8 * scale, (worst, scale)


def test_wrist_forward_dynamics_inverts_inverse_dynamics(wrist, wrist_motion):
    """forward_dynamics at the trajectory's states under the inverse dynamics' torques returns the
    trajectory's coordinate accelerations ẍ (V̇_t converted through the derivative of dexp)."""
    tr, res = wrist_motion
    s = [5, 40, 81]
    fd = wrist.forward_dynamics(tr.x[s], tr.xd[s], res.tau[s])
    np.testing.assert_allclose(fd.xdd, tr.xdd[s], rtol=0, atol=1e-9 * np.abs(tr.xdd).max())


def test_wrist_simulation_follows_computed_torques(wrist, wrist_motion):
    """Simulating the inverse dynamics' torques (a table) reproduces the orientation sine."""
    tr, res = wrist_motion
    n = 21
    from pkm.sim.inputs import Table

    table = Table(tr.t[:n], res.tau[:n])
    out = wrist.simulate(table, (0.0, tr.t[n - 1]), x0=tr.x[0], xd0=tr.xd[0], rtol=1e-11, atol=1e-13,
                         t_eval=tr.t[:n])
    assert np.abs(out.x - tr.x[:n]).max() <= 1e-4 * np.abs(tr.x).max()
    assert np.abs(out.energy_error).max() <= 1e-6 * max(1e-3, np.abs(out.kinetic).max())


# ----------------------------------------------------------------------------- task spaces
@pytest.mark.parametrize("components, closed", [
    (("vx", "vy", "vz"), True), (("wz", "vx", "vy"), True), (("wz", "vx", "vy", "vz"), True),
    (("wx", "wy", "wz"), True), (("wx", "wy", "wz", "vx", "vy", "vz"), True), (("wz", "vz"), True),
    (("wx", "wy", "vz"), False), (("wx", "wy"), False), (("wz", "vx"), False), (("wx", "wy", "wz", "vz"), False)])
def test_twist_closed(components, closed):
    assert twist_closed(components) == closed


def test_kernels_need_a_twist_closed_task_space():
    """The batched kernels select twist rows (V_p = P_p V_t): called on a tilt–heave task space they
    raise PkmError (Robot.inverse_dynamics takes the reference path there instead)."""
    from pkm.kernels.batch import inverse_dynamics_batch

    robot = pkm.load(ROOT / "tests" / "robots_ok" / "tilt_heave_3ups.toml")
    x = np.array([[0.1, 0.05, 2.0]])
    with pytest.raises(PkmError, match="not closed"):
        inverse_dynamics_batch(robot, x, x * 0, x * 0)


# ----------------------------------------------------------------------------- file format
def _mirror_spec(mirror):
    return {"name": "m", "platform": {"name": "p", "mass": 1.0, "com": [0, 0, 0], "inertia": [1, 1, 1, 0, 0, 0]},
            "task": {"type": "translational"},
            "limb": {"bodies": [{"name": "a", "mass": 2.0, "com": [1, 0.5, 0], "inertia": [2, 2.5, 3, 0.1, 0.2, 0.3],
                                 "frame": {"axis": [0, 0, 1], "angle_deg": 30, "origin": [1, 0.5, 0]}}],
                     "joints": [{"name": "r", "type": "R", "parent": "ground", "child": "a", "point": [1, 0.5, 0],
                                 "axis": [0, 1, 1]},
                                {"name": "p", "type": "P", "parent": "a", "child": "p", "axis": [1, 2, 3]},
                                {"name": "h", "type": "H", "parent": "ground", "child": "p", "point": [0, 1, 0],
                                 "axis": [1, 0, 0], "pitch": 0.01}],
                     "mounts": [{"name": "m", "frame": {"axis": [0, 0, 1], "angle_deg": 90}, "mirror": mirror}]}}


def test_mirrored_mount_is_the_mirror_image():
    """Points and centres of mass reflected, the inertia tensor reflected (M I Mᵀ in world axes),
    body frames proper, rotation axes as axial vectors, prismatic axes as vectors, pitch negated."""
    spec = parse_spec(_mirror_spec("y"))
    plain = parse_spec({**_mirror_spec("y"), "limb": {**_mirror_spec("y")["limb"],
                                                       "mounts": [{"name": "m", "frame": {"axis": [0, 0, 1],
                                                                                          "angle_deg": 90}}]}})
    Rz = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    M = Rz @ np.diag([1.0, -1, 1])
    joints = spec.expanded()[1]
    b = [x for x in spec.expanded()[0] if x.name == "m/a"][0]
    b0 = [x for x in plain.expanded()[0] if x.name == "m/a"][0]
    np.testing.assert_allclose(b.com, M @ np.array([1, 0.5, 0]), atol=1e-15)
    assert np.linalg.det(b.frame[:3, :3]) > 0
    Iw = lambda body: body.frame[:3, :3] @ body.inertia @ body.frame[:3, :3].T  # noqa: E731
    Rb0 = Rz.T @ b0.frame[:3, :3]  # the limb's own body frame in F_0'
    np.testing.assert_allclose(Iw(b), M @ (Rb0 @ b0.inertia @ Rb0.T) @ M.T, atol=1e-14)
    j = {x.name: x for x in joints}
    np.testing.assert_allclose(j["m/r"].axes[0], -M @ (np.array([0, 1, 1]) / np.sqrt(2)), atol=1e-15)
    np.testing.assert_allclose(j["m/p"].axes[0], M @ (np.array([1, 2, 3]) / np.sqrt(14)), atol=1e-15)
    assert j["m/h"].pitch == -0.01
    np.testing.assert_allclose(j["m/h"].point, M @ np.array([0, 1, 0]), atol=1e-15)


@pytest.mark.parametrize("value", ["w", "xy", 1])
def test_bad_mirror(value):
    with pytest.raises(RobotFileError, match="mirror"):
        parse_spec(_mirror_spec(value))


# ----------------------------------------------------------------------------- trajectories
def test_orientation_trajectories_from_spec(wrist):
    """sine and line (rest-to-rest) of the rotation vector from a robot file's keys (degrees)."""
    traj = dict(wrist.spec.trajectory)
    tr = from_spec(traj, ("rx", "ry", "rz"))
    np.testing.assert_allclose(tr.x[0], np.radians([5, -3, 4]), atol=1e-15)
    np.testing.assert_allclose(tr.xd[0], np.radians([20, -15, 25]) * 2 * np.pi, atol=1e-12)
    line = {"type": "line", "start": np.zeros(3), "end": np.zeros(3), "duration": 1.0, "dt": 0.1,
            "start_rotation": np.array([0.1, 0.0, 0.0]), "end_rotation": np.array([0.3, -0.2, 0.5])}
    tl = from_spec(line, ("rx", "ry", "rz"))
    np.testing.assert_allclose(tl.x[[0, -1]], [[0.1, 0, 0], [0.3, -0.2, 0.5]], atol=1e-15)
    assert np.abs(tl.xd[[0, -1]]).max() == 0.0 and np.abs(tl.xdd[[0, -1]]).max() == 0.0
    # a rotation the task does not control is an error; a translational task keeps its rotations at 0
    with pytest.raises(ValueError, match="rx"):
        from_spec(line, ("ry", "rz"))
    hexa = pkm.load(HEXAPOD)
    th = from_spec(hexa.spec.trajectory, hexa.task.coordinate_names())
    assert th.names == ("rx", "ry", "rz", "x", "y", "z") and np.all(np.ptp(th.x, axis=0) > 0)


@pytest.mark.parametrize("path", [WRIST, HEXAPOD])
def test_eom_reproduces_inverse_dynamics(path):
    """M_t V̇_t + C_t V_t + W_t^grav = J_IKᵀ u (eq. 107) in the task velocity V_t = P_pᵀ V_p, with u
    from the inverse dynamics at (x, ẋ, ẍ) and V̇_t from the derivative of dexp."""
    robot = pkm.load(path)
    rng = np.random.default_rng(3)
    x = robot.x_ref + rng.uniform(-0.1, 0.1, robot.task_dof)
    xd, xdd = rng.normal(size=robot.task_dof), rng.normal(size=robot.task_dof)
    u = robot.inverse_dynamics(x, xd, xdd).tau[0]
    V, dV = robot.platform_twist(x, xd, xdd)
    Vt, dVt = robot.P_p.T @ V, robot.P_p.T @ dV
    e = robot.eom(x, Vt)
    lhs = e.M_t @ dVt + e.C_t_V_t + e.W_t_grav
    np.testing.assert_allclose(lhs, e.J_IK.T @ u, rtol=0, atol=1e-9 * np.abs(e.J_IK.T @ u).max())


# ----------------------------------------------------------------------------- tilt–heave (not twist-closed)
TILT = ROOT / "tests" / "robots_ok" / "tilt_heave_3ups.toml"


def _tilt_motion(t):
    """(rx, ry, z) = c + a sin(2πt + φ) and its derivatives."""
    c, a, ph = np.array([0.04, -0.03, 2.03]), np.array([0.08, 0.06, -0.1]), np.array([0.0, 1.3, 0.6])
    w = 2 * np.pi
    return c + a * np.sin(w * t + ph), a * w * np.cos(w * t + ph), -a * w * w * np.sin(w * t + ph)


def test_tilt_heave_velocity_distribution():
    """V_p = P(x) V_t with V_t the selected twist components; the tilted platform's ω_z and v_x, v_y
    are not zero; P(x) is P_p at the reference orientation; P(x) against finite differences of H_p A⁻¹
    is not needed: V_p itself is checked against the pose's finite differences."""
    robot = pkm.load(TILT)
    assert not robot._closed
    x, xd, xdd = _tilt_motion(0.2)
    V, dV = robot.platform_twist(x, xd, xdd)
    Vt = robot.task_velocity(x, xd)
    np.testing.assert_allclose(robot.velocity_distribution(x) @ Vt, V, rtol=0, atol=1e-14)
    assert min(abs(V[2]), abs(V[3]), abs(V[4])) > 1e-4
    np.testing.assert_allclose(robot.velocity_distribution(robot.x_ref), robot.P_p, atol=1e-15)
    C = lambda t: robot.platform_pose(x + t * xd + 0.5 * t * t * xdd)  # noqa: E731
    B = np.linalg.inv(C(0.0)) @ _fd(C, 1e-3)
    np.testing.assert_allclose(V, np.concatenate([_vee(B[:3, :3]), B[:3, 3]]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(robot.coordinate_accelerations(x, xd, robot.P_p.T @ dV), xdd, rtol=0, atol=1e-12)


def test_tilt_heave_inverse_dynamics_against_reference():
    """Actuator forces of the three legs along a tilt–heave motion against the hexapod test's
    independent virtual-work reference restricted to (rx, ry, z) (≤ 1e-9 relative), and the EOM and
    forward dynamics (reference path, V_p = P(x) V_t) consistent with them."""
    import mpmath as mp
    from test_hexapod import reference_forces

    robot = pkm.load(TILT)
    times = [0.0, 0.21, 0.64]
    X, XD, XDD = (np.array(v) for v in zip(*(_tilt_motion(t) for t in times)))
    res = robot.inverse_dynamics(X, XD, XDD)
    c, a, ph = [0.04, -0.03, 2.03], [0.08, 0.06, -0.1], [0.0, 1.3, 0.6]

    def coords(t):
        return [mp.mpf(c[k]) + mp.mpf(a[k]) * mp.sin(2 * mp.pi * t + mp.mpf(ph[k])) for k in range(3)]

    ref = np.array([reference_forces(t, coords, lambda q: [q[0], q[1], 0, 0, 0, q[2]], legs=(0, 2, 4))
                    for t in times])
    assert np.abs(res.tau - ref).max() <= 1e-9 * np.abs(ref).max(), np.abs(res.tau - ref).max()
    fd = robot.forward_dynamics(X, XD, res.tau)
    np.testing.assert_allclose(fd.xdd, XDD, rtol=0, atol=1e-8 * np.abs(XDD).max())


def test_tilt_heave_ik_jacobian_and_simulation():
    """θ̇_act = J_IK V_t with J_IK = actuated rows of L_p⁺ P(x); a short simulation (task form on the
    reference path) under the torques that hold the initial state stays there, energy conserved."""
    robot = pkm.load(TILT)
    x, xd, _ = _tilt_motion(0.37)
    sol = robot.inverse_kinematics(x, xd)
    np.testing.assert_allclose(sol.qd_act[0], sol.J_IK[0] @ robot.task_velocity(x, xd), rtol=0, atol=1e-12)
    out = robot.simulate("hold", (0.0, 0.02), x0=x, dt=0.01, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out.x[-1], x, rtol=0, atol=1e-9)
    free = robot.simulate("zero", (0.0, 0.02), x0=x, dt=0.01, rtol=1e-10, atol=1e-12)
    assert free.x[-1, 2] < x[2] - 1e-4
    assert np.abs(free.energy_error).max() <= 1e-7 * max(1.0, np.abs(free.kinetic).max())


def test_cli_orientation_trajectory(tmp_path):
    """`pkm inverse-dynamics` with a rest-to-rest orientation move from the command line: the CSV's
    rotation columns start and end at the given rotation vectors, the torques equal the API's."""
    from conftest import run_pkm

    out = tmp_path / "w.csv"
    proc = run_pkm("inverse-dynamics", WRIST, "--trajectory", "line", "--start-rotation", "0.1", "0", "0",
                   "--end-rotation", "0.3", "-0.2", "0.4", "--duration", "0.5", "--dt", "0.01", "--out", out,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = np.genfromtxt(out, delimiter=",", names=True)
    np.testing.assert_allclose([data["rx"][0], data["ry"][0], data["rz"][0]], [0.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose([data["rx"][-1], data["ry"][-1], data["rz"][-1]], [0.3, -0.2, 0.4], atol=1e-15)
    robot = pkm.load(WRIST)
    tr = from_spec({"type": "line", "start": np.zeros(3), "end": np.zeros(3), "duration": 0.5, "dt": 0.01,
                    "start_rotation": np.array([0.1, 0, 0]), "end_rotation": np.array([0.3, -0.2, 0.4])},
                   robot.task.coordinate_names())
    tau = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd).tau
    got = np.column_stack([data[n] for n in data.dtype.names if n.startswith("tau_")])
    np.testing.assert_allclose(got, tau, rtol=0, atol=1e-12 * np.abs(tau).max())
