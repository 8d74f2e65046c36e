"""The platform's mobility against its task space (paper Sec. 5, eq. 80, 82, 94; δ_p): checked on load.

Every limb moves the platform with a twist ``V_p = L_(l) q̇_(l)`` (eq. 80, 94), so the platform twists
the mechanism admits are those admissible for every limb — the intersection of the limbs' twist
spaces, computed at the reference configuration from the loop-closure screws
(:func:`pkm.description.topology.mobility`); its dimension is the platform's DOF. The task space
controls the selected components ``V_t = P_pᵀ V_p`` (eq. 82). Three things can be wrong:

* fewer platform DOF than task coordinates, or a task component the platform cannot move in (the
  limbs that lack it are named): the task cannot be followed;
* **free motions**: admissible platform twists with ``P_pᵀ V_p = 0`` — motions no actuator controls
  (e.g. the rotations of a linear Delta whose platform joints were written as S instead of U
  joints). pkm's equations (eq. 94, ``F_(l) = L_p⁺ P_p``) would silently hold them by an ideal
  constraint that the robot does not have, and return believable forces for a platform that would
  collapse. That is an error unless the file declares the constraint (``ideal_constraint`` in
  ``[task]``, e.g. a tilt–heave platform whose unselected motions a passive guide holds).

The twists are body-fixed in the platform frame at the reference configuration, ``(ω; v)`` along
its axes, the axes of the task coordinates (:mod:`pkm.description.taskspace`).
"""

from __future__ import annotations

import numpy as np

from pkm.errors import RobotFileError, TopologyError, naming_file
from pkm.description.spec import TWIST_COMPONENTS, RobotSpec
from pkm.description.topology import Graph, Mobility, graph_mobility, limb_topologies, mobility

#: Relative tolerance of the rank decisions (as :func:`pkm.description.topology.mobility`).
TOL = 1e-9
_NAMES = {"wx": "x", "wy": "y", "wz": "z", "vx": "x", "vy": "y", "vz": "z"}


def _to_body(spec: RobotSpec) -> np.ndarray:
    """``Ad_A⁻¹`` (6×6) of the platform's reference pose ``A``: spatial twists → body-fixed ones."""
    A = spec.body(spec.platform).frame
    R, r = A[:3, :3], A[:3, 3]
    Ad_inv = np.zeros((6, 6))
    Ad_inv[:3, :3] = Ad_inv[3:, 3:] = R.T
    Ad_inv[3:, :3] = -R.T @ np.cross(np.eye(3), r)   # Ad_A⁻¹ = [[Rᵀ, 0], [−Rᵀ[r]×, Rᵀ]]; np.cross(I, r) = [r]×
    return Ad_inv


def _orth(M: np.ndarray) -> np.ndarray:
    """An orthonormal basis (6, k) of the columns of ``M`` (numerical rank, relative ``TOL``)."""
    if M.size == 0:
        return np.zeros((M.shape[0], 0))
    U, s, _ = np.linalg.svd(M, full_matrices=False)
    return U[:, : int(np.sum(s > TOL * max(1.0, s[0])))] if s.size else np.zeros((M.shape[0], 0))


def platform_twists(spec: RobotSpec, mob: Mobility | None = None) -> np.ndarray:
    """Orthonormal basis (6, δ) of the platform twists all limbs admit at the reference
    configuration, body-fixed (δ = the platform DOF)."""
    mob = mobility(spec) if mob is None else mob
    return _orth(_to_body(spec) @ mob.platform_twists)


def free_motions(spec: RobotSpec, mob: Mobility | None = None) -> np.ndarray:
    """Orthonormal basis (6, k) of the admissible platform twists that the task space does not see
    (``P_pᵀ V = 0``): the platform's motions no actuator controls, at the reference configuration.
    Its rows of the task's components are zero. Empty (6, 0) without a platform or a task."""
    if spec.task is None or spec.platform is None:
        return np.zeros((6, 0))
    B = platform_twists(spec, mob)
    P = spec.task.selection_matrix()
    if B.shape[1] == 0:
        return B
    _, s, vt = np.linalg.svd(P.T @ B)
    rank = int(np.sum(s > TOL * max(1.0, s[0]))) if s.size else 0
    F = _orth(B @ vt[rank:].T)
    F[[TWIST_COMPONENTS.index(c) for c in spec.task.components]] = 0.0
    return F


def describe(F: np.ndarray) -> str:
    """The motions spanned by the columns of ``F`` (6, k) in words: ``rotate about x, y, z``,
    ``translate along z``, ``rotate about the axis (0, 0, 1) through (0.1, 0, 0) m``, ``move along the
    screw …`` (a basis in reduced row-echelon form, pivots in (ωx, ωy, ωz, vx, vy, vz) order)."""
    rows = _rref(F.T)
    rot = [_NAMES[TWIST_COMPONENTS[i]] for r in rows if np.count_nonzero(r) == 1 for i in np.flatnonzero(r) if i < 3]
    lin = [_NAMES[TWIST_COMPONENTS[i]] for r in rows if np.count_nonzero(r) == 1 for i in np.flatnonzero(r) if i >= 3]
    parts = ([f"rotate about {', '.join(rot)}"] if rot else []) + ([f"translate along {', '.join(lin)}"] if lin else [])
    for r in rows:
        if np.count_nonzero(r) > 1:
            parts.append(_screw(r[:3], r[3:]))
    return " and ".join(parts)


def _screw(w: np.ndarray, v: np.ndarray) -> str:
    def vec(a):
        return "(" + ", ".join(f"{x:.4g}" for x in np.where(np.abs(a) < TOL, 0.0, a)) + ")"

    if not np.any(w):
        return f"translate along {vec(v / np.linalg.norm(v))}"
    n2 = float(w @ w)
    pitch, point = float(w @ v) / n2, np.cross(w, v) / n2   # the instantaneous screw axis: v + ω × p ∥ ω
    axis = f"the axis {vec(w / np.sqrt(n2))} through {vec(point)} m"
    if abs(pitch) <= TOL * max(1.0, float(np.linalg.norm(v))):
        return f"rotate about {axis}"
    return f"move along the screw about {axis} with pitch {pitch:.4g} m/rad"


def _rref(A: np.ndarray) -> list[np.ndarray]:
    """The nonzero rows of the reduced row-echelon form of ``A`` (entries below ``TOL`` set to 0)."""
    A = np.array(A, dtype=float)
    r = 0
    for c in range(A.shape[1]):
        if r == A.shape[0]:
            break
        p = r + int(np.argmax(np.abs(A[r:, c])))
        if abs(A[p, c]) <= TOL:
            continue
        A[[r, p]] = A[[p, r]]
        A[r] /= A[r, c]
        for i in range(A.shape[0]):
            if i != r:
                A[i] -= A[i, c] * A[r]
        r += 1
    A[np.abs(A) < TOL] = 0.0
    return list(A[:r])


@naming_file
def check_task_mobility(spec: RobotSpec, mob: Mobility | None = None) -> None:
    """Raise :class:`~pkm.errors.RobotFileError` (entry ``task``) unless the platform's mobility at the
    reference configuration matches the task space (module docstring): (1) the platform has at least
    as many DOF as task coordinates; (2) every task component is an admissible platform motion (its
    unit twist, body-fixed at the reference pose, in the span of the platform twists; the limbs whose
    own twist space lacks it are named); (3) no admissible platform motion is outside the task space
    (:func:`free_motions`; the message names them) unless ``ideal_constraint`` in ``[task]`` covers it.

    At a parallel (type-II or constraint) singularity the reference DOF exceed the generic ones, at a
    serial (type-I) one — a limb stretched or folded — they fall short; the messages say so, since
    pkm also starts inverse kinematics there.
    """
    if spec.task is None or spec.platform is None:
        return
    mob = mobility(spec) if mob is None else mob
    n_task = len(spec.task.components)
    comps = ", ".join(spec.task.components)
    coords = ", ".join(spec.task.coordinate_names())
    if mob.platform_dof is not None and mob.platform_dof < n_task:
        raise RobotFileError(spec.source, "task", f"{n_task} task coordinates ({comps}) "
                             f"but the platform has {mob.platform_dof} DOF at the reference configuration "
                             f"(mechanism DOF {mob.dof}): choose at most {mob.platform_dof} task components, or "
                             f"check the joints' axes and the loops; if the reference pose (all joint variables 0) "
                             f"is singular (a limb stretched or folded, axes aligned), describe the robot in a "
                             f"regular pose")
    if mob.platform_twists is None or mob.platform_twists.shape[1] == 0:
        return
    B = platform_twists(spec, mob)
    P = spec.task.selection_matrix()
    missing = [c for c, p in zip(spec.task.components, P.T) if np.linalg.norm(p - B @ (B.T @ p)) > 1e-8]
    if missing:
        ok = [c for c in spec.task.components if c not in missing]
        raise RobotFileError(spec.source, "task", f"the task components ({comps}) are not all motions the platform "
                             f"can make at the reference configuration (of these it can move along "
                             f"{', '.join(ok) if ok else 'none'} alone{_lacking(spec, missing)}): choose the "
                             f"components the mechanism allows, along the platform frame's axes, or check the "
                             f"joints' axes")
    F = free_motions(spec, mob)
    if F.shape[1] == 0:
        return
    held = spec.task.ideal
    if not held:
        raise RobotFileError(spec.source, "task", f"the platform can {describe(F)}, which the task space ({coords}) "
                             f"does not control: the limbs leave it {mob.platform_dof} DOF at the reference "
                             f"configuration; give the limbs joints that hold {'it' if F.shape[1] == 1 else 'them'} "
                             f"(e.g. U joints with their axes in order in place of S joints), or declare the ideal "
                             f"constraint that holds {'it' if F.shape[1] == 1 else 'them'} (ideal_constraint = true "
                             f"in [task]); a singular reference pose also shows extra motions: then describe the "
                             f"robot in a regular pose")
    E = np.eye(6)[:, [TWIST_COMPONENTS.index(c) for c in held]]
    rest = _orth(F - E @ (E.T @ F))
    if rest.shape[1]:
        raise RobotFileError(spec.source, "task.ideal_constraint", f"the ideal constraint holds {', '.join(held)}, "
                             f"but the platform can also {describe(rest)}, which neither the task space ({coords}) "
                             f"nor the constraint controls (the limbs leave it {mob.platform_dof} DOF at the "
                             f"reference configuration): list these components too, or give the limbs joints that "
                             f"hold them")


def _lacking(spec: RobotSpec, missing: list[str]) -> str:
    """``; limb 'leg2' cannot move it along x`` for the limbs whose own twist space at the reference
    configuration lacks a missing task component ("" when the limbs cannot be separated)."""
    try:
        limbs = limb_topologies(spec)
    except TopologyError:
        return ""
    Ad_inv, out = _to_body(spec), []
    for topo in limbs:
        graph = Graph(vertices=(spec.ground, *topo.bodies, spec.platform), joints=topo.joints)
        B = _orth(Ad_inv @ graph_mobility(graph, spec.platform, TOL)[3])
        lack = [c for c in missing if np.linalg.norm(np.eye(6)[TWIST_COMPONENTS.index(c)] @ (np.eye(6) - B @ B.T)) > 1e-8]
        if lack:
            out.append(f"limb {topo.name!r}'s twist space lacks {', '.join(lack)}")
    return ("; " + "; ".join(out)) if out else ""


def ideal_constraint_note(spec: RobotSpec, mob: Mobility | None = None) -> str | None:
    """The line ``pkm info`` prints for a file with ``ideal_constraint`` in ``[task]`` (None without it)."""
    if spec.task is None or spec.platform is None or not spec.task.ideal:
        return None
    F = free_motions(spec, mob)
    head = f"ideal constraint (task.ideal_constraint = {', '.join(spec.task.ideal)})"
    if F.shape[1] == 0:
        return f"{head}: declared, but the limbs hold every platform motion outside the task space: it holds nothing"
    return (f"{head}: holds the platform's motions that the limbs leave free ({describe(F)}); the forces are those "
            f"of the robot with this workless constraint")
