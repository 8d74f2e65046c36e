"""Issue 27, item 2: a platform whose mobility exceeds the task space, and a limb that cannot hold the
platform's pose, are diagnosed instead of answered silently (pkm.description.freedom; the IK's
explain_failure).

The robot: the 3-PUU linear Delta of tests/robots_ok/linear_delta_3puu.toml, its inverse dynamics
checked against a virtual-work reference written here from the geometry alone; its two mis-written
variants (platform joints written as S joints; a U joint's two axes swapped) are edits of that file.
"""

from __future__ import annotations


import numpy as np
import pytest

import pkm
from pkm.algorithms.manipulator import inverse_dynamics as reference_inverse_dynamics
from pkm.description.freedom import check_task_mobility, describe, free_motions
from pkm.description.robotfile import load_spec
from pkm.description.topology import mobility
from pkm.errors import IKError, RobotFileError
from pkm.trajectory import from_spec

from conftest import ROBOTS, TESTS
from test_corpus import run

LINEAR = TESTS / "robots_ok" / "linear_delta_3puu.toml"
U2_AXES = 'axes = [["h", 0, "-dr"], [0, 1, 0]]     # b (rod), a (platform)'
#: A point well inside the workspace: 30 mm, 20 mm off the axis, 22 mm above the reference.
INSIDE = [0.03, 0.02, -0.17]


def variant(tmp_path, name, *edits) -> str:
    """The linear Delta's file with ``(old, new)`` text edits, written to ``tmp_path / name``."""
    text = LINEAR.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


S_JOINTS = [('name = "U2"\ntype = "U"', 'name = "U2"\ntype = "S"'), (U2_AXES, "")]
SWAPPED = [(U2_AXES, 'axes = [[0, 1, 0], ["h", 0, "-dr"]]')]
IDEAL = [('type = "translational"\n', 'type = "translational"\nideal_constraint = true\n')]



@pytest.fixture(scope="module")
def linear():
    return pkm.load(LINEAR)


# ---------------------------------------------------------------------------------- the good robot
def test_linear_delta_mobility():
    """15 variables, γ = L − 1 = 2 cycles (no loops in a limb), DOF 3, the platform's 3 translations."""
    spec = load_spec(LINEAR)
    m = mobility(spec)
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (15, 2, 3, 3)
    assert free_motions(spec).shape == (6, 0)


def _rot_z(phi):
    c, s = np.cos(phi), np.sin(phi)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _unit(v):
    return v / np.sqrt(v @ v)   # not np.linalg.norm: complex-step safe


class LinearDelta:
    """The 3-PUU linear Delta from its geometry alone: closed-form inverse kinematics (the carriage
    heights s_i), every body's pose C_b(x) for a platform position x, and the actuator forces by the
    principle of virtual power, ``J_sᵀ u = Σ_b J_bᵀ (M_b V̇_b − ad_{V_b}ᵀ M_b V_b − W_b^grav)`` with
    ``V_b = J_b ẋ`` (J_b by complex-step differentiation of C_b, its rate by central differences).
    Nothing of pkm's kinematics or dynamics is used: only the file's dimensions, masses and inertias."""

    def __init__(self, spec):
        p = spec.parameters
        self.R, self.r, self.l = (p[k] * 1e-3 for k in ("R", "r", "l"))
        self.h = np.sqrt(self.l ** 2 - (self.R - self.r) ** 2)
        self.phi = np.radians([0.0, 120.0, 240.0])
        self.g = spec.gravity
        self.bodies = {b.name: b for b in spec.expanded()[0]}

    def heights(self, x):
        """Carriage positions along the rails (q_act), 0 at the reference."""
        out = []
        for phi in self.phi:
            Rz = _rot_z(phi)
            c2 = x + Rz @ np.array([self.r, 0.0, 0.0])
            rel = c2 - Rz @ np.array([self.R, 0.0, 0.0])
            out.append(x[2] + np.sqrt(self.l ** 2 - rel[0] ** 2 - rel[1] ** 2))
        return np.array(out)

    def displacements(self, x):
        """Rigid displacements (name → 4×4, reference world → current world) of every moving body."""
        s = self.heights(x)
        x_ref = np.array([0.0, 0.0, -self.h])
        D = {"platform": _translation(x - x_ref)}
        for k, phi in enumerate(self.phi):
            Rz = _rot_z(phi)
            leg = f"leg{k + 1}"
            a = Rz @ np.array([0.0, 1.0, 0.0])
            c1_0 = Rz @ np.array([self.R, 0.0, 0.0])
            c2_0 = Rz @ np.array([self.r, 0.0, -self.h])
            c1 = c1_0 + np.array([0.0, 0.0, 1.0]) * s[k]
            c2 = x + Rz @ np.array([self.r, 0.0, 0.0])
            d0, d = _unit(c2_0 - c1_0), _unit(c2 - c1)
            b0, b = _unit(np.cross(d0, a)), _unit(np.cross(d, a))   # the rod-fixed U axis stays ⊥ a and ⊥ the rod
            Rrod = np.column_stack([b, d, np.cross(b, d)]) @ np.column_stack([b0, d0, np.cross(b0, d0)]).T
            D[f"{leg}/carriage"] = _translation(np.array([0.0, 0.0, 1.0]) * s[k])
            Drod = np.eye(4, dtype=Rrod.dtype)
            Drod[:3, :3], Drod[:3, 3] = Rrod, c1 - Rrod @ c1_0
            D[f"{leg}/rod"] = Drod
        return D

    def jacobians(self, x):
        """Body-fixed J_b (6×3) of every body at x: V_b = J_b ẋ (complex step, exact to rounding)."""
        h = 1e-30
        D0 = self.displacements(x)
        J = {n: np.zeros((6, 3)) for n in D0}
        for j in range(3):
            Dj = self.displacements(x + 1j * h * np.eye(3)[j])
            for n in D0:
                C0 = D0[n].real @ self.bodies[n].frame
                dC = Dj[n].imag @ self.bodies[n].frame / h
                T = np.linalg.solve(C0, dC)
                J[n][:, j] = [T[2, 1], T[0, 2], T[1, 0], *T[:3, 3]]
        return J, D0

    def forces(self, x, xd, xdd):
        J, D = self.jacobians(x)
        eps = 1e-5
        Jp, _ = self.jacobians(x + eps * xd)
        Jm, _ = self.jacobians(x - eps * xd)
        rhs = np.zeros(3)
        for n, Jb in J.items():
            body = self.bodies[n]
            V = Jb @ xd
            Vd = Jb @ xdd + (Jp[n] - Jm[n]) @ xd / (2 * eps)
            A = body.frame
            Rb = (D[n].real @ A)[:3, :3]
            dcm = A[:3, :3].T @ (body.com - A[:3, 3])            # centre of mass in the body frame
            m, S = body.mass, _skew(A[:3, :3].T @ (body.com - A[:3, 3]))
            M = np.block([[body.inertia - m * S @ S, m * S], [-m * S, m * np.eye(3)]])
            w, v = V[:3], V[3:]
            ad = np.block([[_skew(w), np.zeros((3, 3))], [_skew(v), _skew(w)]])
            f = m * Rb.T @ self.g
            W_grav = np.concatenate([np.cross(dcm, f), f])
            rhs += Jb.T @ (M @ Vd - ad.T @ M @ V - W_grav)
        Js = np.array([np.imag(self.heights(x + 1j * 1e-30 * np.eye(3)[j])) / 1e-30 for j in range(3)]).T
        return np.linalg.solve(Js.T, rhs)


def _translation(t):
    D = np.eye(4, dtype=np.result_type(t, float))
    D[:3, 3] = t
    return D


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


@pytest.mark.parametrize("gravity", [None, (0.0, 0.0, 0.0)], ids=["gravity", "inertia-only"])
def test_linear_delta_inverse_dynamics_equals_virtual_work(linear, gravity):
    """Along the file's motion (every 10th sample): pkm's carriage positions equal the closed form and
    its actuator forces the virtual-power reference, with gravity and without it (so that the inertial
    forces, ~7 % of the weight here, are checked on their own scale; they agree to ~4e-11 of it, the
    reference's finite-difference rates)."""
    tr = from_spec(linear.spec.trajectory, linear.task.coordinate_names())
    idx = np.arange(0, len(tr.t), 10)
    res = linear.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, gravity=gravity)
    ref = LinearDelta(linear.spec)
    if gravity is not None:
        ref.g = np.array(gravity)
    q = np.array([ref.heights(x) for x in tr.x[idx]])
    u = np.array([ref.forces(x, xd, xdd) for x, xd, xdd in zip(tr.x[idx], tr.xd[idx], tr.xdd[idx])])
    np.testing.assert_allclose(res.q_act[idx], q, rtol=0, atol=1e-12)
    scale = np.abs(u).max()
    assert scale > (1.0 if gravity is None else 0.1)     # the weight / the inertia: a real check
    np.testing.assert_allclose(res.tau[idx], u, rtol=0, atol=1e-9 * scale)


# ---------------------------------------------------------------------------------- S joints at the platform
def test_s_joints_at_the_platform_are_refused_at_load(tmp_path):
    """The limbs leave the platform 6 DOF: one line naming the file and the free rotations."""
    path = variant(tmp_path, "s_joints.toml", *S_JOINTS)
    with pytest.raises(RobotFileError) as info:
        pkm.load(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: task: ")
    assert "the platform can rotate about x, y, z, which the task space (x, y, z) does not control" in msg
    assert "the limbs leave it 6 DOF" in msg and "ideal_constraint = true" in msg
    code, out, err = run("info", path)
    assert code == 2 and out == "" and err.strip() == f"pkm: error: {msg}"
    code, _, err = run("inverse-dynamics", path, "--out", tmp_path / "tau.csv")
    assert code == 2 and "rotate about x, y, z" in err and not (tmp_path / "tau.csv").exists()


def test_declared_ideal_constraint_loads_and_info_says_so(tmp_path, linear):
    """With ideal_constraint = true the file loads, pkm info names the constraint and what it holds,
    and the forces are the correct robot's (the constraint holds the rotations as its U joints do)."""
    path = variant(tmp_path, "s_ideal.toml", *S_JOINTS, *IDEAL)
    robot = pkm.load(path)
    code, out, err = run("info", path)
    assert code == 0, err
    line = [l for l in out.splitlines() if "ideal constraint" in l]
    assert len(line) == 1 and "task.ideal_constraint = wx, wy, wz" in line[0] and "rotate about x, y, z" in line[0]
    assert "platform DOF: 6" in out
    tr = from_spec(linear.spec.trajectory, linear.task.coordinate_names())
    a = linear.inverse_dynamics(tr.x[::20], tr.xd[::20], tr.xdd[::20]).tau
    b = reference_inverse_dynamics(robot, tr.x[::20], tr.xd[::20], tr.xdd[::20]).tau   # the Python path: no compile
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())
    code, out, _ = run("info", LINEAR)
    assert code == 0 and "ideal constraint" not in out


def test_ideal_constraint_list_must_cover_the_free_motions(tmp_path):
    ok = variant(tmp_path, "list.toml", *S_JOINTS,
                 ('type = "translational"\n', 'type = "translational"\nideal_constraint = ["wx", "wy", "wz"]\n'))
    pkm.load(ok)
    short = variant(tmp_path, "short.toml", *S_JOINTS,
                    ('type = "translational"\n', 'type = "translational"\nideal_constraint = ["wz"]\n'))
    with pytest.raises(RobotFileError, match=r"task\.ideal_constraint: the ideal constraint holds wz, but the "
                                             r"platform can also rotate about x, y, which"):
        pkm.load(short)


@pytest.mark.parametrize("value, expected", [
    ('["vx"]', "'vx' is a task component"),
    ('["wq"]', "unknown component 'wq'"),
    ('["wz", "wz"]', "component 'wz' listed twice"),
    ("[]", "expected true, false or a non-empty array"),
    ("1", "expected true, false or a non-empty array of twist components outside the task space (wx, wy, wz), got a number"),
])
def test_ideal_constraint_key_is_validated(tmp_path, value, expected):
    path = variant(tmp_path, "bad.toml", ('type = "translational"\n', f'type = "translational"\nideal_constraint = {value}\n'))
    with pytest.raises(RobotFileError) as info:
        load_spec(path)
    assert str(info.value).startswith(f"{path}: task.ideal_constraint") and expected in str(info.value)


def test_ideal_constraint_false_is_no_constraint(tmp_path):
    path = variant(tmp_path, "s_false.toml", *S_JOINTS,
                   ('type = "translational"\n', 'type = "translational"\nideal_constraint = false\n'))
    with pytest.raises(RobotFileError, match="rotate about x, y, z"):
        pkm.load(path)


# ---------------------------------------------------------------------------------- a U joint's axes swapped
def test_swapped_u_axes_diagnosed_by_the_inverse_kinematics(tmp_path, linear):
    """At the reference configuration the swapped U has the same screws (the load check cannot see
    it), but away from it the limb cannot keep the platform's orientation: the IK says so instead of
    'target unreachable?', on the single-point path and in the batched inverse dynamics."""
    path = variant(tmp_path, "swapped.toml", *SWAPPED)
    robot = pkm.load(path)
    linear.inverse_kinematics(INSIDE)                           # reachable for the correct robot
    with pytest.raises(IKError) as info:
        robot.inverse_kinematics(INSIDE)
    msg = str(info.value)
    assert "\n" not in msg and "unreachable" not in msg
    assert msg.startswith("limb 'leg1': no inverse-kinematics solution")
    assert "the limb cannot hold the platform's rotation about" in msg and "task space (x, y, z)" in msg
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    with pytest.raises(IKError) as info:
        robot.inverse_dynamics(tr.x[:5], tr.xd[:5], tr.xdd[:5])
    assert "cannot hold the platform's rotation" in str(info.value) and "unreachable" not in str(info.value)
    code, _, err = run("ik", path, "--at", *INSIDE)
    assert code == 2 and "cannot hold the platform's rotation" in err and len(err.strip().splitlines()) == 1


def test_unreachable_target_still_says_so(linear):
    """The diagnosis does not misfire: a point beyond the rods' reach is unreachable."""
    with pytest.raises(IKError, match=r"target unreachable\?"):
        linear.inverse_kinematics([0.5, 0.0, -0.17])


# ---------------------------------------------------------------------------------- other task spaces
@pytest.mark.parametrize("path", [*sorted(ROBOTS.glob("*.toml")), *sorted((TESTS / "robots_ok").glob("*.toml"))],
                         ids=lambda p: p.name)
def test_every_robot_file_matches_its_task_space(path):
    """Planar, spherical, SE(3), (vx, vz), serial and tilt-heave task spaces: no free motion except
    where the file declares the ideal constraint (and then there is one)."""
    spec = load_spec(path)
    if spec.task is None or path.name == "non_hybrid_limb.toml":
        return
    check_task_mobility(spec)
    assert (free_motions(spec).shape[1] > 0) == bool(spec.task.ideal), path.name


def test_tilt_heave_without_its_declaration_names_the_free_motions(tmp_path):
    """A selection that is not twist-closed, (wx, wy, vz): the three U-P-S legs leave rz, x, y free."""
    text = (TESTS / "robots_ok" / "tilt_heave_3ups.toml").read_text()
    path = tmp_path / "tilt.toml"
    path.write_text(text.replace('ideal_constraint = ["wz", "vx", "vy"]', ""))
    with pytest.raises(RobotFileError, match=r"the platform can rotate about z and translate along x, y, which the "
                                             r"task space \(rx, ry, z\) does not control: the limbs leave it 6 DOF"):
        pkm.load(path)


def test_impossible_task_component_names_the_limbs(tmp_path):
    """A task component the platform cannot move in: the message names the limbs that lack it."""
    path = variant(tmp_path, "wz.toml", ('type = "translational"', 'type = "select"\ncomponents = ["wz", "vx", "vy"]'))
    with pytest.raises(RobotFileError) as info:
        pkm.load(path)
    msg = str(info.value)
    assert "are not all motions the platform can make" in msg and "vx, vy alone" in msg
    assert all(f"limb 'leg{k}''s twist space lacks wz" in msg for k in (1, 2, 3))


def test_ideal_constraint_is_documented():
    doc = (TESTS.parent / "docs" / "robot-file-format.md").read_text()
    assert "# ideal_constraint = true" in doc and "**`ideal_constraint`**" in doc


def test_describe_names_axes_and_screws():
    e = np.eye(6)
    assert describe(e[:, [0, 1, 2]]) == "rotate about x, y, z"
    assert describe(e[:, [2, 3, 4]]) == "rotate about z and translate along x, y"
    # a rotation about z through (0.1, 0, 0) (v = −ω × p) and a screw along x with pitch 0.02 m/rad
    turn = np.array([0, 0, 1, 0, -0.1, 0.0])
    assert describe(turn[:, None]) == "rotate about the axis (0, 0, 1) through (0.1, 0, 0) m"
    screw = np.array([1, 0, 0, 0.02, 0, 0.0])
    assert describe(screw[:, None]) == "move along the screw about the axis (1, 0, 0) through (0, 0, 0) m with pitch 0.02 m/rad"
