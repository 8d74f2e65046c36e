"""The machinery of seed 002's discrete null space method, joint by joint: the spanning tree, the
product-of-exponentials reparametrisation F (eqs. 95, 118, 126, 136, 154), the discrete null space
matrices with ``G(q_{n+1/2}) P(q_n, q_{n+1}) = 0`` (eqs. 14, 74; digest §3.4 claims 3–4), the
constraint Hessians of Newton's matrix and the discrete gradient (eq. 10).

Every joint that can be a tree joint is tested with the parent on marker i's side and on marker j's,
at a generic configuration reached by F itself (so the C and E pairs are off their assembly point).
"""
from __future__ import annotations

import numpy as np
import pytest

from absolute_cases import assembled, random_body, random_pose, rotation_law, translation_law
from pkm.absolute import Body, Lock, Marker, Spherical, System
from pkm.absolute import examples as ex
from pkm.absolute.energy_momentum import EnergyMomentum, independent_rows
from pkm.absolute.hessian import ConstraintHessian
from pkm.absolute.nullspace import numerical_null_space, rate_matrix, tree_null_space
from pkm.absolute.potentials import Gravity, Spring, discrete_gradient
from pkm.absolute.reparam import compose, reparametrize, tangent
from pkm.absolute.standard import GeneralizedAlpha
from pkm.absolute.tree import Element, Tree, marker_axis, marker_point

TREE_KINDS = ["spherical", "revolute", "universal", "cylindrical", "prismatic", "planar"]
# (ground side, order of the bodies): parent on side i (ground i, or body A first) or on side j
ORIENTATIONS = [("i", None), ("j", None), (None, "AB"), (None, "BA")]


def _pair(kind, ground, order, seed):
    rng = np.random.default_rng(seed)
    joint, bodies, qi, qj = assembled(rng, kind, ground)
    pairs = [(b, q) for b, q in zip(bodies, (qi, qj)) if b is not None]
    if order == "BA":
        pairs = pairs[::-1]
    system = System([b for b, _ in pairs], [joint])
    q = np.concatenate([q for _, q in pairs])
    tree = Tree(system)
    # a generic configuration, off the assembly point, reached by F itself
    q = reparametrize(tree, q, rng.uniform(-1.0, 1.0, tree.size), derivative=False)
    return system, tree, q, rng


@pytest.mark.parametrize("ground,order", ORIENTATIONS)
@pytest.mark.parametrize("kind", TREE_KINDS)
def test_the_reparametrisation_keeps_the_joint_and_the_bodies_rigid_for_any_increment(kind, ground, order):
    system, tree, q, rng = _pair(kind, ground, order, 1)
    assert len(tree.joints) == 1 and tree.closure == ()
    child_side = tree.joints[0].child_side
    assert child_side == (1 if ground == "i" or order == "AB" else 0)
    assert np.max(np.abs(system.phi(q))) < 1e-12
    for scale in (1e-3, 0.3, 2.5):
        mu = rng.uniform(-scale, scale, tree.size)
        q1 = reparametrize(tree, q, mu, derivative=False)
        assert np.max(np.abs(system.phi(q1))) < 1e-12, scale
        assert np.max(np.abs(q1 - q)) > 1e-4 * scale  # it moved


@pytest.mark.parametrize("ground,order", ORIENTATIONS)
@pytest.mark.parametrize("kind", TREE_KINDS)
def test_the_derivative_of_the_reparametrisation_is_exact(kind, ground, order):
    system, tree, q, rng = _pair(kind, ground, order, 2)
    mu = rng.uniform(-0.7, 0.7, tree.size)
    _, D = reparametrize(tree, q, mu)
    h = 1e-6
    fd = np.column_stack([(reparametrize(tree, q, mu + h * e, False) - reparametrize(tree, q, mu - h * e, False))
                          / (2 * h) for e in np.eye(tree.size)])
    assert np.max(np.abs(D - fd)) < 1e-8 * max(1.0, np.max(np.abs(D)))


@pytest.mark.parametrize("ground,order", ORIENTATIONS)
@pytest.mark.parametrize("kind", TREE_KINDS)
def test_the_discrete_null_space_annihilates_the_midpoint_jacobian(kind, ground, order):
    system, tree, q0, rng = _pair(kind, ground, order, 3)
    q1 = reparametrize(tree, q0, rng.uniform(-0.8, 0.8, tree.size), derivative=False)
    qm = 0.5 * (q0 + q1)
    G = system.jacobian(qm)
    if not (kind == "prismatic" and ground):  # (a translation along a fixed axis stays on it)
        assert np.max(np.abs(system.phi(qm))) > 1e-3  # the mid-point is off the manifold
    for P in (tree_null_space(tree, q0, q1), numerical_null_space(system, q0, q1)):
        assert P.shape == (system.n, tree.size)
        assert np.max(np.abs(G @ P)) < 1e-12 * max(1.0, np.max(np.abs(G)) * np.max(np.abs(P)))
        assert np.linalg.matrix_rank(P) == tree.size
    # the continuous one (q_{n+1} → q_n, eq. 13) is the derivative of F at 0 (the tangent space)
    assert np.allclose(tree_null_space(tree, q0), tangent(tree, q0), atol=1e-13)
    assert np.allclose(tree_null_space(tree, q0, q0), tangent(tree, q0), atol=1e-13)


@pytest.mark.parametrize("kind", ["cylindrical", "prismatic", "planar"])
def test_without_the_seeds_cross_product_substitutes_the_midpoint_jacobian_is_not_annihilated(kind):
    """Seed 002 eqs. 113, 133, 149: with a moving parent the translation directions at the mid-point
    must be m₁ × m₂ (and m₂ × n, n × m₁), not n_{n+1/2} (m_{α, n+1/2}); digest §3.4(3) found ~2e-2
    with the naive ones. The same columns built both ways by the same code: only the directions differ."""
    system, tree, q0, rng = _pair(kind, None, "AB", 4)          # body A (parent, marker i) flies freely
    q1 = reparametrize(tree, q0, rng.uniform(-0.8, 0.8, tree.size), derivative=False)
    qm = 0.5 * (q0 + q1)
    G = system.jacobian(qm)
    j, cols = tree.joints[0].joint, tree.joints[0].columns
    x, y, n = (marker_axis(j.marker_i, a, qm[:12]) for a in range(3))
    c = marker_point(j.marker_j, qm[12:])
    rot = [Element("rot", center=c, axis=n)]
    directions = {"cylindrical": ([np.cross(x, y)], [n]), "prismatic": ([np.cross(x, y)], [n]),
                  "planar": ([np.cross(y, n), np.cross(n, x)], [x, y])}[kind]
    P = tree_null_space(tree, q0, q1)
    for which, dirs in zip(("substitute", "naive"), directions):
        els = [Element("trans", directions=np.array(dirs))] + ([] if kind == "prismatic" else rot)
        Pk = P.copy()
        Pk[12:, cols] = rate_matrix(System([system.bodies[1]], []), qm[12:]) @ compose(els, np.zeros(len(
            range(cols.start, cols.stop))))[2]
        err = np.max(np.abs(G @ Pk))
        if which == "substitute":
            assert np.allclose(Pk, P, atol=1e-14) and err < 1e-12
        else:
            assert err > 1e-4, err


def test_the_tree_is_found_depth_first_and_cut_where_asked():
    e = ex.six_body_linkage()
    tree = Tree(e.system)
    assert [tj.joint.name for tj in tree.joints] == ["R1", "R2", "R3", "R4", "R5"]
    assert [e.system.joints[k].name for k in tree.closure] == ["R6"] and tree.roots == ()
    tree = Tree(e.system, cut=("R3",))
    assert sorted(tj.joint.name for tj in tree.joints) == ["R1", "R2", "R4", "R5", "R6"]
    assert [e.system.joints[k].name for k in tree.closure] == ["R3"]
    assert "closure: R3" in tree.describe()
    with pytest.raises(ValueError, match="unknown joints"):
        Tree(e.system, cut=("R9",))
    pair = ex.cylindrical_pair()
    tree = Tree(pair.system)
    assert [b.name for b in tree.roots] == ["cylinder"] and tree.size == 8
    # a joint type that cannot carry a tree motion becomes a closure joint, its body a free root
    rng = np.random.default_rng(6)
    joint, bodies, qi, qj = assembled(rng, "distance", "i")
    tree = Tree(System([bodies[1]], [joint]))
    assert tree.joints == () and tree.closure == (0,) and tree.size == 6


def test_the_constraint_hessian_is_the_derivative_of_the_jacobian_transpose_times_lambda():
    rng = np.random.default_rng(7)
    bodies = [random_body(rng, f"B{k}") for k in range(3)]
    q = np.concatenate([b.coordinates(random_pose(rng)) for b in bodies])
    joints = []
    for k, kind in enumerate(["universal", "cylindrical", "planar", "distance", "lock-weld"]):
        j, _, _, _ = assembled(rng, kind)
        a, b = bodies[k % 3], bodies[(k + 1) % 3]
        joints.append(type(j)(Marker(a, rng.normal(size=3) * 0.2, random_pose(rng)[:3, :3]),
                              Marker(b, rng.normal(size=3) * 0.2, random_pose(rng)[:3, :3]),
                              *([1.3] if kind == "distance" else []), name=f"J{k}")
                      if kind != "lock-weld" else type(j)(Marker(a), Marker(b), "weld", name=f"J{k}"))
    joints.append(Spherical(Marker(None, rng.normal(size=3)), Marker(bodies[0], rng.normal(size=3)), name="S"))
    joints.append(Lock(Marker(bodies[2], [0.1, 0.2, 0.0]), Marker(bodies[1], [0.3, 0.0, 0.1]), "weld",  # rheonomic K(t)
                       translation=translation_law(), rotation=rotation_law(), name="drive"))
    system = System(bodies, joints)
    lam = rng.normal(size=system.m)
    t = 0.7
    H = ConstraintHessian(system).contract(lam, t)
    h = 1e-6
    fd = np.column_stack([(system.jacobian(q + h * e, t).T @ lam - system.jacobian(q - h * e, t).T @ lam) / (2 * h)
                          for e in np.eye(system.n)])
    assert np.max(np.abs(H - fd)) < 1e-7 * max(1.0, np.max(np.abs(H)))
    assert np.allclose(H, H.T)


def test_gonzalez_discrete_gradient_gives_the_exact_energy_difference():
    rng = np.random.default_rng(8)
    body = random_body(rng, "B")
    system = System([body], [])
    spring = Spring(system, Marker(None, [0.3, -0.2, 1.0]), Marker(body, [0.1, 0.0, 0.05]), 40.0, rest_length=0.4)
    qa = body.coordinates(random_pose(rng))
    qb = body.coordinates(random_pose(rng))
    dV = spring.energy(qb) - spring.energy(qa)
    assert discrete_gradient(spring, qa, qb) @ (qb - qa) == pytest.approx(dV, rel=1e-12)
    assert abs(spring.gradient(0.5 * (qa + qb)) @ (qb - qa) - dV) > 1e-3 * abs(dV)  # the mid-point is not
    h = 1e-6
    fd = np.array([(spring.energy(qa + h * e) - spring.energy(qa - h * e)) / (2 * h) for e in np.eye(12)])
    assert np.allclose(spring.gradient(qa), fd, atol=1e-6)
    Hfd = np.column_stack([(spring.gradient(qa + h * e) - spring.gradient(qa - h * e)) / (2 * h) for e in np.eye(12)])
    assert np.allclose(spring.hessian(qa), Hfd, atol=1e-5)


def test_a_spring_pendulum_conserves_energy_only_with_the_discrete_gradient():
    """A body on a ball joint, gravity and a spring of non-zero rest length (not polynomial in q):
    energy is conserved to Newton's tolerance with Gonzalez's discrete gradient, not with the
    mid-point gradient."""
    body = Body("bob", 2.0, np.diag([0.02, 0.03, 0.04]), com=[0.0, 0.0, -0.5])
    joint = Spherical(Marker(None), Marker.in_frame(body, [0.0, 0.0, 0.0]))
    system = System([body], [joint])
    q0 = body.coordinates(random_pose(np.random.default_rng(9), 0.0))
    v0 = body.velocity(q0, np.concatenate([[1.0, -2.0, 3.0], np.cross([1.0, -2.0, 3.0], q0[:3])]), frame="com")
    spring = Spring(system, Marker(None, [0.4, 0.1, -0.3]), Marker.in_frame(body, [0.0, 0.1, -0.6]), 60.0, 0.3)
    V = Gravity(system, [0.0, 0.0, -9.81]) + spring
    assert V.degree is None
    tr = EnergyMomentum(system, q0, V).integrate(q0, v0, 0.01, 150)
    assert tr.energy_drift() < 1e-11
    assert tr.constraint_residual.max() < 1e-12

    class MidPoint(Spring):
        degree = 2  # pretend: the scheme then uses ∇V(q_{n+1/2}) only

    mid = Gravity(system, [0.0, 0.0, -9.81]) + MidPoint(system, spring.a, spring.b, 60.0, 0.3)
    mid.degree = 2
    assert EnergyMomentum(system, q0, mid).integrate(q0, v0, 0.01, 150).energy_drift() > 1e-6


def test_dependent_rows_are_chosen_again_where_the_first_choice_loses_rank():
    """At the cube the six-body linkage's dependent row is R1's p.z (System.redundancy); along the
    motion the 29 remaining rows lose rank near θ¹ = −π/2 while all 30 keep rank 29. The schemes
    choose their rows at every step and pass there with the loop closed."""
    e = ex.six_body_linkage()
    reduced, report = e.system.remove_redundant(e.q0)
    tr = EnergyMomentum(e.system, e.q0, e.potential, cut=e.cut, condition=False).integrate(e.q0, e.v0, 0.005, 40)
    th1 = ex.joint_angles(e.system, tr.q)[:, 0]
    k = int(np.argmin(np.abs(th1 + np.pi / 2)))
    assert abs(th1[k] + np.pi / 2) < 0.15
    s_red = np.linalg.svd(reduced.jacobian(tr.q[k]), compute_uv=False)
    s_full = np.linalg.svd(e.system.jacobian(tr.q[k]), compute_uv=False)
    assert report.labels == (("R1", "p.z"),)
    assert s_full[-1] < 1e-12 * s_full[0] and s_full[-2] > 1e-2      # all rows: rank 29 throughout …
    assert s_red[-1] < 1e-2 * s_full[-2]                              # … the first choice nearly loses it
    rows, rep = independent_rows(e.system, tr.q[k])
    s_new = np.linalg.svd(e.system.jacobian(tr.q[k])[rows], compute_uv=False)
    assert rep.labels != report.labels and s_new[-1] > 0.5 * s_full[-2]
    assert tr.constraint_residual.max() < 1e-10


def test_other_forces_do_their_discrete_work_and_inconsistent_starts_are_refused():
    """A viscous damper on the top, ``f = −c q̇`` at the mid-point: energy falls by exactly the
    discrete work ``Δt f·v_{n+1/2}`` each step (seed 002's energy balance with a non-conservative
    force); an inconsistent start is refused, and :func:`consistent_start` repairs it."""
    from pkm.absolute.energy_momentum import check_start, consistent_start

    top = ex.gyro_top()
    c = 2e-3
    force = lambda t, q, v: -c * v  # noqa: E731
    tr = EnergyMomentum(top.system, top.q0, top.potential, force=force).integrate(top.q0, top.v0, 0.01, 50)
    work = np.array([0.01 * force(0, None, v) @ v for v in (tr.q[1:] - tr.q[:-1]) / 0.01])
    assert np.all(np.diff(tr.energy) < 0)
    assert np.max(np.abs(np.diff(tr.energy) - work)) < 1e-12 * tr.energy[0]
    rng = np.random.default_rng(10)
    q_bad, v_bad = top.q0 + 1e-3 * rng.normal(size=12), top.v0 + rng.normal(size=12)
    with pytest.raises(ValueError, match="inconsistent initial conditions"):
        EnergyMomentum(top.system, top.q0, top.potential).integrate(q_bad, top.v0, 0.01, 1)
    with pytest.raises(ValueError, match="inconsistent initial conditions"):
        GeneralizedAlpha(top.system, top.q0, top.potential).integrate(top.q0, v_bad, 0.001, 1)
    q, v = consistent_start(top.system, q_bad, v_bad)
    check_start(top.system, q, v, tol=1e-12)
    assert np.linalg.norm(q - top.q0) < 3e-3 * np.sqrt(12)
