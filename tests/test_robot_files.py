"""The 3R[2US] Delta and the IRSBot-2 robot files (paper Ex. 2, 5; Ex. 3, 6, 9, 11; eq. 55–57; Sec. 9 and Ex. 3).

Both files are checked for what the paper's topology requires: variable and cycle counts, DOF,
and -- from the loop-closure screws at the reference configuration, assembled here from
:class:`pkm.description.topology.Graph` and :func:`pkm.description.topology.joint_screws` -- the exact space of admissible
platform twists: the three translations for the Delta, the translations along x and z for the
IRSBot-2.  Geometry (where the joints are, equal rods/bars, parallelograms) is checked directly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pkm.description.model import limb_tree
from pkm.description.robotfile import load_spec
from pkm.description.spec import TWIST_COMPONENTS
from pkm.description.topology import Graph, joint_screws, mobility

from conftest import ROBOTS

DELTA = ROBOTS / "delta_3r2us.toml"
IRSBOT = ROBOTS / "irsbot2.toml"
Y = np.array([0.0, 1.0, 0.0])
Z = np.array([0.0, 0.0, 1.0])


# ====================================================================== helpers
def rot(axis, angle) -> np.ndarray:
    """Rotation matrix about the unit vector ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def closure(graph: Graph, platform: str):
    """Stacked loop-closure matrix G (6γ × N) and platform spatial-twist map P (6 × N).

    As :func:`pkm.description.topology.mobility`: every fundamental cycle gives ``Σ σ_i Y_i η̇_i = 0`` with the
    spatial screws of the joints' 1-DOF axes; the platform twist is the sum along its tree path.
    """
    screws = [joint_screws(j) for j in graph.joints]
    offsets = np.cumsum([0] + [s.shape[0] for s in screws])
    cycles = graph.fundamental_cycles()
    G = np.zeros((6 * len(cycles), offsets[-1]))
    for c, cyc in enumerate(cycles):
        for k, sigma in cyc:
            G[6 * c: 6 * c + 6, offsets[k]: offsets[k + 1]] = sigma * screws[k].T
    idx = graph._index()
    P = np.zeros((6, offsets[-1]))
    for k, u, _ in graph.path_to_ground(idx[platform]):
        sigma = +1 if idx[graph.joints[k].parent] == u else -1
        P[:, offsets[k]: offsets[k + 1]] = sigma * screws[k].T
    return G, P, len(cycles)


def rank(A: np.ndarray, tol: float = 1e-9) -> int:
    s = np.linalg.svd(A, compute_uv=False) if A.size else np.zeros(0)
    return int(np.sum(s > tol * max(1.0, s[0]))) if s.size else 0


def null_space(A: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    _, s, vt = np.linalg.svd(A)
    r = int(np.sum(s > tol * max(1.0, s[0])))
    return vt[r:].T


def platform_twists(graph: Graph, platform: str) -> np.ndarray:
    """Orthonormal basis (6 × r) of the platform's admissible spatial twists."""
    G, P, _ = closure(graph, platform)
    T = P @ null_space(G)
    u, s, _ = np.linalg.svd(T, full_matrices=False)
    return u[:, s > 1e-9 * max(1.0, s[0])]


def assert_spans_exactly(basis: np.ndarray, components: list[str], tol: float = 1e-9):
    """The column space of ``basis`` is exactly span{e_c : c in components} (projectors agree)."""
    E = np.zeros((6, len(components)))
    for col, c in enumerate(components):
        E[TWIST_COMPONENTS.index(c), col] = 1.0
    assert basis.shape[1] == len(components)
    assert np.abs(basis @ basis.T - E @ E.T).max() < tol


def pkm_graph(spec) -> Graph:
    return Graph.from_spec(spec)


def limb_graph(spec, mount: str) -> Graph:
    """The separated limb ``mount``: its bodies and joints plus the platform (no other limb)."""
    bodies, joints = spec.expanded()
    prefix = f"{mount}/"
    names = [b.name for b in bodies if b.name.startswith(prefix)] + [spec.platform]
    return Graph(vertices=(spec.ground, *names), joints=tuple(j for j in joints if j.name.startswith(prefix)))


def loop_matrix(spec, mount: str, signed: list[tuple[str, int]]) -> np.ndarray:
    """Columns σ·Y of the named RL joints of limb ``mount`` (cut-body loop matrix, eq. 52)."""
    return np.hstack([sigma * joint_screws(spec.joint(f"{mount}/{name}")).T for name, sigma in signed])


def cut_joint_constraints(spec, mount: str, tree: list[tuple[str, int]], cut: str) -> np.ndarray:
    """The cut-joint constraint Jacobian of one loop: the tree columns modulo the cut joint's screws.

    ``Σ σ_i Y_i θ̇_i ∈ span(Y_cut)`` ⇔ ``Qᵀ G_tree θ̇ = 0`` with Q an orthonormal basis of the
    complement of span(Y_cut): (6 − dof_cut) constraint rows.
    """
    S = joint_screws(spec.joint(f"{mount}/{cut}")).T
    u, _, _ = np.linalg.svd(S)
    Q = u[:, S.shape[1]:]
    return Q.T @ loop_matrix(spec, mount, tree)


# ====================================================================== 3R[2US] Delta
@pytest.fixture(scope="module")
def delta():
    return load_spec(DELTA)


def test_delta_loads_with_the_papers_labels(delta):
    limb = delta.limb
    assert [b.name for b in limb.bodies] == ["arm", "rodA", "rodB"]
    assert {j.name: j.type for j in limb.joints} == {"1": "R", "2": "U", "3": "S", "4": "S", "5": "U"}
    assert [j.name for j in limb.joints if j.cut] == ["5"]
    assert [j.name for j in limb.joints if j.actuated] == ["1"]
    assert limb.independent == ()
    assert [m.name for m in limb.mounts] == ["limb1", "limb2", "limb3"]
    assert delta.task.components == ("vx", "vy", "vz")


def test_delta_copies_the_3rr2rrr_data(delta):
    ref = load_spec(ROBOTS / "delta_3rr2rrr.toml")
    for key in ("R0", "Rp", "a", "b", "c", "d", "h"):
        assert delta.parameters[key] == pytest.approx(ref.parameters[key])
    assert delta.trajectory["type"] == ref.trajectory["type"] == "sine"
    for k in ("center", "amplitude", "period", "duration", "dt"):
        assert np.allclose(delta.trajectory[k], ref.trajectory[k])
    assert np.allclose(delta.gravity, ref.gravity)
    for m, mr in zip(delta.limb.mounts, ref.limb.mounts):
        assert np.allclose(m.base, mr.base) and np.allclose(m.platform, mr.platform)
    assert delta.body("platform").mass == pytest.approx(ref.body("platform").mass)
    assert delta.body("limb1/arm").mass == pytest.approx(ref.body("limb1/arm").mass)


def test_delta_mobility(delta):
    """33 variables, γ = L(γ_l + 1) − 1 = 5 cycles, DOF 3, platform DOF 3."""
    m = mobility(delta)
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (33, 5, 3, 3)
    assert m.constraint_rank == 30


@pytest.mark.parametrize("override", [{"a": 300}, {"b": 120, "c": 900}, {"R0": 200, "Rp": 50}])
def test_delta_mobility_at_perturbed_geometries(override):
    m = mobility(load_spec(DELTA, parameters=override))
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (33, 5, 3, 3)


def test_delta_limb_counts(delta):
    """N_l = 11, n_l = 9 (the U cut joint removes 2), γ_l = 1, δ_l = 5; the U cut joint's 4
    constraints are independent."""
    assert sum(j.dof for j in delta.limb.joints) == 11
    tree = limb_tree(delta, "limb1")
    assert tree.n == 9
    assert sorted(v.split("/")[1].split(".")[0] for v in tree.variable_names) == ["1", "2", "2", "3", "3", "3", "4", "4", "4"]
    # canonical relabelling of paper Ex. 2, 5: arm, rod A, platform, rod B
    assert [n for n, v in zip(tree.body_names, tree.virtual) if not v] == ["limb1/arm", "limb1/rodA", "platform", "limb1/rodB"]
    for mount in ("limb1", "limb2", "limb3"):
        g = limb_graph(delta, mount)
        G, _, cycles = closure(g, delta.platform)
        assert cycles == 1
        assert 11 - rank(G) == 5
        # loop arm -2-> rodA -4-> platform <-3- rodB <-5- arm: cut U joint 5 gives 4 constraints
        C = cut_joint_constraints(delta, mount, [("2", 1), ("4", 1), ("3", -1)], "5")
        assert C.shape == (4, 8) and rank(C) == 4


def test_delta_platform_twists_are_the_three_translations(delta):
    assert_spans_exactly(platform_twists(pkm_graph(delta), delta.platform), ["vx", "vy", "vz"])


def test_delta_separated_limb_is_not_translational(delta):
    """Each limb alone leaves 5 platform DOF (the three limbs' constraint couples lock rotation)."""
    basis = platform_twists(limb_graph(delta, "limb1"), delta.platform)
    assert basis.shape[1] == 5


def test_delta_geometry(delta):
    p = delta.parameters
    R0, Rp, a, b, c = (p[k] * 1e-3 for k in ("R0", "Rp", "a", "b", "c"))
    d, h = (p[k] * 1e-3 for k in ("d", "h"))
    J = {j.name: j for j in delta.limb.joints}
    B = {x.name: x for x in delta.limb.bodies}
    U_A, U_B = np.array([-R0 - a, -b / 2, 0]), np.array([-R0 - a, b / 2, 0])
    S_A, S_B = np.array([-Rp, -b / 2, -h]), np.array([-Rp, b / 2, -h])
    assert np.allclose(J["1"].point, [-R0, 0, 0])
    assert np.allclose(J["2"].point, U_A) and np.allclose(J["5"].point, U_B)
    assert np.allclose(J["4"].point, S_A) and np.allclose(J["3"].point, S_B)
    # rods: from their U centre to their S centre, both of length c, parallel (a parallelogram)
    for rod, u, s in (("rodA", J["2"], J["4"]), ("rodB", J["5"], J["3"])):
        shape = B[rod].shape
        assert np.allclose(shape["from"], u.point) and np.allclose(shape["to"], s.point)
        assert shape["length"] == pytest.approx(c)
        assert np.linalg.norm(s.point - u.point) == pytest.approx(c)
    assert np.allclose(J["4"].point - J["2"].point, J["3"].point - J["5"].point)
    assert np.allclose(J["2"].point - J["5"].point, J["4"].point - J["3"].point)
    # the arm cylinder runs from the joint-1 axis to the arm tip, midway between the U centres
    arm = B["arm"].shape
    assert np.allclose(arm["from"], J["1"].point) and np.allclose(arm["to"], (U_A + U_B) / 2)
    assert arm["radius"] == pytest.approx(0.015)
    # rods are parents of their S joints, the arm of its U joints
    assert (J["2"].parent, J["2"].child, J["5"].parent, J["5"].child) == ("arm", "rodA", "arm", "rodB")
    assert (J["4"].parent, J["3"].parent) == ("rodA", "rodB")
    assert J["4"].child == J["3"].child == "platform"
    # the mounted limbs sit 120° apart
    for mount, angle in (("limb2", 2 * np.pi / 3), ("limb3", -2 * np.pi / 3)):
        assert np.allclose(delta.joint(f"{mount}/4").point, rot(Z, angle) @ S_A)
        assert np.allclose(delta.joint(f"{mount}/5").point, rot(Z, angle) @ U_B)
    assert np.allclose(delta.body("platform").frame[:3, 3], [0, 0, -h])
    assert d == pytest.approx(a + R0 - Rp) and h == pytest.approx(np.sqrt(c * c - d * d))


def test_delta_joint_axes(delta):
    p = delta.parameters
    c, d, h = p["c"], p["d"], p["h"]
    n, r = np.array([h, 0, d]) / c, np.array([d, 0, -h]) / c
    J = {j.name: j for j in delta.limb.joints}
    assert np.allclose(J["1"].axes, [[0, -1, 0]])
    for u in ("2", "5"):
        assert np.allclose(J[u].axes, [[0, -1, 0], n])  # arm-fixed −y', rod-fixed n
    for s in ("3", "4"):
        assert np.allclose(J[s].axes, [n, r, [0, -1, 0]])
        assert np.allclose(J[s].axes @ J[s].axes.T, np.eye(3))  # orthonormal at the reference
    # n is perpendicular to the rods and to y'
    rod = J["4"].point - J["2"].point
    assert abs(n @ rod) < 1e-12 and abs(n @ Y) < 1e-12


def test_delta_s_joints_stay_far_from_gimbal_lock(delta):
    """In the PKM's motion the platform does not rotate and a rod turns as Rot(joint 1 + U axis 1)
    Rot(U axis 2); its S joint must then realise the inverse rotation.  With axes (e1, e2, e3) the
    middle angle q2 satisfies |sin q2| = |e1 · R e3|: it must stay 0 for rod swings up to ±60°."""
    J = {j.name: j for j in delta.limb.joints}
    rng = np.random.default_rng(1)
    for s_name, u_name in (("4", "2"), ("3", "5")):
        e1, _, e3 = J[s_name].axes
        u1, u2 = J[u_name].axes
        assert np.allclose(u1, J["1"].axes[0])
        for phi, beta in rng.uniform(-np.pi / 3, np.pi / 3, size=(50, 2)):
            R_rod = rot(u1, phi) @ rot(u2, beta)
            R_s = R_rod.T  # rod → platform, platform orientation fixed
            assert abs(e1 @ R_s @ e3) < 1e-12


# ====================================================================== IRSBot-2
@pytest.fixture(scope="module")
def irs():
    return load_spec(IRSBOT)


def test_irsbot_loads_with_the_papers_labels(irs):
    limb = irs.limb
    assert [b.name for b in limb.bodies] == ["crank1", "elbow", "crank3", "barA", "barB"]
    types = {j.name: j.type for j in limb.joints}
    assert types == {"1": "R", "2": "R", "3": "R", "4": "U", "5": "U", "6": "U", "7": "R", "8": "U"}
    assert [j.name for j in limb.joints if j.cut] == ["7", "8"]
    assert [j.name for j in limb.joints if j.actuated] == ["1"]
    ends = {j.name: (j.parent, j.child) for j in limb.joints}
    assert ends == {"1": ("base", "crank1"), "2": ("crank1", "elbow"), "3": ("base", "crank3"),
                    "4": ("elbow", "barA"), "5": ("elbow", "barB"), "6": ("barA", "platform"),
                    "7": ("crank3", "elbow"), "8": ("barB", "platform")}
    assert irs.task.kind == "select" and irs.task.components == ("vx", "vz")
    assert np.allclose(irs.gravity, [0, 0, -9.81])
    assert "illustrative" in IRSBOT.read_text().lower()


def test_irsbot_mounts_mirror_limb_1_about_the_vertical(irs):
    m1, m2 = irs.limb.mounts
    assert (m1.name, m2.name) == ("limb1", "limb2")
    assert np.allclose(m1.base, np.eye(4))
    assert np.allclose(m2.base[:3, :3], np.diag([-1.0, -1.0, 1.0])) and np.allclose(m2.base[:3, 3], 0)
    assert irs.joint("limb1/1").point[0] > 0 > irs.joint("limb2/1").point[0]
    for name in "12345678":
        j1, j2 = irs.joint(f"limb1/{name}"), irs.joint(f"limb2/{name}")
        assert np.allclose(j2.point, rot(Z, np.pi) @ j1.point)
        assert np.allclose(j2.axes, j1.axes @ rot(Z, np.pi).T)


def test_irsbot_mobility(irs):
    """24 variables, γ = L(γ_l + 1) − 1 = 5 cycles, DOF 2, platform DOF 2."""
    m = mobility(irs)
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (24, 5, 2, 2)
    assert m.constraint_rank == 22


@pytest.mark.parametrize("override", [{"beta": 15}, {"beta": 50, "bw": 80}, {"a": 350, "l": 1000, "Rp": 80},
                                      {"p": 60, "R0": 150}])
def test_irsbot_mobility_at_perturbed_geometries(override):
    spec = load_spec(IRSBOT, parameters=override)
    m = mobility(spec)
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (24, 5, 2, 2)
    assert_spans_exactly(platform_twists(pkm_graph(spec), spec.platform), ["vx", "vz"])


def test_irsbot_needs_a_spatial_parallelogram():
    """With the bar spacing along y (beta = 90°) b lies in the plane of w and y: the 4U loop's
    constraints become dependent and the platform gains motions -- the tilt is what works."""
    m = mobility(load_spec(IRSBOT, parameters={"beta": 90}))
    assert m.platform_dof > 2


def test_irsbot_limb_counts(irs):
    """N_l = 12 (4 R + 4 U), n_l = 9, γ_l = 2, δ_l = 3; canonical order crank1, elbow, crank3, barA,
    barB, platform (1…6)."""
    assert sum(j.dof for j in irs.limb.joints) == 12
    tree = limb_tree(irs, "limb1")
    assert tree.n == 9
    assert [n for n, v in zip(tree.body_names, tree.virtual) if not v] == [
        "limb1/crank1", "limb1/elbow", "limb1/crank3", "limb1/barA", "limb1/barB", "platform"]
    assert tree.variable_names == tuple(f"limb1/{v}" for v in ("1", "2", "3", "4.1", "4.2", "5.1", "5.2", "6.1", "6.2"))
    assert list(tree.actuated) == [True] + [False] * 8
    for mount in ("limb1", "limb2"):
        G, _, cycles = closure(limb_graph(irs, mount), irs.platform)
        assert cycles == 2
        assert 12 - rank(G) == 3


def test_irsbot_loop_constraints_are_regular(irs):
    """Λ1 (eq. 55): G1 = (S1, S2, −S3, S7), rank 3 (planar), cut R joint 7 → 2 independent rows, δ = 1.
    Λ2 (eq. 56–57): cut U joint 8 → a 4×6 constraint Jacobian of rank 4, δ = 2, and G_y regular for
    the paper's y = (θ4,1, θ4,2, θ5,1, θ5,2), q = (θ6,1, θ6,2) (Ex. 9, 16)."""
    for mount in ("limb1", "limb2"):
        G1 = loop_matrix(irs, mount, [("1", 1), ("2", 1), ("3", -1), ("7", 1)])
        assert rank(G1) == 3
        C1 = cut_joint_constraints(irs, mount, [("1", 1), ("2", 1), ("3", -1)], "7")
        assert C1.shape == (5, 3) and rank(C1) == 2
        # loop elbow -4-> barA -6-> platform <-8- barB <-5- elbow
        G2 = loop_matrix(irs, mount, [("4", 1), ("6", 1), ("8", -1), ("5", -1)])
        assert G2.shape == (6, 8) and rank(G2) == 6
        C2 = cut_joint_constraints(irs, mount, [("4", 1), ("5", -1), ("6", 1)], "8")
        assert C2.shape == (4, 6) and rank(C2) == 4
        Gy = C2[:, :4]  # columns θ4,1 θ4,2 θ5,1 θ5,2
        assert np.linalg.cond(Gy) < 1e3


def test_irsbot_platform_twists_are_exactly_vx_vz(irs):
    assert_spans_exactly(platform_twists(pkm_graph(irs), irs.platform), ["vx", "vz"])


def test_irsbot_separated_limb_twists(irs):
    """A limb alone: x-z translations plus one rotation, about an axis along the bar spacing b;
    no pure translation along y."""
    b = irs.joint("limb1/4").point - irs.joint("limb1/5").point
    for mount in ("limb1", "limb2"):
        basis = platform_twists(limb_graph(irs, mount), irs.platform)
        assert basis.shape[1] == 3
        proj = basis @ basis.T
        for comp in ("vx", "vz"):
            e = np.eye(6)[TWIST_COMPONENTS.index(comp)]
            assert np.allclose(proj @ e, e, atol=1e-9)
        e_vy = np.eye(6)[TWIST_COMPONENTS.index("vy")]
        assert np.linalg.norm(proj @ e_vy) < 0.9  # vy is not admissible
        omega = basis[:3]
        assert rank(omega) == 1
        u, _, _ = np.linalg.svd(omega)
        b_l = b if mount == "limb1" else rot(Z, np.pi) @ b
        assert abs(abs(u[:, 0] @ unit(b_l)) - 1.0) < 1e-9


def test_irsbot_geometry(irs):
    p = {k: v * 1e-3 if k != "beta" else v for k, v in irs.parameters.items()}
    R0, a, l, Rp, bw, d, h = (p[k] for k in ("R0", "a", "l", "Rp", "bw", "d", "h"))
    J = {j.name: j for j in irs.limb.joints}
    B = {x.name: x for x in irs.limb.bodies}
    w, n = np.array([-d, 0, -h]) / l, np.array([h, 0, -d]) / l
    beta = np.radians(irs.parameters["beta"])
    half_b = bw / 2 * (np.cos(beta) * n + np.sin(beta) * Y)
    A1, B1 = np.array([R0, 0, 0]), np.array([R0 + a, 0, 0])
    # proximal parallelogram: equal cranks, equal and parallel sides, all axes along +y
    assert np.allclose(J["1"].point, A1) and np.allclose(J["2"].point, B1)
    assert np.allclose(J["7"].point - J["3"].point, B1 - A1)
    assert np.linalg.norm(J["3"].point - A1) == pytest.approx(p["p"])
    for name in "1237":
        assert np.allclose(J[name].axes, [Y])
    for crank, j0, j1 in (("crank1", "1", "2"), ("crank3", "3", "7")):
        assert np.allclose(B[crank].shape["from"], J[j0].point) and np.allclose(B[crank].shape["to"], J[j1].point)
        assert B[crank].shape["length"] == pytest.approx(a)
    # distal spatial parallelogram
    E_A, E_B, P_A, P_B = (J[k].point for k in "4568")
    assert np.allclose(E_A, B1 + half_b) and np.allclose(E_B, B1 - half_b)
    assert np.allclose(P_A, [Rp, 0, -h] + half_b) and np.allclose(P_B, [Rp, 0, -h] - half_b)
    assert np.allclose(P_A - E_A, P_B - E_B)  # parallel bars
    assert np.linalg.norm(P_A - E_A) == pytest.approx(l)
    assert abs(half_b @ Y) > 0.2 * np.linalg.norm(half_b)  # spatial: tilted out of the x-z plane
    for bar, e, q in (("barA", E_A, P_A), ("barB", E_B, P_B)):
        assert np.allclose(B[bar].shape["from"], e) and np.allclose(B[bar].shape["to"], q)
        assert B[bar].shape["length"] == pytest.approx(l)
    # U axes: upper (y, w), lower (n, y); each pair perpendicular
    for name in "45":
        assert np.allclose(J[name].axes, [Y, w])
    for name in "68":
        assert np.allclose(J[name].axes, [n, Y])
    for name in "4568":
        assert abs(J[name].axes[0] @ J[name].axes[1]) < 1e-12
    # platform of plausible mass at (0, 0, -h)
    plat = irs.body("platform")
    assert np.allclose(plat.frame[:3, 3], [0, 0, -h])
    assert 0.5 <= plat.mass <= 1.0


# ---------------------------------------------------------------- IRSBot-2 away from the reference
def irsbot_pose(irs, X: float, Zp: float) -> dict:
    """Body displacements (R, t) (x_now = R x_ref + t) of the PKM with the platform translated to
    (X, 0, Zp): per limb, the crank angle θ (about +y) and the bar swing φ (about y) from the planar
    inverse kinematics, elbow-out branch; elbow and platform translate.  ``poses["limbN/angles"]``
    holds (θ, φ)."""
    J = {j.name: j for j in irs.limb.joints}
    A1, A3, B1 = J["1"].point, J["3"].point, J["2"].point
    E_A, E_B, P_A = J["4"].point, J["5"].point, J["6"].point
    a, l = np.linalg.norm(B1 - A1), np.linalg.norm(P_A - E_A)
    assert np.allclose(unit(B1 - A1), [1, 0, 0])  # crank 1 along +x' at the reference
    C_e, bar0 = (E_A + E_B) / 2, P_A - E_A
    shift = np.array([X, 0.0, Zp]) - irs.body(irs.platform).frame[:3, 3]
    poses = {irs.platform: (np.eye(3), shift)}
    for mount in irs.limb.mounts:
        S = mount.base[:3, :3]
        # crank tip B1(θ) = A1 + a (cos θ, 0, −sin θ) must lie at distance l from Q (x-z plane)
        D = (C_e + bar0 + S.T @ shift) - (C_e - B1) - A1
        Dn, alpha = np.hypot(D[0], D[2]), np.arctan2(D[2], D[0])
        c = (Dn**2 + a**2 - l**2) / (2 * a * Dn)
        assert abs(c) < 1, "platform position not reachable"
        th = max((-alpha + s * np.arccos(c) for s in (1, -1)), key=np.cos)  # elbow out
        de = rot(Y, th) @ (B1 - A1) - (B1 - A1)
        bar = D - a * np.array([np.cos(th), 0.0, -np.sin(th)])
        phi = np.arctan2(bar0[2], bar0[0]) - np.arctan2(bar[2], bar[0])
        Rb = rot(Y, phi)
        assert np.allclose(Rb @ bar0, bar)
        local = {
            "crank1": (rot(Y, th), A1 - rot(Y, th) @ A1),
            "crank3": (rot(Y, th), A3 - rot(Y, th) @ A3),
            "elbow": (np.eye(3), de),
            "barA": (Rb, E_A + de - Rb @ E_A),
            "barB": (Rb, E_B + de - Rb @ E_B),
        }
        for body, (R, t) in local.items():  # to the world: conjugate by the mount rotation S
            poses[f"{mount.name}/{body}"] = (S @ R @ S.T, S @ t)
        poses[f"{mount.name}/angles"] = (np.array([th, phi]), None)
    return poses


def displaced_joints(irs, poses) -> tuple:
    """The PKM's joints at the displaced configuration; checks that every joint still closes."""
    ident = (np.eye(3), np.zeros(3))
    out = []
    for j in irs.expanded()[1]:
        Rp_, tp = poses.get(j.parent, ident)
        Rc, tc = poses.get(j.child, ident)
        point = Rc @ j.point + tc
        assert np.allclose(Rp_ @ j.point + tp, point, atol=1e-9), j.name
        if j.type == "U":
            axes = np.array([Rp_ @ j.axes[0], Rc @ j.axes[1]])
        else:
            assert np.allclose(Rp_ @ j.axes[0], Rc @ j.axes[0])
            axes = j.axes @ Rp_.T
        out.append(replace(j, point=point, axes=axes))
    return tuple(out)


_H = 0.7851114570556209  # h of robots/irsbot2.toml (checked in test_irsbot_workspace_box)
#: Corners and inner points of the 1 m × 0.3 m workspace box x ∈ [−0.5, 0.5], z ∈ [−h − 0.25, −h + 0.05].
WORKSPACE = [(-0.5, -_H - 0.25), (0.5, -_H - 0.25), (-0.5, -_H + 0.05), (0.5, -_H + 0.05),
             (0.0, -_H - 0.1), (0.3, -_H + 0.0), (-0.2, -_H - 0.2)]


def test_irsbot_workspace_box(irs):
    assert irs.parameters["h"] * 1e-3 == pytest.approx(_H)


@pytest.mark.parametrize("X,Zp", WORKSPACE)
def test_irsbot_stays_translational_over_the_workspace(irs, X, Zp):
    """At corners of the 1 m × 0.3 m workspace the translated configuration closes every joint, the
    platform's admissible twists are still exactly {vx, vz}, the crank angles stay away from the
    parallelogram singularities, and both 4U loops keep a regular G_y (q = θ6)."""
    poses = irsbot_pose(irs, X, Zp)
    joints = displaced_joints(irs, poses)
    graph = Graph(vertices=Graph.from_spec(irs).vertices, joints=joints)
    G, _, _ = closure(graph, irs.platform)
    assert G.shape[1] - rank(G) == 2  # DOF 2, no internal motion
    assert_spans_exactly(platform_twists(graph, irs.platform), ["vx", "vz"])
    moved = {j.name: j for j in joints}
    for mount in irs.limb.mounts:
        th, phi = poses[f"{mount.name}/angles"][0]
        assert -np.radians(45) < th < np.radians(100) and abs(phi) < np.radians(40)
        S = {k: joint_screws(moved[f"{mount.name}/{k}"]).T for k in "4568"}
        u, _, _ = np.linalg.svd(S["8"])
        Gy = u[:, 2:].T @ np.hstack([S["4"], -S["5"]])
        assert np.linalg.cond(Gy) < 1e3


def test_irsbot_trajectory_is_in_the_workspace(irs):
    tr = irs.trajectory
    assert tr["type"] == "sine"
    lo, hi = tr["center"] - np.abs(tr["amplitude"]), tr["center"] + np.abs(tr["amplitude"])
    assert tr["amplitude"][1] == 0
    xs, zs = [x for x, _ in WORKSPACE], [z for _, z in WORKSPACE]
    assert min(xs) <= lo[0] and hi[0] <= max(xs)
    assert min(zs) <= lo[2] and hi[2] <= max(zs)
    for X, Zp in ((lo[0], lo[2]), (hi[0], hi[2])):
        irsbot_pose(irs, X, Zp)  # reachable
