"""The 6-UPS Gough–Stewart hexapod (robots/hexapod_6ups.toml) along a 6-DOF motion (issue 17).

* pkm's inverse dynamics against an independent reference written here: the geometry and masses
  from the published data (Smith & Wendlandt 2002) directly, every body's pose as a function of
  the task coordinates (the U joint's two angles from the leg direction, the leg's slide), its
  velocities and accelerations by high-precision central differences (mpmath, 50 digits), each
  body's Newton–Euler equations about its centre of mass in world axes, and the actuator forces by
  the principle of virtual work over the six platform directions (as Tsai 2000 does for this
  robot): no screw, no tree, no dexp of pkm's.
* Power balance along pkm's own solution: actuator power = d/dt (kinetic + potential energy), the
  energies from pkm's limb trees and platform, differentiated by an 8th-order stencil.
* The batched kernel equals the reference path of pkm.algorithms.manipulator.
* The file with mirrored mounts equals the same robot written out leg by leg
  (tests/robots_ok/hexapod_legs.toml).
* Forward dynamics: a free fall with zero actuator forces conserves energy.
"""
from __future__ import annotations

from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

import pkm
from pkm.algorithms.dynamics import kinetic_energy, potential_energy
from pkm.algorithms.manipulator import dynamics_trees, inverse_dynamics as reference_inverse_dynamics, platform_inertia

ROOT = Path(__file__).resolve().parents[1]
HEXAPOD = ROOT / "robots" / "hexapod_6ups.toml"
LEGS = ROOT / "tests" / "robots_ok" / "hexapod_legs.toml"

# 6-DOF test motion, T = 1 s: x_k(t) = c_k + a_k sin(2πt + φ_k), x = (rx, ry, rz, x, y, z); the
# rotation never passes through 0 (the rotation vector's own parameterisation is tested too).
C = np.array([0.03, -0.02, 0.05, 0.02, -0.03, 2.05])
A = np.array([0.10, -0.08, 0.12, 0.15, 0.10, -0.12])
PHI = np.array([0.0, 0.7, 1.9, 0.3, 2.4, 1.1])
T_SAMPLES = np.array([0.0, 0.13, 0.37, 0.5, 0.71, 0.93])


def motion(t):
    w = 2 * np.pi
    s, c = np.sin(w * t + PHI), np.cos(w * t + PHI)
    return C + A * s, A * w * c, -A * w * w * s


@pytest.fixture(scope="module")
def robot():
    return pkm.load(HEXAPOD)


@pytest.fixture(scope="module")
def result(robot):
    X, XD, XDD = (np.array(v) for v in zip(*(motion(t) for t in T_SAMPLES)))
    return robot.inverse_dynamics(X, XD, XDD)


# ----------------------------------------------------------------------------- independent reference
mp.mp.dps = 50
RB, RT, AB, AT, H = mp.mpf(3), mp.mpf(1), mp.mpf("2.5"), mp.mpf(10), mp.mpf(2)
RHO = mp.mpf(76000) / mp.mpf("9.81")
RO, RI, THICK = mp.mpf("0.05"), mp.mpf("0.03"), mp.mpf("0.05")
G = mp.matrix([0, 0, mp.mpf("-9.81")])


def _deg(a):
    return a * mp.pi / 180


def _legs():
    """(base point, platform point in the platform frame) of legs 1…6 (Smith & Wendlandt: base
    point at 120k ∓ 2.5° joined to the platform point at 120k ∓ 50°)."""
    out = []
    for k in range(3):
        for sgn in (-1, 1):
            b, t = _deg(120 * k + sgn * AB), _deg(120 * k + sgn * (60 - AT))
            out.append((mp.matrix([RB * mp.cos(b), RB * mp.sin(b), 0]), mp.matrix([RT * mp.cos(t), RT * mp.sin(t), 0])))
    return out


LEG_POINTS = _legs()


def _cross(a, b):
    return mp.matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _unit(a):
    return a / mp.norm(a)


def _rot(axis, angle):
    """Rotation about a unit axis (Rodrigues), mpmath."""
    K = mp.matrix([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return mp.eye(3) + mp.sin(angle) * K + (1 - mp.cos(angle)) * K * K


def _rotvec(r):
    phi = mp.norm(r)
    return mp.eye(3) if phi == 0 else _rot(r / phi, phi)


def _home():
    """Per leg: base point, home direction u0, home length L0 and the U joint's frame (n1, n2, u0)."""
    out = []
    for b, a in LEG_POINTS:
        d = a + mp.matrix([0, 0, H]) - b
        u0 = _unit(d)
        n1 = _unit(_cross(u0, mp.matrix([0, 0, 1])))
        out.append((b, u0, mp.norm(d), mp.matrix([[n1[i], _cross(u0, n1)[i], u0[i]] for i in range(3)])))
    return out


HOME = _home()
L0 = HOME[0][2]
M_LOWER = RHO * mp.pi * (RO ** 2 - RI ** 2) * mp.mpf("0.75") * L0
M_UPPER = RHO * mp.pi * RI ** 2 * mp.mpf("0.75") * L0
M_TOP = RHO * mp.pi * RT ** 2 * THICK
# (mass, transverse and axial moment about the COM) of the tube, the rod, the disc
INERTIA = [(M_LOWER, M_LOWER * (3 * (RO ** 2 + RI ** 2) + (mp.mpf("0.75") * L0) ** 2) / 12, M_LOWER * (RO ** 2 + RI ** 2) / 2),
           (M_UPPER, M_UPPER * (3 * RI ** 2 + (mp.mpf("0.75") * L0) ** 2) / 12, M_UPPER * RI ** 2 / 2),
           (M_TOP, M_TOP * (3 * RT ** 2 + THICK ** 2) / 12, M_TOP * RT ** 2 / 2)]


def bodies(x, legs=range(6)):
    """Every body's (rotation from its home orientation, COM, mass, transverse, axial inertia, axis
    at home) and the leg lengths at platform coordinates x = (ρ, p) (mpmath), for the legs ``legs``
    (0-based)."""
    R = _rotvec(mp.matrix(x[:3]))
    p = mp.matrix(x[3:])
    out, lengths = [], []
    for i in legs:
        (b, a), (_, u0, L0_, E) = LEG_POINTS[i], HOME[i]
        d = p + R * a - b
        L = mp.norm(d)
        u = d / L
        ul = E.T * u  # = (sin β, −sin α cos β, cos α cos β): U angles α about n1, β about n2
        beta = mp.asin(ul[0])
        alpha = mp.atan2(-ul[1], ul[2])
        ex, ey = mp.matrix([1, 0, 0]), mp.matrix([0, 1, 0])
        Rl = E * _rot(ex, alpha) * _rot(ey, beta) * E.T
        out.append((Rl, b + mp.mpf("0.375") * L0_ * u, *INERTIA[0], u0))
        out.append((Rl, b + (L - mp.mpf("0.375") * L0_) * u, *INERTIA[1], u0))
        lengths.append(L)
    out.append((R, p, *INERTIA[2], mp.matrix([0, 0, 1])))
    return out, lengths


def _vee_skew(M):
    """vee of the skew-symmetric part of M."""
    return mp.matrix([(M[2, 1] - M[1, 2]) / 2, (M[0, 2] - M[2, 0]) / 2, (M[1, 0] - M[0, 1]) / 2])


def reference_forces(t, coords=None, to_pose=None, legs=range(6)):
    """Actuator forces (legs ``legs`` in order) at time t by virtual work over the task directions:
    ``coords(t)`` the task coordinates (default: :func:`motion`'s six), ``to_pose(q)`` the platform's
    (ρ, p) (default: q itself). ``Σ_i τ_i ∂L_i/∂q_k = Σ_b (m(a − g))·∂c/∂q_k + (Iω̇ + ω × Iω)·δω_k``:
    the balance along the task's motions (an ideal constraint holds the others, for a task space
    with fewer than six coordinates)."""
    h = mp.mpf("1e-15")
    w = 2 * mp.pi

    def motion6(tt):
        return [mp.mpf(C[k]) + mp.mpf(A[k]) * mp.sin(w * tt + mp.mpf(PHI[k])) for k in range(6)]

    coords = coords or motion6
    to_pose = to_pose or (lambda q: q)
    legs = list(legs)
    t = mp.mpf(t)
    q = coords(t)
    d = len(q)
    (B0, _), (Bp, _), (Bm, _) = (bodies(to_pose(coords(tt)), legs) for tt in (t, t + h, t - h))
    # per body: the inertial and gravity force m(a − g) and moment Iω̇ + ω × Iω (world axes)
    per_body = []
    for (R, c, m, It, Ia, e0), (Rp, cp, *_), (Rm, cm, *_) in zip(B0, Bp, Bm):
        acc = (cp - 2 * c + cm) / (h * h)
        Rd, Rdd = (Rp - Rm) / (2 * h), (Rp - 2 * R + Rm) / (h * h)
        om, omd = _vee_skew(Rd * R.T), _vee_skew(Rdd * R.T)
        e = R * e0
        Iw = It * (mp.eye(3) - e * e.T) + Ia * e * e.T  # axisymmetric about e
        per_body.append((m * (acc - G), Iw * omd + _cross(om, Iw * om)))
    Q, J = mp.zeros(d, 1), mp.zeros(d, len(legs))
    hx = mp.mpf("1e-20")
    for k in range(d):
        qp, qm = list(q), list(q)
        qp[k] += hx
        qm[k] -= hx
        (Bxp, Lp), (Bxm, Lm) = bodies(to_pose(qp), legs), bodies(to_pose(qm), legs)
        for (F, N), (R, *_), (Rp, cp, *_), (Rm, cm, *_) in zip(per_body, B0, Bxp, Bxm):
            dc = (cp - cm) / (2 * hx)
            dw = _vee_skew((Rp - Rm) / (2 * hx) * R.T)
            Q[k] += (F.T * dc)[0] + (N.T * dw)[0]
        for i in range(len(legs)):
            J[k, i] = (Lp[i] - Lm[i]) / (2 * hx)  # ∂L_i/∂q_k
    return np.array(mp.lu_solve(J, Q).tolist(), dtype=float).ravel()


def test_inverse_dynamics_against_newton_euler_reference(robot, result):
    assert robot.actuator_names == [f"leg{i}/P" for i in range(1, 7)]
    ref = np.array([reference_forces(t) for t in T_SAMPLES])
    peak = np.abs(ref).max()
    assert peak > 1e3  # the platform alone weighs ~12 kN
    err = np.abs(result.tau - ref).max() / peak
    assert err <= 1e-9, err


def _energy(robot, trees, Mp, x, xd, start):
    sol = robot.inverse_kinematics(x, xd, start=start)
    g0 = robot.spec.gravity
    plat = robot.spec.body(robot.spec.platform)
    E = 0.0
    for k, limb in enumerate(robot.limbs):
        th, thd = sol.joints[limb.name][0], sol.joints_d[limb.name][0]
        E += kinetic_energy(trees[k], th, thd) + potential_energy(trees[k], th, g0)
    Cp = robot.platform_pose(x)
    Vp, _ = robot.platform_twist(x, xd)
    com = Cp[:3, :3] @ (plat.frame[:3, :3].T @ (plat.com - plat.frame[:3, 3])) + Cp[:3, 3]
    return E + 0.5 * Vp @ Mp @ Vp - plat.mass * g0 @ com, [sol.joints[l.name][0] for l in robot.limbs]


FD8 = ((1, 4 / 5), (2, -1 / 5), (3, 4 / 105), (4, -1 / 280))  # 8th-order central first derivative


def test_power_balance(robot, result):
    """τ·q̇_act = d/dt (T + V) along the motion, T + V from pkm's trees and platform (≤ 1e-8)."""
    trees, Mp = dynamics_trees(robot), platform_inertia(robot)
    h = 1e-3
    worst, scale = 0.0, 0.0
    for s, t in enumerate(T_SAMPLES):
        start = [result.joints[l.name][s] for l in robot.limbs]
        dE = 0.0
        for k, c in FD8:
            for sgn in (1, -1):
                x, xd, _ = motion(t + sgn * k * h)
                dE += sgn * c * _energy(robot, trees, Mp, x, xd, start)[0] / h
        P = result.tau[s] @ result.qd_act[s]
        worst = max(worst, abs(P - dE))
        scale = max(scale, np.abs(result.tau[s] * result.qd_act[s]).max())
    assert worst <= 1e-8 * scale, (worst, scale)


def test_kernel_equals_reference_path(robot, result):
    X, XD, XDD = (np.array(v) for v in zip(*(motion(t) for t in T_SAMPLES)))
    ref = reference_inverse_dynamics(robot, X, XD, XDD)
    np.testing.assert_allclose(result.tau, ref.tau, rtol=0, atol=1e-12 * np.abs(ref.tau).max())
    np.testing.assert_allclose(result.q_act, ref.q_act, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.qdd_act, ref.qdd_act, rtol=0, atol=1e-12 * np.abs(ref.qdd_act).max())


def test_mirrored_mounts_equal_legs_written_out(robot, result):
    """hexapod_legs.toml writes the six legs out in world coordinates from the published angles
    (no limb, no mirror): the same bodies, joints and inverse dynamics (≤ 1e-12)."""
    legs = pkm.load(LEGS)
    mb, mj = robot.spec.expanded()
    lb, lj = legs.spec.expanded()
    bodies_m = {b.name.replace("leg", "").replace("/", ""): b for b in mb}
    for b in lb:  # names "lower1" … in the written-out file, "leg1/lower" … mounted
        key = b.name[-1] + b.name[:-1] if b.name[-1].isdigit() else b.name
        m = bodies_m[key]
        Rm, Rl = m.frame[:3, :3], b.frame[:3, :3]
        assert abs(m.mass - b.mass) <= 1e-12 * b.mass
        np.testing.assert_allclose(m.com, b.com, rtol=0, atol=1e-12)
        np.testing.assert_allclose(Rm @ m.inertia @ Rm.T, Rl @ b.inertia @ Rl.T, rtol=0, atol=1e-12 * b.mass)
    joints_m = {j.name.replace("leg", "").replace("/", ""): j for j in mj}
    for j in lj:
        m = joints_m[j.name[-1] + j.name[:-1]]
        np.testing.assert_allclose(m.point, j.point, rtol=0, atol=1e-12)
        for am, al in zip(m.axes, j.axes):  # a passive rotation axis may point the other way
            assert min(np.abs(am - al).max(), np.abs(am + al).max()) <= 1e-12
        if j.type == "P":
            np.testing.assert_allclose(m.axes, j.axes, rtol=0, atol=1e-12)
    X, XD, XDD = (np.array(v) for v in zip(*(motion(t) for t in T_SAMPLES)))
    other = legs.inverse_dynamics(X, XD, XDD)
    order = [legs.actuator_names.index(f"P{i}") for i in range(1, 7)]
    np.testing.assert_allclose(other.tau[:, order], result.tau, rtol=0, atol=1e-12 * np.abs(result.tau).max())
    np.testing.assert_allclose(other.q_act[:, order], result.q_act, rtol=0, atol=1e-12)


def test_free_fall_conserves_energy(robot):
    """Zero actuator forces: the platform falls, the legs slide out; energy stays constant."""
    res = robot.simulate("zero", (0.0, 0.05), x0=C, xd0=np.zeros(6), rtol=1e-10, atol=1e-12, dt=0.01)
    assert res.x[-1, 5] < C[5] - 1e-4  # it fell
    assert np.abs(res.energy_error).max() <= 1e-7 * np.abs(res.kinetic).max()
    assert np.abs(res.work).max() == 0.0


def test_absolute_coordinates(robot, result):
    """A third method: the absolute-coordinate formulation (rheonomic drives, torques from their
    multipliers, pkm.absolute.loader) gives the same leg forces."""
    from pkm.absolute.loader import load_spec as load_absolute
    from pkm.algorithms.kinematics import forward_kinematics

    model = load_absolute(robot.spec)
    assert model.dof == 6
    for s in (1, 4):
        poses = {}
        for limb in robot.limbs:
            Cs = forward_kinematics(limb.tree, result.joints[limb.name][s])
            poses.update({n: Cs[k] for k, n in enumerate(limb.tree.body_names) if not limb.tree.virtual[k]})
        tau, *_ = model.solve_instant(result.q_act[s], result.qd_act[s], result.qdd_act[s], model.coordinates(poses))
        np.testing.assert_allclose(tau, result.tau[s], rtol=0, atol=1e-9 * np.abs(result.tau).max())
