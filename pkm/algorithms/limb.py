"""Limb kinematics with loops resolved locally: partition, H, Ḣq̇, loop closure (paper eq. 43–47; Sec. 3.5–3.7, eq. 75–84).

A :class:`LimbModel` is one limb's spanning tree (platform included, platform last) with its
fundamental cycles, each closed by a cut joint (:mod:`pkm.algorithms.constraints`). For every loop the tree
variables are split into dependent ``y`` and independent ``q`` (eq. 43); the limb's generalized
coordinates ``q_(l)`` are the loops' ``q`` and the tree variables outside every loop (eq. 75), and

* ``θ̇_(l) = H_(l) q̇_(l)`` with ``H_(λ,l) = [−G_y⁻¹ G_q; I]`` per loop (eq. 44–45, 76–77);
* ``θ̈_(l) = H q̈ + Ḣ q̇`` with ``Ḣ q̇ = [−G_y⁻¹ (Ġθ̇); 0]`` (eq. 46–47; paper eq. 43–47 — only the
  product is needed, so ``Ġ`` and ``Ḣ`` are never formed);
* ``L_k = J_k H`` (eq. 78–80), ``L_p = J_p H`` the limb's compound platform Jacobian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.algorithms import constraints as cons
from pkm.algorithms.pivoting import pivoted_qr
from pkm.lie.interpret import python_kernels
from pkm.lie.linalg import condition_number
from pkm.errors import IKError, SingularityError, TopologyError, fmt_condition, naming_file
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, body_twists, forward_kinematics
from pkm.description.model import TreeModel, compile_tree
from pkm.description.spec import RobotSpec
from pkm.description.topology import LimbTopology

#: Default largest condition number of ``G_y``, a limb's ``L_p`` and ``J_IK`` (1-norm): beyond it a
#: result would keep fewer than ~10 of float64's 16 significant digits, and near a limb's fold
#: (the Delta's stretched arm) the condition number grows only like 1/√(distance to it), so a
#: larger limit would be reached only nanometres from the singularity (paper Sec. 3.4).
SINGULARITY_THRESHOLD = 1e6


@dataclass(frozen=True)
class Loop:
    """One fundamental cycle ``Λ_λ`` of a limb in the cut-joint formulation (paper Sec. 3.3).

    ``rows``: the independent rows of the cut joint's constraints (redundant rows removed, e.g.
    5 → 2 for the Delta's spatial parallelogram); ``cols``: the loop's tree variables
    ``θ_(λ,l)``; ``y``/``q``: dependent and independent ones (indices into the tree variables).
    """

    cut: cons.CutJoint
    rows: np.ndarray
    cols: np.ndarray
    y: np.ndarray
    q: np.ndarray

    @property
    def m(self) -> int:
        """Number of independent loop constraints ``m_(λ,l)``."""
        return len(self.rows)


@dataclass(frozen=True)
class LimbModel:
    """A limb's tree, loops and generalized coordinates; see the module docstring.

    ``q_index[c]`` is the tree-variable index of generalized coordinate ``c``; ``actuated`` the
    tree-variable indices of the actuated joints (all among ``q_index``); ``platform`` the tree
    index of the platform body.
    """

    name: str
    topology: LimbTopology
    tree: TreeModel
    loops: tuple[Loop, ...]
    q_index: np.ndarray
    platform: int
    actuated: np.ndarray

    # ---------------------------------------------------------------- counts (paper App. C)
    @property
    def n(self) -> int:
        """``n_l``: number of tree-joint variables (platform included)."""
        return self.tree.n

    @property
    def dof(self) -> int:
        """``δ_l``: DOF of the separated limb = number of generalized coordinates."""
        return len(self.q_index)

    @property
    def variables(self) -> int:
        """``N_l``: number of joint variables, cut joints included."""
        return sum(j.dof for j in self.topology.joints)

    @property
    def variable_names(self) -> tuple[str, ...]:
        return self.tree.variable_names

    # ---------------------------------------------------------------- kinematics
    def constraint_residual(self, theta: np.ndarray) -> np.ndarray:
        """The independent loop-closure residuals ``g`` of all loops, stacked (eq. 12)."""
        C = forward_kinematics(self.tree, theta)
        return self._residual(C)

    def _residual(self, C):
        if not self.loops:
            return np.zeros(0)
        return np.concatenate([cons.residual(lp.cut, C)[lp.rows] for lp in self.loops])

    def constraint_jacobian(self, theta: np.ndarray) -> np.ndarray:
        """``G`` (Σm × n_l) of all loops at ``theta`` (eq. 13, 32, 41)."""
        C = forward_kinematics(self.tree, theta)
        J = body_jacobians(self.tree, theta)
        if not self.loops:
            return np.zeros((0, self.n))
        return np.vstack([cons.jacobian(lp.cut, C, J)[lp.rows] for lp in self.loops])

    def H(self, theta: np.ndarray, singularity_threshold: float = SINGULARITY_THRESHOLD) -> np.ndarray:
        """``H_(l)(θ)`` (n_l × δ_l) with ``θ̇ = H q̇`` (eq. 44–45, 76–77).

        Raises :class:`SingularityError` when some ``G_y`` has a condition number above
        ``singularity_threshold``.
        """
        C = forward_kinematics(self.tree, theta)
        J = body_jacobians(self.tree, theta)
        return self._H(C, J, singularity_threshold)

    def _H(self, C, J, threshold):
        H = np.zeros((self.n, self.dof))
        col_of = {int(v): c for c, v in enumerate(self.q_index)}
        for v, c in col_of.items():
            H[v, c] = 1.0
        for lp in self.loops:
            G = cons.jacobian(lp.cut, C, J)[lp.rows]
            Gy = G[:, lp.y]
            _check_condition(Gy, threshold, f"limb {self.name!r}: loop closed by {lp.cut.name!r}: G_y")
            sol = -np.linalg.solve(Gy, G[:, lp.q])
            for j, v in enumerate(lp.q):
                H[lp.y, col_of[int(v)]] = sol[:, j]
        return H

    def Hdot_qd(self, theta: np.ndarray, theta_d: np.ndarray) -> np.ndarray:
        """``Ḣ q̇`` (n_l,) at an admissible velocity ``θ̇ = H q̇`` (eq. 46–47 via ``Ġθ̇``, paper eq. 43–47)."""
        C = forward_kinematics(self.tree, theta)
        J = body_jacobians(self.tree, theta)
        V = body_twists(self.tree, theta, theta_d)
        Ab = body_accelerations(self.tree, theta, theta_d, np.zeros(self.n))
        return self._Hdot_qd(C, J, V, Ab)

    def _Hdot_qd(self, C, J, V, Ab):
        out = np.zeros(self.n)
        for lp in self.loops:
            G = cons.jacobian(lp.cut, C, J)[lp.rows]
            gdot = cons.bias(lp.cut, C, V, Ab)[lp.rows]
            out[lp.y] = -np.linalg.solve(G[:, lp.y], gdot)
        return out

    def close_loops(self, theta: np.ndarray, tol: float = 1e-13, max_iter: int = 30) -> np.ndarray:
        """Solve the loop constraints for the dependent variables with ``q`` fixed (paper Sec. 3.5–3.7, eq. 75–84).

        Newton on ``y``: ``Δy = −G_y⁻¹ g(θ)`` per loop until ``max |g| ≤ tol``. Returns a new array;
        raises :class:`IKError` if the loops cannot be closed.
        """
        theta = np.array(theta, dtype=float)
        if not self.loops:
            return theta
        for it in range(max_iter + 1):
            C = forward_kinematics(self.tree, theta)
            g = self._residual(C)
            err = float(np.max(np.abs(g)))
            if err <= tol:
                return theta
            if it == max_iter or not np.isfinite(err):
                break
            J = body_jacobians(self.tree, theta)
            for lp in self.loops:
                G = cons.jacobian(lp.cut, C, J)[lp.rows]
                gl = cons.residual(lp.cut, C)[lp.rows]
                step = np.linalg.lstsq(G[:, lp.y], -gl, rcond=None)[0]
                theta[lp.y] += _limit(step)
        raise IKError(f"limb {self.name!r}: loop closure failed, residual {err:.3e} after {it} iterations",
                      limb=self.name, residual=err, iterations=it)

    def affine_closure(self, tol: float = 1e-13, samples: int = 8, amplitude: float = 0.3, seed: int = 0):
        """``(H, c)`` when the loop closure is affine in the generalized coordinates, else ``None``.

        For some loops the solution of the loop constraints is linear: the Delta's parallelogram
        has ``θ3 = θ5 = −θ4`` exactly (paper Sec. 3.3, Ex. 7–9, Ex. 8), so ``H_(l)`` is constant and
        ``θ_(l) = H q_(l) + c`` on the whole closed configuration space, with ``Ḣq̇ = 0``. The batch
        kernel then solves the limb's IK in ``q_(l)`` alone and skips ``G``, ``G_y⁻¹`` and ``Ġθ̇``
        (DESIGN §4, "a parallelogram loop has a constant H").

        The check is numerical: ``H`` and ``c = θ_0 − H q_0`` at the reference configuration, then at
        ``samples`` random ``q = q_0 + δ`` (``|δ_i| ≤ amplitude``, fixed seed) the affine prediction
        ``θ = H q + c`` must close every loop to ``max |g| ≤ tol`` and give the same ``H`` (to
        1e-9). A non-linear loop misses this by ``O(δ²)`` (≈ 1e-2), far above ``tol``. The kernel
        still evaluates the loop residual at every solution and fails loudly if it exceeds its
        tolerance, so a wrong answer here cannot go unnoticed. A limb without loops is affine
        (``H`` selects ``q``).
        """
        n, d = self.n, self.dof
        if not self.loops:
            H = np.zeros((n, d))
            H[self.q_index, np.arange(d)] = 1.0
            return H, np.zeros(n)
        try:
            theta0 = self.close_loops(np.zeros(n))
            H = self.H(theta0)
        except (IKError, SingularityError):
            return None
        q0 = theta0[self.q_index]
        c = theta0 - H @ q0
        rng = np.random.default_rng(seed)
        for _ in range(samples):
            theta = H @ (q0 + rng.uniform(-amplitude, amplitude, d)) + c
            if not float(np.max(np.abs(self.constraint_residual(theta)))) <= tol:
                return None
            try:
                Hs = self.H(theta)
            except SingularityError:
                return None
            if not float(np.max(np.abs(Hs - H))) <= 1e-9 * max(1.0, float(np.max(np.abs(H)))):
                return None
        return H, c

    def platform_jacobian(self, theta: np.ndarray) -> np.ndarray:
        """``L_p = J_p H`` (6 × δ_l), the compound forward-kinematics Jacobian (eq. 80)."""
        C = forward_kinematics(self.tree, theta)
        J = body_jacobians(self.tree, theta)
        return J[self.platform] @ self._H(C, J, np.inf)


#: Largest move of a joint variable in one Newton step of the IK (rad or m): :func:`_limit`.
MAX_NEWTON_STEP = 0.5


def _limit(step: np.ndarray, max_step: float = MAX_NEWTON_STEP) -> np.ndarray:
    """Scale a Newton step so that no joint moves more than ``max_step`` (rad or m) at once (``step``
    itself, not a copy, when it is within the limit)."""
    big = float(np.max(np.abs(step))) if step.size else 0.0
    return step * (max_step / big) if big > max_step else step


def _check_condition(M: np.ndarray, threshold: float, what: str) -> float:
    """Raise SingularityError when the 1-norm condition number of ``M`` (of ``MᵀM``, square-rooted,
    for a tall ``M``; :func:`pkm.lie.linalg.condition_number`) exceeds ``threshold``."""
    cond = condition_number(M)
    if cond > threshold:
        raise SingularityError(f"{what} is ill conditioned (condition number {fmt_condition(cond)} > {threshold:.1e})",
                               condition=cond, threshold=threshold)
    return cond


# ------------------------------------------------------------------------------ building
@naming_file
def build_limb(spec: RobotSpec, topo: LimbTopology, rank_tol: float = 1e-9) -> LimbModel:
    """Compile a limb: tree (platform last), cut joints, independent rows, partition y/q.

    Redundant constraint rows are removed by a rank-revealing (column-pivoted) QR of ``Gᵀ`` at the
    reference configuration (paper Sec. 3.3, eq. 42 ff., Remark 2). The partition comes from the file's
    ``independent`` list or, failing that, from a column-pivoted QR of the loop's ``G`` over the
    non-actuated loop variables, so actuated joints stay independent (paper Sec. 5, eq. 97–98).
    """
    bodies, _ = spec.expanded()
    by_name = {b.name: b for b in bodies}
    tree_bodies = [by_name[b] for b in topo.bodies] + [by_name[spec.platform]]
    tree = compile_tree(tree_bodies, topo.tree_joints, spec.ground)
    zero = np.zeros(tree.n)
    # A few evaluations at the reference configuration, run as Python (nothing to compile or load
    # from numba's cache); the pivoted QRs below pick the same partition whatever the rounding
    # (pkm.algorithms.pivoting: ties are broken by index, not by the last bit).
    with python_kernels():
        C = forward_kinematics(tree, zero)
        J = body_jacobians(tree, zero)

    joint_vars: dict[str, list[int]] = {}
    for i, jn in enumerate(tree.joint_names):
        joint_vars.setdefault(jn, []).append(i)

    wanted = _independent_from_file(spec, topo, tree)
    loops = []
    in_loops: set[int] = set()
    for cycle, cut_name in zip(topo.cycles, topo.cuts):
        cut = cons.cut_joint(next(j for j in topo.joints if j.name == cut_name), tree)
        cols = np.array(sorted(i for jn in cycle if jn != cut_name for i in joint_vars[jn]), dtype=np.int64)
        in_loops.update(int(c) for c in cols)
        with python_kernels():
            G = cons.jacobian(cut, C, J)[:, cols]
        rows = _independent_rows(G, rank_tol)
        m = len(rows)
        Gr = G[rows]
        if wanted is not None:
            q = np.array([c for c in cols if c in wanted], dtype=np.int64)
            y = np.array([c for c in cols if c not in wanted], dtype=np.int64)
            if len(y) != m or np.linalg.matrix_rank(Gr[:, [list(cols).index(c) for c in y]], tol=rank_tol) < m:
                names = ", ".join(tree.variable_names[c] for c in y)
                raise TopologyError(f"limb {topo.name!r}: the independent coordinates named in the file leave "
                                    f"{len(y)} dependent variables ({names}) for the {m} independent constraints of "
                                    f"the loop closed by {cut_name!r}, or they cannot be solved for")
        else:
            y, q = _partition(Gr, cols, tree.actuated, rank_tol, topo.name, cut_name)
        loops.append(Loop(cut=cut, rows=rows, cols=cols, y=y, q=q))

    if wanted is not None:
        q_index = np.array(sorted(wanted, key=wanted.get), dtype=np.int64)
        free = [i for i in range(tree.n) if i not in in_loops]
        missing = [tree.variable_names[i] for i in free if i not in wanted]
        if missing:
            raise TopologyError(f"limb {topo.name!r}: the file's independent coordinates omit {', '.join(missing)}, "
                                "which belong to no loop and so must be independent")
    else:
        q_index = np.array([int(v) for lp in loops for v in lp.q]
                           + [i for i in range(tree.n) if i not in in_loops], dtype=np.int64)
    actuated = np.flatnonzero(tree.actuated).astype(np.int64)
    dependent = {int(v) for lp in loops for v in lp.y}
    bad = [tree.variable_names[a] for a in actuated if a in dependent]
    if bad:
        raise TopologyError(f"limb {topo.name!r}: actuated joint variables {', '.join(bad)} must be independent coordinates")
    return LimbModel(name=topo.name, topology=topo, tree=tree, loops=tuple(loops), q_index=q_index,
                     platform=tree.body_index(spec.platform), actuated=actuated)


def _independent_from_file(spec: RobotSpec, topo: LimbTopology, tree: TreeModel) -> dict[int, int] | None:
    """Tree-variable index → position in q_(l), from the RL's ``independent`` list (if any)."""
    if spec.limb is None or not spec.limb.independent or topo.name not in {m.name for m in spec.limb.mounts}:
        return None
    prefix = topo.name + "/"
    out = {}
    for pos, name in enumerate(spec.limb.independent):
        full = prefix + name
        if full not in tree.variable_names:
            raise TopologyError(f"limb {topo.name!r}: independent coordinate {name!r} is not a tree-joint variable "
                                f"(cut joints have none; tree variables: {', '.join(tree.variable_names)})")
        out[tree.variable_names.index(full)] = pos
    return out


def _independent_rows(G: np.ndarray, tol: float) -> np.ndarray:
    """Row indices of a maximal independent set of rows of ``G`` (pivoted QR of ``Gᵀ``)."""
    if G.size == 0:
        return np.zeros(0, dtype=np.int64)
    d, piv = pivoted_qr(G.T)
    rank = int(np.sum(d > tol * max(1.0, d[0]))) if d.size else 0
    return np.sort(piv[:rank]).astype(np.int64)


def _partition(G, cols, actuated, tol, limb, cut):
    """Dependent/independent split of a loop's variables by column-pivoted QR (prefer actuated as q)."""
    m = G.shape[0]
    order = [k for k in range(len(cols)) if not actuated[cols[k]]] + [k for k in range(len(cols)) if actuated[cols[k]]]
    cand = [k for k in order if not actuated[cols[k]]]
    d, piv = pivoted_qr(G[:, cand])
    if d.size < m or np.sum(d > tol * max(1.0, d[0] if d.size else 1.0)) < m:
        raise TopologyError(f"limb {limb!r}: the loop closed by {cut!r} cannot be solved for non-actuated variables "
                            "(its constraints need an actuated joint as dependent variable)")
    ypos = sorted(cand[p] for p in piv[:m])
    y = np.array([cols[k] for k in ypos], dtype=np.int64)
    q = np.array([c for c in cols if c not in set(y)], dtype=np.int64)
    return y, q
