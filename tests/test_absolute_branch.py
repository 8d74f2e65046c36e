"""The absolute-coordinate layer on pkm's branch (issue 27, item 3).

Newton's method on the director form converges to any zero of Φ: other assembly modes, and the
*false* zeros of the dot-product rows at half turns (a drive row ``2e₀e_z`` vanishes at ``θ + π``,
a weld's rows ``sin ϑ n`` at ϑ = π, a revolute's ``z_i·x_j, z_i·y_j`` with ``z_j = −z_i``). Before
this, the Delta's drives at 2 rad were assembled at ``2 − π`` from the reference, and `pkm
reactions` of the wrist at a 2 rad rotation wrote the torques of another configuration
(0.0696, −0.0022, 0.0094 N·m for pkm's −0.0696, −0.1243, 0.0768). Checked here:

* every robot file (robots/ and tests/robots_ok/) at task poses whose actuator angles (or, for
  prismatic drives, joint rotations) are beyond ±π/2: the absolute layer assembled from pkm's IK
  solution (``ik_configuration``, ``on_branch=True``) gives pkm's torques, or one of the two
  refuses with one line; from the reference alone (no branch) it gives pkm's torques or refuses;
* every false zero of the catalogue — the lock's masks with rotation rows, a drive, R, C, P and
  the planar joint — at 180° and ±1° from it is refused by the assembly, while a genuine half turn
  about a free axis is kept;
* ``pkm reactions`` of the wrist at a 2 rad rotation gives ``pkm inverse-dynamics``' torques.
"""
from __future__ import annotations

import csv
import warnings
import zlib

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import pkm
from absolute_cases import assembled
from conftest import REDUNDANT, ROBOTS, TESTS
from test_corpus import run as _run
from pkm.absolute import LOCK_MASKS, LOCK_ROWS, AssemblyModeError, System
from pkm.absolute.loader import load_spec
from pkm.absolute.modes import branch_distance
from pkm.cli.reactions import ik_configuration
from pkm.errors import PkmError, TopologyError

OK = TESTS / "robots_ok"
#: Task poses per robot file, each with an actuator angle beyond ±π/2 (or, with prismatic drives,
#: a joint turned by more than π/2 from the reference) where pkm's IK reaches it from x_ref.
POSES = {
    ROBOTS / "delta_3rr2rrr.toml": [(-0.343, -0.503, -1.032), (-0.475, 0.223, -0.616)],
    ROBOTS / "delta_3r2us.toml": [(0.424, 0.221, -1.116)],
    ROBOTS / "irsbot2.toml": [(0.261, -0.453)],
    ROBOTS / "serial_6r.toml": [(-0.226, -0.548, 0.019, -0.078, 0.06, 0.344)],
    ROBOTS / "wrist_3rrr.toml": [(2.0, 0.0, 0.0), (0.5, -0.4, 2.0)],
    ROBOTS / "planar_3rpr.toml": [(2.0, 0.1, -0.1)],
    ROBOTS / "hexapod_6ups.toml": [(0.3, -0.2, 1.2, 0.2, 0.1, 2.2), (0.3, -0.2, 1.7, 0.2, 0.1, 2.2)],
    OK / "hexapod_legs.toml": [(0.3, -0.2, 1.7, 0.2, 0.1, 2.2)],
    OK / "delta_rus.toml": [(-0.147, -0.176, -0.136)],
    OK / "tilt_heave_3ups.toml": [(0.3, -0.2, 2.2)],
    OK / "linear_delta_3puu.toml": [(-0.08, 0.05, -0.05)],
}
#: Prismatic-drive files whose joints stay within ±π/2 of the reference on its branch (the linear
#: Delta's rods turn by at most ~0.7 rad before a carriage would pass its platform joint): the
#: check is the agreement at a far pose.
NO_HALF_TURN = {OK / "linear_delta_3puu.toml"}
#: Files whose absolute model refuses inverse dynamics: the platform keeps 6 DOF under 3 drives
#: (pkm's task space holds the rest by an ideal constraint, absolute coordinates do not).
ABSOLUTE_REFUSES = {OK / "delta_rus.toml": TopologyError, OK / "tilt_heave_3ups.toml": TopologyError}
#: Files pkm itself refuses as robots (no platform/task, deficient actuation).
PKM_REFUSES = [OK / "closed_chain.toml", OK / "non_hybrid_limb.toml", OK / "units_m.toml", OK / "units_mm.toml"]


def one_line(exc) -> str:
    text = str(exc)
    assert text and "\n" not in text, text
    return text


def test_every_robot_file_is_covered():
    """A new robot file needs a pose here (or is refused by pkm): "every robot file" stays every."""
    files = set(ROBOTS.glob("*.toml")) | set(OK.glob("*.toml"))
    # REDUNDANT (conftest): the drive formulation refuses redundant actuation (tests/test_redundant.py)
    assert files == set(POSES) | set(PKM_REFUSES) | REDUNDANT
    for path in PKM_REFUSES:
        with pytest.raises(PkmError) as exc:
            pkm.load(path)
        one_line(exc.value)


@pytest.mark.parametrize("path", sorted(POSES), ids=lambda p: p.stem)
def test_both_layers_agree_beyond_half_pi(path):
    robot = pkm.load(path)
    model = load_spec(robot.spec)
    rotary = np.array([k == "R" for k in robot.actuator_kinds])
    for x in POSES[path]:
        x = np.array(x, dtype=float)
        xd, xdd = 0.2 * np.ones_like(x), np.ones_like(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error", pkm.BranchWarning)
            res = robot.inverse_dynamics(x, xd, xdd, limits=False)   # poses beyond the files' limits
        q_ik = ik_configuration(robot, model, res.joints, 0)
        assert np.max(np.abs(model.full.phi(q_ik))) <= 1e-10   # pkm's IK closes every joint of the file
        # beyond ±π/2: a revolute drive, and some joint of the file, turned that far from the reference
        # (the refusal of ABSOLUTE_REFUSES does not depend on the pose; the tilt-heave cannot turn so far)
        assert path in set(ABSOLUTE_REFUSES) | NO_HALF_TURN or branch_distance(model, q_ik, model.reference)[1] > np.pi / 2
        assert path in ABSOLUTE_REFUSES or not rotary.any() or np.max(np.abs(res.q_act[0][rotary])) > np.pi / 2
        peak = np.max(np.abs(res.tau[0]))
        args = (res.q_act[0], res.qd_act[0], res.qdd_act[0])
        if path in ABSOLUTE_REFUSES:
            with pytest.raises(ABSOLUTE_REFUSES[path]) as exc:
                model.solve_instant(*args, q_ik, on_branch=True)
            one_line(exc.value)
        else:
            tau = model.solve_instant(*args, q_ik, on_branch=True)[0]
            assert np.max(np.abs(tau - res.tau[0])) <= 1e-9 * peak, (tau, res.tau[0])
        # from the reference alone: pkm's torques, or one line saying why not
        try:
            tau = model.inverse_dynamics(*args)[0]
        except PkmError as exc:
            one_line(exc)
        else:
            assert np.max(np.abs(tau - res.tau[0])) <= 1e-9 * peak, (tau, res.tau[0])


def test_delta_drives_at_2_rad_are_not_assembled_at_2_minus_pi():
    """The issue's case: Newton from the reference to drives of 2 rad converges to the drive rows'
    false zero (arms at 2 − π); the assembly refuses it, as does the inverse dynamics from there,
    and a configuration whose drives are at θ is no solution for θ + π."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    model = load_spec(robot.spec)
    driven = model.driven([lambda t: (2.0, 0.0, 0.0)] * 3)
    with pytest.raises(AssemblyModeError, match="false zero") as exc:
        driven.assemble(model.reference)
    assert "drive:" in one_line(exc.value)
    with pytest.raises(AssemblyModeError) as exc:
        model.inverse_dynamics([2.0] * 3, [0.0] * 3, [0.0] * 3)
    one_line(exc.value)
    res = robot.inverse_dynamics(np.array(POSES[ROBOTS / "delta_3rr2rrr.toml"][0]), np.zeros(3), np.zeros(3))
    q = ik_configuration(robot, model, res.joints, 0)
    turned = res.q_act[0] + np.array([np.pi, 0.0, 0.0])
    assert np.max(np.abs(model.driven([lambda t, v=v: (v, 0.0, 0.0) for v in turned]).phi(q))) <= 1e-12
    with pytest.raises(AssemblyModeError, match="drive:limb1/1"):
        model.solve_instant(turned, np.zeros(3), np.zeros(3), q, on_branch=True)


def test_on_branch_refuses_a_configuration_of_other_drives():
    """The branch given is the configuration at other drives (0.2 rad away): the assembly moves
    off it to the configuration of the drives given, and that is refused."""
    robot = pkm.load(ROBOTS / "wrist_3rrr.toml")
    model = load_spec(robot.spec)
    a, b = (robot.inverse_dynamics(np.array(x), np.zeros(3), np.zeros(3)) for x in ((2.0, 0.0, 0.0), (2.2, 0.1, 0.0)))
    with pytest.raises(AssemblyModeError, match="another assembly mode than the given branch") as exc:
        model.solve_instant(b.q_act[0], np.zeros(3), np.zeros(3), ik_configuration(robot, model, a.joints, 0),
                            on_branch=True)
    one_line(exc.value)


# ----------------------------------------------------------------------------- false zeros
def _rotation_rows(kind):
    """Indices (0, 1, 2) of the rotation rows of a lock mask."""
    return [LOCK_ROWS.index(r) - 3 for r in LOCK_MASKS[kind[len("lock-"):]] if r.startswith("r")]


def _false_zero_axes(kind):
    """Half turns (axes in the marker frame) at which the joint's rows vanish although the joint
    does not allow them."""
    e = np.eye(3)
    if kind.startswith("lock-"):
        rows = _rotation_rows(kind)
        if len(rows) == 3:
            return [np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0), e[0]]
        return [e[k] for k in rows]   # 2 rows: about a row axis flips the free one; 1 row: about it
    return {"revolute": [e[0], e[1]], "cylindrical": [e[0]], "planar": [e[1]], "prismatic": [e[2], e[0]]}[kind]


FALSE_ZERO_KINDS = [f"lock-{m}" for m in LOCK_MASKS if any(r.startswith("r") for r in LOCK_MASKS[m])] + \
    ["revolute", "cylindrical", "prismatic", "planar"]


def _turned(rng, kind, axis, angle):
    """``(system, q)``: the joint assembled between two random bodies, body j then turned by
    ``angle`` about ``axis`` (marker-frame) through the joint point."""
    joint, (A, B), qa, qb = assembled(rng, kind)
    F = joint.marker_i.world_pose(qa)
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(F[:3, :3] @ axis * angle).as_matrix()
    T[:3, 3] = F[:3, 3] - T[:3, :3] @ F[:3, 3]
    system = System([A, B], [joint])
    return system, np.concatenate([qa, B.coordinates(T @ B.pose(qb))])


@pytest.mark.parametrize("kind", FALSE_ZERO_KINDS)
def test_assembly_never_converges_to_a_false_zero(kind):
    """At the half turn and 1° either side of it (Newton converges to the half turn from there) the
    assembly raises; the rows are zero there, so nothing else would notice."""
    rng = np.random.default_rng(zlib.crc32(kind.encode()))
    for axis in _false_zero_axes(kind):
        for angle in (np.pi, np.pi - np.radians(1.0), np.pi + np.radians(1.0)):
            system, q = _turned(rng, kind, axis, angle)
            if angle == np.pi:
                assert np.max(np.abs(system.phi(q))) <= 1e-12   # a zero of Φ indeed
            with pytest.raises(AssemblyModeError, match="false zero") as exc:
                system.assemble(q)
            assert system.joints[0].name in one_line(exc.value)


@pytest.mark.parametrize("kind", ["revolute", "cylindrical", "planar", "lock-revolute", "lock-cylindrical",
                                  "lock-plane_on_plane", "lock-homokinetic"])
def test_genuine_half_turns_are_kept(kind):
    """A half turn about the free axis (z; the homokinetic joint: a quarter bend about x) is a
    configuration of the joint: assembled without complaint."""
    rng = np.random.default_rng(zlib.crc32(kind.encode()))
    axis, angle = (np.eye(3)[0], np.pi / 2) if kind == "lock-homokinetic" else (np.eye(3)[2], np.pi)
    for turn in (angle, angle - 0.01, angle + 0.01):
        system, q = _turned(rng, kind, axis, turn)
        qa = system.assemble(q)
        assert system.false_zeros(qa) == {} and np.max(np.abs(qa - q)) <= 1e-12


# ----------------------------------------------------------------------------- the CLI

def _torques(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    cols = [k for k, name in enumerate(rows[0]) if name.startswith("tau_")]
    return np.array([[float(r[k]) for k in cols] for r in rows[1:]])


def test_reactions_cli_wrist_at_2_rad_gives_inverse_dynamics_torques(tmp_path):
    """The issue's command: reactions and inverse-dynamics agree at a 2 rad rotation; a file whose
    drives leave the platform free is one error line, not forces."""
    motion = ["--trajectory", "line", "--start-rotation", 2, 0, 0, "--end-rotation", 2, 0, 0]
    wrist = ROBOTS / "wrist_3rrr.toml"
    code, _, err = _run("reactions", wrist, *motion, "--samples", 3, "--out", tmp_path / "r.csv")
    assert code == 0, err
    code, _, err = _run("inverse-dynamics", wrist, *motion, "--out", tmp_path / "id.csv")
    assert code == 0, err
    tau_r, tau_id = _torques(tmp_path / "r.csv"), _torques(tmp_path / "id.csv")
    assert np.max(np.abs(tau_r - tau_id[0])) <= 1e-9 * np.max(np.abs(tau_id))
    code, out, err = _run("reactions", OK / "tilt_heave_3ups.toml", "--samples", 2, "--out", tmp_path / "t.csv")
    lines = [l for l in err.splitlines() if l.strip() and "%|" not in l]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("pkm: error: ") and "free" in lines[0], err
    assert not (tmp_path / "t.csv").exists()
