"""PKM dynamics: task/actuator-space EOM and inverse dynamics (paper Sec. 6.3, eq. 102–103; Sec. 6.6, eq. 114–120; Sec. 8.2, eq. 137–140, 144).

Checked against quantities computed independently, body by body: the kinetic and potential energy
of every body (power balance, Hessian/gradient checks), a robot written out without its
representative limb, and the virtual-work principle for a static load.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import pkm
from pkm.algorithms import manipulator as man
from pkm.algorithms.assembly import assemble
from pkm.algorithms.dynamics import kinetic_energy, potential_energy
from pkm.robot import Robot

from conftest import ROBOTS

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml"}


@pytest.fixture(scope="module", params=sorted(FILES))
def robot(request):
    return pkm.load(ROBOTS / FILES[request.param])


def energies(robot, x, xd, trees):
    """Kinetic and potential energy of all bodies (limbs with massless platform + the platform)."""
    sol = robot.inverse_kinematics(x, xd, warm_start=False, tol=1e-13)
    g0 = robot.spec.gravity
    T = V = 0.0
    for k, limb in enumerate(robot.limbs):
        th, thd = sol.joints[limb.name][0], sol.joints_d[limb.name][0]
        T += kinetic_energy(trees[k], th, thd)
        V += potential_energy(trees[k], th, g0)
    p = robot.spec.body(robot.spec.platform)
    Cp = robot.platform_pose(x)
    Vp, _ = robot.platform_twist(x, xd)
    Mp = man.platform_inertia(robot)
    com = Cp[:3, :3] @ np.linalg.solve(p.frame[:3, :3], p.com - p.frame[:3, 3]) + Cp[:3, 3]
    return T + 0.5 * Vp @ Mp @ Vp, V - p.mass * g0 @ com


def _path(robot):
    traj = robot.spec.trajectory
    sel = ["xyz".index(c[1]) for c in robot.task.components]
    centre = np.asarray(traj["center"])[sel]
    amp = 0.6 * np.asarray(traj["amplitude"])[sel]
    w = 2 * np.pi / traj["period"] * np.array([1.0, 1.7, 0.6])[: len(sel)]

    def f(t):
        s = np.sin(w * t)
        return centre + amp * s, amp * w * np.cos(w * t), -amp * w**2 * s

    return f


def test_power_balance(robot):
    """Σ u·θ̇_act = d/dt (T + V) along a motion (4th-order central differences in time, ≤ 1e-8 rel)."""
    trees = man.dynamics_trees(robot)
    path = _path(robot)
    h = 2e-4  # truncation O(h⁴) ≈ 1e-11 for the fastest (IRSBot-2) motion; IK round-off / h ≈ 1e-10
    for t in (0.13, 0.41, 0.77):
        x, xd, xdd = path(t)
        res = man.inverse_dynamics(robot, x, xd, xdd)
        power = res.tau[0] @ res.qd_act[0]
        E = [sum(energies(robot, *path(t + k * h)[:2], trees)) for k in (-2, -1, 1, 2)]
        dE = (E[0] - 8 * E[1] + 8 * E[2] - E[3]) / (12 * h)
        assert power == pytest.approx(dE, rel=1e-8, abs=1e-8 * max(1.0, abs(power)))


def test_mass_matrix_is_the_hessian_of_kinetic_energy(robot):
    """M_t (eq. 108) = ∂²T/∂V_t² (T quadratic in V_t: second differences are exact up to round-off)."""
    trees = man.dynamics_trees(robot)
    x = _path(robot)(0.3)[0]
    M_t = man.mass_matrix(robot, x)
    d = robot.task_dof
    H = np.empty((d, d))
    e = np.eye(d)
    T = lambda v: energies(robot, x, v, trees)[0]  # noqa: E731
    for i in range(d):
        for j in range(d):
            H[i, j] = (T(e[i] + e[j]) - T(e[i] - e[j]) - T(-e[i] + e[j]) + T(-e[i] - e[j])) / 4
    np.testing.assert_allclose(M_t, H, rtol=1e-7, atol=1e-7 * np.abs(M_t).max())
    assert np.all(np.linalg.eigvalsh(M_t) > 0)


def test_gravity_is_the_gradient_of_potential_energy(robot):
    trees = man.dynamics_trees(robot)
    x = _path(robot)(0.6)[0]
    zero = np.zeros(robot.task_dof)
    W_grav = man.eom(robot, x, zero).W_t_grav
    h = 1e-5
    grad = np.array([(energies(robot, x + h * e, zero, trees)[1] - energies(robot, x - h * e, zero, trees)[1]) / (2 * h)
                     for e in np.eye(robot.task_dof)])
    np.testing.assert_allclose(W_grav, grad, rtol=1e-7, atol=1e-7 * np.abs(grad).max())


def test_eom_terms_reproduce_inverse_dynamics(robot):
    """M_t V̇_t + C_t V_t + W_t^grav = J_IKᵀ u (eq. 107) and M_a θ̈_a + C_a θ̇_a + Q_a^grav = u (eq. 116)."""
    x, xd, xdd = _path(robot)(0.21)
    res = man.inverse_dynamics(robot, x, xd, xdd)
    e = man.eom(robot, x, xd)
    np.testing.assert_allclose(e.M_t @ xdd + e.C_t_V_t + e.W_t_grav, e.J_IK.T @ res.tau[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(e.M_a @ res.qdd_act[0] + e.C_a_qd_a + e.Q_a_grav, res.tau[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(e.M_a, e.M_a.T, atol=1e-12)


def test_modular_invariance():
    """The Delta with a mounted representative limb and the same robot written out body by body."""
    spec = pkm.description.robotfile.load_spec(ROBOTS / "delta_3rr2rrr.toml")
    bodies, joints = spec.expanded()
    written = replace(spec, bodies=bodies, joints=joints, limb=None, platform=spec.platform)
    a, b = Robot(spec), Robot(written)
    x, xd, xdd = _path(a)(0.37)
    ta = man.inverse_dynamics(a, x, xd, xdd).tau
    tb = man.inverse_dynamics(b, x, xd, xdd).tau
    np.testing.assert_allclose(ta, tb, rtol=1e-12, atol=1e-12)


def test_delta_static_torques():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    x0 = robot.x_ref
    rest = np.zeros(3)
    u = man.inverse_dynamics(robot, x0, rest, rest).tau[0]
    assert u[0] == pytest.approx(u[1], rel=1e-12) and u[0] == pytest.approx(u[2], rel=1e-12)

    # platform weight only: every other body massless
    spec = robot.spec
    light = replace(spec.limb, bodies=tuple(replace(b, mass=0.0, inertia=np.zeros((3, 3))) for b in spec.limb.bodies))
    heavy = Robot(replace(spec, limb=light))
    x = np.array([0.08, -0.05, -1.02])
    u = man.inverse_dynamics(heavy, x, rest, rest).tau[0]
    # virtual work: u·δθ_act = −m_p g·δx, with δx/δθ_act from the assembled mechanism (finite differences)
    sol = heavy.inverse_kinematics(x, warm_start=False)
    start = [sol.joints[l.name][0] for l in heavy.limbs]
    h = 1e-6
    J_FK = np.empty((3, 3))
    for i in range(3):
        dq = np.zeros(3)
        dq[i] = h
        xp = assemble(heavy, sol.q_act[0] + dq, start)[1][:3, 3]
        xm = assemble(heavy, sol.q_act[0] - dq, start)[1][:3, 3]
        J_FK[:, i] = (xp - xm) / (2 * h)
    m_p = spec.body(spec.platform).mass
    np.testing.assert_allclose(u, J_FK.T @ (-m_p * spec.gravity), rtol=1e-7)
