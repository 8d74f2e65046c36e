"""Redundantly actuated PKMs (paper Sec. 5, 6.6, 8.2; eq. 97–98, 114–120, 137–140) against a reference written
here without pkm's dynamics.

The reference (:func:`planar_rpr_reference`) is the Newton–Euler statics of a planar n-RPR robot
(any number of legs) written by hand in the plane from the robot file's geometry: each leg is a
cylinder on the base R joint, a rod sliding in it (the actuated P joint) and pinned to the platform.
It gives ``J_IK`` and ``φ_t`` with ``J_IKᵀ u = φ_t`` (eq. 137–140); the actuator forces are the
W-weighted minimum-norm solution ``u = W⁻¹ J (Jᵀ W⁻¹ J)⁻¹ φ_t`` (``pinv(J_IKᵀ) φ_t`` for W = I, paper
Sec. 8.2), the only one for a square ``J_IK``.

* The reference is first validated on the non-redundant robots/planar_3rpr.toml against today's
  ``inverse_dynamics`` (it passes without redundant actuation).
* Then robots/planar_4rpr.toml's ``inverse_dynamics`` (redundant actuation: ``weights``, ``preload``,
  ``null_space``) must equal it.
* The robot files with redundant actuation (planar_4rpr, delta_4rr2rrr) load
  and their default trajectories are reachable on one branch, away from singularities, with
  every limb closed on the platform.

Derivation of the reference (world frame, in the plane; ``a × b = a_x b_y − a_y b_x``,
``⊥(a) = (−a_y, a_x)``, i.e. ``ω × a`` for ``ω = 1``). Platform pose ``(φ, r)``, its joints
``P_i = r + R(φ) p_i``; leg i from its base joint ``B_i``: ``d_i = P_i − B_i = L_i e_i``,
``n_i = ⊥(e_i)``, leg angle ψ_i.

Kinematics: ``v_P = ṙ + φ̇ ⊥(R p_i)``, ``a_P = r̈ + φ̈ ⊥(R p_i) − φ̇² R p_i``;
``d̈ = (L̈ − L ψ̇²) e + (L ψ̈ + 2 L̇ ψ̇) n`` gives ``L̇ = e·v_P``, ``ψ̇ = n·v_P / L``,
``ψ̈ = (n·a_P − 2 L̇ ψ̇) / L``. The actuated coordinate is the leg's extension, ``q̇_i = L̇_i =
e_i·ṙ + φ̇ (R p_i × e_i)``: the rows of ``J_w`` over ``(φ̇, ṙ)``.
Both leg bodies turn with ψ: the cylinder's centre of mass at the fixed offset ``s_1`` from
``B`` (``a_1 = ψ̈ ⊥(s_1) − ψ̇² s_1``), the rod's at the fixed offset ``s_2`` from ``P``
(``a_2 = a_P + ψ̈ ⊥(s_2) − ψ̇² s_2``); offsets fixed in the leg's frame (e, n).

Statics with d'Alembert forces (``ā = a − g`` with ``g`` gravity's in-plane part; its normal part
loads only the joints): let ``F_i = f_e e + f_n n`` be the force of the platform on rod i and
``u_i`` the actuator force on the rod along ``e_i``.
  (1) rod along e (the P joint transmits only u along its axis): ``m_2 ā_2·e = u + f_e``;
  (2) whole leg, moments about B (the base R joint transmits none):
      ``Σ_k (c_k − B) × m_k ā_k + (I_1 + I_2) ψ̈ = (P − B) × F = L f_n``;
  (3) platform (mass m_p, centre of mass c, inertia I_p), moments about the platform origin r,
      end-effector wrench (m_EE; f_EE): ``m_p ā_c = Σ −F_i + f_EE``,
      ``I_p φ̈ + (c − r) × m_p ā_c = Σ R p_i × (−F_i) + m_EE``.
Eliminating ``f_e`` with (1) and ``f_n`` with (2), ``−F_i = u_i e_i − G_i`` with
``G_i = m_2 (ā_2·e_i) e_i + f_n n_i``, so (3) reads ``J_wᵀ u = φ_w`` with
  ``φ_w = (I_p φ̈ + (c − r) × m_p ā_c + Σ R p_i × G_i − m_EE ;  m_p ā_c + Σ G_i − f_EE)``.
pkm's task velocity is the body-fixed twist ``V_t = (ω_z, Rᵀ ṙ)`` (eq. 82): ``J_IK = J_w diag(1, R)``,
``φ_t = diag(1, Rᵀ) φ_w``.

Masses and inertias are computed here from the file's shapes (solid cylinders); the centres of mass,
joint points and the platform's reference pose come from the loaded file (``pkm.load``: SI units).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.trajectory import from_spec

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
RPR3 = ROBOTS / "planar_3rpr.toml"
RPR4 = ROBOTS / "planar_4rpr.toml"
DELTA4 = ROBOTS / "delta_4rr2rrr.toml"

#: Relative tolerance on the actuator forces (of the largest |u| along the samples).
RTOL = 1e-10
#: Every STEP-th sample of the default trajectories (201 samples: 21) in the dynamics comparisons.
STEP = 10


# ---------------------------------------------------------------------------------- the reference
def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _perp(a):
    return np.array([-a[1], a[0]])


def _rot(phi):
    c, s = np.cos(phi), np.sin(phi)
    return np.array([[c, -s], [s, c]])


def _cylinder(shape) -> tuple[float, float]:
    """Mass and moment of inertia about the plane's normal through the centre of mass of a solid
    cylinder ``shape`` (SI) whose axis lies in the plane (a leg) or along the normal (the platform)."""
    r, l = shape["radius"], shape["length"]
    m = shape["density"] * np.pi * r * r * l
    axis_z = abs(abs(float(np.asarray(shape["axis"])[2])) - 1.0) < 1e-12
    return m, (m * r * r / 2 if axis_z else m * (3 * r * r + l * l) / 12)


class PlanarRPR:
    """The reference model of a planar RPR robot (every leg ``name/base`` R, ``name/leg`` P,
    ``name/top`` R; bodies ``name/cylinder``, ``name/rod``) in the horizontal plane, from its spec."""

    def __init__(self, robot):
        spec = robot.spec
        bodies, joints = spec.expanded()
        body = {b.name: b for b in bodies}
        joint = {j.name: j for j in joints}
        A = body[spec.platform].frame
        assert np.allclose(A[:3, :3], np.eye(3)) and np.allclose(A[:3, 3], 0), "platform at the origin, not turned"
        self.m_p, self.I_p = _cylinder(body[spec.platform].shape)
        self.c_p = body[spec.platform].com[:2].copy()
        self.legs = []
        for name in robot.actuator_names:                  # actuator order: "legk/leg"
            leg = name.split("/")[0]
            assert joint[f"{leg}/leg"].actuated
            B, P0 = joint[f"{leg}/base"].point[:2], joint[f"{leg}/top"].point[:2]
            for j in ("base", "leg", "top"):              # a planar leg: normals along z, axes in the plane
                ax = joint[f"{leg}/{j}"].axes[0]
                assert np.allclose(np.abs(ax[2]), 1.0 if j != "leg" else 0.0)
            L0 = np.linalg.norm(P0 - B)
            e0 = (P0 - B) / L0
            assert np.allclose(joint[f"{leg}/leg"].axes[0][:2], e0), "P axis from the base joint to the platform joint"
            n0 = _perp(e0)
            masses = []
            for part, origin in (("cylinder", B), ("rod", P0)):
                b = body[f"{leg}/{part}"]
                m, I = _cylinder(b.shape)
                assert np.isclose(m, b.mass, rtol=1e-12)    # the same solid as pkm's
                s = b.com[:2] - origin                        # offset in the leg frame (e, n), fixed
                masses.append((m, I, np.array([s @ e0, s @ n0])))
            self.legs.append((B, P0.copy(), masses))

    def __call__(self, x, xd, xdd, gravity=(0.0, 0.0, -9.81), wrench=None):
        """``(J_IK, φ_t)`` at one state: coordinates ``x = (φ, r_x, r_y)``, rates ``ẋ``, ``ẍ``;
        ``gravity`` a 3-vector (m/s²); ``wrench`` the body-fixed end-effector wrench (6,) ``(m; f)``."""
        phi, r = x[0], np.asarray(x[1:3])
        dphi, dr = xd[0], np.asarray(xd[1:3])
        ddphi, ddr = xdd[0], np.asarray(xdd[1:3])
        g = np.asarray(gravity, dtype=float)[:2]
        R = _rot(phi)
        Jw = np.empty((len(self.legs), 3))
        G_sum, M_sum = np.zeros(2), 0.0
        for i, (B, P0, masses) in enumerate(self.legs):
            Rp = R @ P0                                       # p_i = P0 (platform frame = world at x = 0)
            P = r + Rp
            d = P - B
            L = np.linalg.norm(d)
            e = d / L
            n = _perp(e)
            vP = dr + dphi * _perp(Rp)
            aP = ddr + ddphi * _perp(Rp) - dphi ** 2 * Rp
            Ld, psid = e @ vP, n @ vP / L
            psidd = (n @ aP - 2 * Ld * psid) / L
            Jw[i] = (_cross(Rp, e), e[0], e[1])
            moment_B, I_sum, a_rod, m_rod = 0.0, 0.0, None, None
            for k, (m, I, (se, sn)) in enumerate(masses):
                s = se * e + sn * n
                origin, a_origin = (B, np.zeros(2)) if k == 0 else (P, aP)
                a = a_origin + psidd * _perp(s) - psid ** 2 * s - g     # ā = a − g
                moment_B += _cross(origin + s - B, m * a)
                I_sum += I
                if k == 1:
                    a_rod, m_rod = a, m
            f_n = (moment_B + I_sum * psidd) / L                        # (2)
            G = m_rod * (a_rod @ e) * e + f_n * n                       # (1) eliminated
            G_sum += G
            M_sum += _cross(Rp, G)
        c = R @ self.c_p
        a_c = ddr + ddphi * _perp(c) - dphi ** 2 * c - g
        m_ee, f_ee = (0.0, np.zeros(2)) if wrench is None else (wrench[2], R @ np.asarray(wrench[3:5]))
        phi_w = np.concatenate([[self.I_p * ddphi + _cross(c, self.m_p * a_c) + M_sum - m_ee],
                                self.m_p * a_c + G_sum - f_ee])                  # (3)
        T = np.eye(3)
        T[1:, 1:] = R                                         # V_t = (ω_z, Rᵀ ṙ): J_IK = J_w diag(1, R)
        return Jw @ T, T.T @ phi_w

    def forces(self, X, XD, XDD, weights=None, **kw):
        """``(u, J_IK, φ_t)`` along the samples: ``u`` the ``weights``-weighted minimum-norm solution of
        ``J_IKᵀ u = φ_t`` (``weights`` the diagonal of W; None: W = I, ``pinv(J_IKᵀ) φ_t``)."""
        U, Js, phis = [], [], []
        for x, xd, xdd in zip(X, XD, XDD):
            J, phi = self(x, xd, xdd, **kw)
            if weights is None:
                u = np.linalg.pinv(J.T) @ phi
            else:
                Wi = np.diag(1.0 / np.asarray(weights, dtype=float))
                u = Wi @ J @ np.linalg.solve(J.T @ Wi @ J, phi)
            U.append(u)
            Js.append(J)
            phis.append(phi)
        return np.array(U), np.array(Js), np.array(phis)


def _samples(robot, **traj):
    """The default trajectory (with ``traj`` keys replaced), every STEP-th sample."""
    tr = from_spec(dict(robot.spec.trajectory, **traj), robot.task.coordinate_names())
    return tr.x[::STEP], tr.xd[::STEP], tr.xdd[::STEP]


def _close(a, b, scale=None):
    scale = np.max(np.abs(b)) if scale is None else scale
    assert scale > 0
    err = np.max(np.abs(a - b))
    assert err <= RTOL * scale, f"max error {err:.3e} > {RTOL:g} · {scale:.3e}"
    return err / scale


# ---------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def rpr3():
    return pkm.load(RPR3)


@pytest.fixture(scope="module")
def rpr4():
    return pkm.load(RPR4)


# ---------------------------------------------------------------------------------- (i) 3-RPR validation
def test_gravity_normal_to_the_plane_moves_no_actuator(rpr3):
    """The 3-RPR lies in the horizontal plane and the file keeps the default gravity (along −z):
    it must not move the actuators, in the reference (by construction) and in pkm."""
    assert np.allclose(rpr3.spec.gravity, [0, 0, -9.81])
    X, XD, XDD = _samples(rpr3)
    with_g = rpr3.inverse_dynamics(X, XD, XDD).tau
    without = rpr3.inverse_dynamics(X, XD, XDD, gravity=[0.0, 0.0, 0.0]).tau
    _close(with_g, without)


@pytest.mark.parametrize("case", ["default", "rotating", "in-plane gravity and wrench"])
def test_reference_equals_pkm_on_the_3rpr(rpr3, case):
    """Square J_IK: the reference's forces are the unique solution and equal today's inverse dynamics
    along the default trajectory (rz held at 0), along it with rz swinging ±0.3 rad (the body-fixed
    task velocity), and with gravity in the plane and an end-effector wrench (every term of φ_t)."""
    ref = PlanarRPR(rpr3)
    kw, traj = {}, {}
    if case != "default":
        traj = dict(rotation_center=[0, 0, 0.1], rotation_amplitude=[0, 0, 0.3])
    if case == "in-plane gravity and wrench":
        kw = dict(gravity=np.array([3.0, -9.81, 2.0]), wrench=np.array([0.4, -0.3, 1.5, 20.0, -35.0, 7.0]))
    X, XD, XDD = _samples(rpr3, **traj)
    u, J, phi = ref.forces(X, XD, XDD, **kw)
    res = rpr3.inverse_dynamics(X, XD, XDD, **kw)
    _close(res.J_IK, J)
    rel = _close(res.tau, u)
    assert rel < RTOL
    assert np.max(np.abs(u)) > 1.0                           # forces of a few N: not a trivial match


def test_reference_forces_satisfy_the_statics(rpr3):
    """The weighted solution of a square system is the unique one (W has no effect): a check of the
    reference's weighting formula where the answer is known."""
    ref = PlanarRPR(rpr3)
    X, XD, XDD = _samples(rpr3)
    u, J, phi = ref.forces(X, XD, XDD)
    uw, _, _ = ref.forces(X, XD, XDD, weights=[1.0, 4.0, 0.25])
    _close(uw, u)
    _close(np.einsum("nij,ni->nj", J, u), phi)


# ---------------------------------------------------------------------------------- robot files
@pytest.mark.parametrize("path", [RPR4, DELTA4], ids=["planar_4rpr", "delta_4rr2rrr"])
def test_redundant_files_load_and_follow_their_trajectory(path):
    """Loaded (n_act = δ_p + 1); every sample of the default trajectory solved on the
    reference configuration's branch (no IKError, no branch change), J_IK of full rank and well
    conditioned, and every limb's solution closes on the platform at x (tree forward kinematics ==
    platform pose; the Delta's cut joint 7 closes its parallelogram)."""
    from pkm.algorithms.kinematics import forward_kinematics

    robot = pkm.load(path)
    assert (robot.n_act, robot.task_dof) == (4, 3)
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    with warnings.catch_warnings():
        warnings.simplefilter("error", pkm.BranchWarning)    # a branch continued or changed fails the test
        sol = robot.inverse_kinematics(tr.x, on_branch_change="raise")
    sv = np.linalg.svd(sol.J_IK, compute_uv=False)
    cond = sv[:, 0] / sv[:, -1]
    assert np.all(cond < 10.0), f"J_IK condition up to {cond.max():.1f}"   # the 3-limb originals: 5.7 (3-RPR), 7.5 (Delta)
    bodies, joints = robot.spec.expanded()
    A = {b.name: b.frame for b in bodies}
    cuts = [j for j in joints if j.cut]
    for s in range(0, len(tr), 5):
        Cp = robot.platform_pose(tr.x[s])
        poses = {}
        for limb in robot.limbs:
            C = forward_kinematics(limb.tree, sol.joints[limb.name][s])
            k = limb.tree.body_names.index(robot.spec.platform)
            assert np.allclose(C[k], Cp, atol=1e-10), f"{limb.name} at sample {s}"
            poses.update({n: C[i] for i, n in enumerate(limb.tree.body_names)})
        for j in cuts:                                        # the joint's point, moved with either body
            a, b = (poses[j.parent] @ np.linalg.inv(A[j.parent]), poses[j.child] @ np.linalg.inv(A[j.child]))
            p = np.append(j.point, 1.0)
            assert np.allclose(a @ p, b @ p, atol=1e-10) and np.allclose(a[:3, :3] @ j.axes[0], b[:3, :3] @ j.axes[0])
    # every leg is used: no actuator is idle (a zero row of J_IK) along the motion
    assert np.min(np.linalg.norm(sol.J_IK, axis=2)) > 0.1


def test_4rpr_legs_close_by_hand(rpr4):
    """The 4-RPR's joint values against the plane geometry: base angle θ1 and extension θ2 put the rod's
    end on the platform joint, and θ1 + θ3 is the platform's rotation."""
    X, _, _ = _samples(rpr4)
    sol = rpr4.inverse_kinematics(X)
    _, joints = rpr4.spec.expanded()
    joint = {j.name: j for j in joints}
    for limb in rpr4.limbs:
        B, P0 = joint[f"{limb.name}/base"].point[:2], joint[f"{limb.name}/top"].point[:2]
        th = sol.joints[limb.name]
        assert list(sol.variable_names[limb.name]) == [f"{limb.name}/{j}" for j in ("base", "leg", "top")]
        L0 = np.linalg.norm(P0 - B)
        sense = joint[f"{limb.name}/base"].axes[0][2]   # +1, or −1 for the mirrored leg (its R axes along −z)
        for x, (t1, t2, t3) in zip(X, th):
            end = B + _rot(sense * t1) @ ((P0 - B) * (1 + t2 / L0))
            assert np.allclose(end, x[1:] + _rot(x[0]) @ P0, atol=1e-12)
            assert np.isclose(sense * (t1 + t3), x[0], atol=1e-12)


# ---------------------------------------------------------------------------------- 4-RPR: φ_t from pkm today
def _four_rpr_with_passive_leg4(tmp_path):
    """planar_4rpr.toml with its fourth leg written out in world coordinates (the leg mirrored in y and
    turned by 180°: (x, y) → (−x, y); its R axes −z as a mirrored mount makes them) and its P joint passive: a non-redundant robot (3 actuators, loads with the check) with
    the same bodies, the same motion and so the same φ_t; ``J_IK`` is the 4-RPR's first three rows."""
    text = RPR4.read_text()
    leg4 = """          { name = "leg4", frame = { axis = [0, 0, 1], angle_deg = 180 }, mirror = "y" }]"""
    assert leg4 in text
    text = text.replace(""",
""" + leg4, "]")
    text = text.replace("[trajectory]", """[[bodies]]
name = "cylinder4"
shape = { type = "cylinder", from = ["-Rb", 0, 0], to = ["-(Rb + bx) / 2", "by / 2", 0], diameter = 50, material = "aluminium" }

[[bodies]]
name = "rod4"
shape = { type = "cylinder", from = ["-(Rb + bx) / 2", "by / 2", 0], to = ["-bx", "by", 0], diameter = 25, material = "steel" }

[[joints]]
name = "base4"
type = "R"
parent = "ground"
child = "cylinder4"
point = ["-Rb", 0, 0]
axis = [0, 0, -1]

[[joints]]
name = "leg4"
type = "P"
parent = "cylinder4"
child = "rod4"
point = ["-Rb", 0, 0]
axis = ["Rb - bx", "by", 0]

[[joints]]
name = "top4"
type = "R"
parent = "rod4"
child = "platform"
point = ["-bx", "by", 0]
axis = [0, 0, -1]

[trajectory]""", 1)
    path = tmp_path / "planar_4rpr_leg4_passive.toml"
    path.write_text(text)
    return pkm.load(path)


def test_4rpr_reference_equals_pkm_with_a_passive_fourth_leg(rpr4, tmp_path):
    """The reference's J_IK and φ_t of the 4-RPR against pkm's today: φ_t = J₃ᵀ τ₃ of the same robot with
    leg 4's P joint passive (its inertia still in φ_t); so (τ₃, 0) is one of the 4-RPR's solutions."""
    passive = _four_rpr_with_passive_leg4(tmp_path)
    assert passive.n_act == 3 and len(passive.limbs) == 4
    ref = PlanarRPR(rpr4)
    X, XD, XDD = _samples(rpr4)
    u, J, phi = ref.forces(X, XD, XDD)
    res = passive.inverse_dynamics(X, XD, XDD)
    _close(res.J_IK, J[:, :3])
    _close(rpr4.inverse_kinematics(X).J_IK, J)
    _close(np.einsum("nij,ni->nj", res.J_IK, res.tau), phi)
    _close(np.einsum("nij,ni->nj", J, np.column_stack([res.tau, np.zeros(len(X))])), phi)


# ---------------------------------------------------------------------------------- (ii) 4-RPR: needs redundant actuation
#: A diagonal actuator weighting W (its diagonal): legs 2 and 4 four and two times as costly.
W_DIAG = np.array([1.0, 4.0, 0.5, 2.0])


@pytest.fixture(scope="module")
def rpr4_reference(rpr4):
    ref = PlanarRPR(rpr4)
    X, XD, XDD = _samples(rpr4)
    return ref, (X, XD, XDD)


def test_4rpr_reference_is_redundant(rpr4_reference):
    """The reference itself: the minimum-norm and weighted forces both satisfy J_IKᵀ u = φ_t and differ
    (so the comparisons below tell them apart); the minimum-norm one is orthogonal to ker(J_IKᵀ), the
    weighted one W-orthogonal to it (the optimality conditions)."""
    ref, (X, XD, XDD) = rpr4_reference
    u, J, phi = ref.forces(X, XD, XDD)
    uw, _, _ = ref.forces(X, XD, XDD, weights=W_DIAG)
    for uu in (u, uw):
        _close(np.einsum("nij,ni->nj", J, uu), phi)
    assert np.max(np.abs(u - uw)) > 1e-3 * np.max(np.abs(u))
    for Jk, uk, uwk in zip(J, u, uw):
        ker = np.linalg.svd(Jk.T)[2][-1]                      # ker(J_IKᵀ), one direction
        assert abs(ker @ uk) <= 1e-12 * np.max(np.abs(u))
        assert abs(ker @ (W_DIAG * uwk)) <= 1e-12 * np.max(np.abs(u))


def test_4rpr_minimum_norm_forces(rpr4, rpr4_reference):
    """weights=None: res.tau = pinv(J_IKᵀ) φ_t of the reference (paper Sec. 8.2), J_IK alike;
    redundancy n_act − δ_p = 1 and res.null_space an orthonormal basis of ker(J_IKᵀ)."""
    ref, (X, XD, XDD) = rpr4_reference
    u, J, phi = ref.forces(X, XD, XDD)
    assert rpr4.redundancy == 1
    res = rpr4.inverse_dynamics(X, XD, XDD)
    assert res.tau.shape == (len(X), 4) and res.J_IK.shape == (len(X), 4, 3)
    _close(res.J_IK, J)
    _close(res.tau, u)
    N = res.null_space
    assert N.shape == (len(X), 4, 1)
    assert np.max(np.abs(np.einsum("nij,nik->njk", res.J_IK, N))) <= 1e-12 * np.max(np.abs(res.J_IK))
    assert np.allclose(np.einsum("nij,nik->njk", N, N), np.eye(1), atol=1e-12)


def test_4rpr_weighted_forces(rpr4, rpr4_reference):
    """A diagonal weights=W: res.tau = W⁻¹ J (Jᵀ W⁻¹ J)⁻¹ φ_t of the reference (the minimiser of uᵀ W u
    with J_IKᵀ u = φ_t), not the unweighted one."""
    ref, (X, XD, XDD) = rpr4_reference
    uw, _, _ = ref.forces(X, XD, XDD, weights=W_DIAG)
    res = rpr4.inverse_dynamics(X, XD, XDD, weights=np.diag(W_DIAG))
    _close(res.tau, uw)


def test_4rpr_preload_moves_along_the_null_space(rpr4, rpr4_reference):
    """preload z: res.tau = the minimum-norm forces + res.null_space @ z, still J_IKᵀ u = φ_t of the reference."""
    ref, (X, XD, XDD) = rpr4_reference
    u, J, phi = ref.forces(X, XD, XDD)
    z = np.array([50.0])
    res = rpr4.inverse_dynamics(X, XD, XDD, preload=z)
    _close(res.tau, u + np.einsum("nij,j->ni", res.null_space, z))
    _close(np.einsum("nij,ni->nj", res.J_IK, res.tau), phi, scale=np.max(np.abs(u)))


def test_4rpr_gravity_and_wrench(rpr4):
    """Every term of φ_t with redundant actuation: in-plane gravity and an end-effector wrench, along
    the default trajectory (rz swinging ±10°)."""
    ref = PlanarRPR(rpr4)
    X, XD, XDD = _samples(rpr4)
    kw = dict(gravity=np.array([3.0, -9.81, 2.0]), wrench=np.array([0.4, -0.3, 1.5, 20.0, -35.0, 7.0]))
    u, _, _ = ref.forces(X, XD, XDD, **kw)
    _close(rpr4.inverse_dynamics(X, XD, XDD, **kw).tau, u)
