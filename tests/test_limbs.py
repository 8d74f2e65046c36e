"""Limbs and loops: topology counts, H and Ḣ on closed configurations, loop closure (paper Sec. 2, 3.1; Sec. 3.3; Sec. 3.5–3.7, eq. 75–84)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import pkm
from pkm.errors import TopologyError
from pkm.description.robotfile import load_spec
from pkm.description.topology import limb_topologies

from conftest import ROBOTS, ROOT, TESTS

# name: (file, joints per limb, N_l, n_l, γ_l, δ_l, L, platform DOF)
EXPECTED = {
    "delta": ("delta_3rr2rrr.toml", 7, 7, 6, 1, 4, 3, 3),
    "delta_us": ("delta_3r2us.toml", 5, 11, 9, 1, 5, 3, 3),
    "irsbot2": ("irsbot2.toml", 8, 12, 9, 2, 3, 2, 2),
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def case(request):
    name = request.param
    return name, pkm.load(ROBOTS / EXPECTED[name][0])


def test_counts(case):
    name, robot = case
    _, joints, N, n, gamma, delta, L, dp = EXPECTED[name]
    assert len(robot.limbs) == L
    for limb in robot.limbs:
        assert len(limb.topology.joints) == joints
        assert limb.variables == N
        assert limb.n == n
        assert len(limb.topology.cycles) == gamma
        assert limb.dof == delta
        assert limb.n - sum(lp.m for lp in limb.loops) == delta  # δ_l = n_l − Σ m_λ (paper Sec. 3.3, eq. 12–14)
        assert len(limb.actuated) == 1
        assert all(a in limb.q_index for a in limb.actuated)
    m = robot.mobility()
    assert m.platform_dof == dp
    assert m.cycles == L * (gamma + 1) - 1


def test_cli_info_reports_limbs(case):
    name, robot = case
    fname, joints, N, n, gamma, delta, L, dp = EXPECTED[name]
    out = subprocess.run([sys.executable, "-m", "pkm", "info", str(ROBOTS / fname)], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("limb") and "cut:" in line]
    assert len(rows) == L
    for row in rows:
        assert [int(v) for v in row[1:6]] == [joints, N, n, gamma, delta]
    assert f"gamma = {L * (gamma + 1) - 1}" in out
    assert f"platform DOF: {dp}" in out


def _closed_states(limb, count, seed, spread=0.4):
    """Random closed configurations: random q, loops closed by Newton, random admissible rates."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < count:
        theta = np.zeros(limb.n)
        theta[limb.q_index] = rng.uniform(-spread, spread, limb.dof)
        try:
            theta = limb.close_loops(theta)
        except pkm.IKError:
            continue  # this q has no closed configuration nearby: draw again
        done += 1
        yield theta, rng.normal(size=limb.dof)


def test_loops_close_and_GH_vanishes(case):
    """200 random closed configurations per robot: |g| ≤ 1e-12 after Newton and G·H = 0."""
    _, robot = case
    for limb in robot.limbs[:1]:
        for theta, _ in _closed_states(limb, 200, 11):
            assert np.max(np.abs(limb.constraint_residual(theta)), initial=0.0) <= 1e-12
            G = limb.constraint_jacobian(theta)
            H = limb.H(theta)
            assert np.max(np.abs(G @ H), initial=0.0) <= 1e-12
            np.testing.assert_array_equal(H[limb.q_index], np.eye(limb.dof))


def test_Hdot_against_finite_differences(case):
    """Ḣq̇ equals d/dt H(θ(t)) q̇ along the closed motion with q(t) = q + t q̇ (≤ 1e-7)."""
    _, robot = case
    limb = robot.limbs[0]
    h = 1e-5
    for theta, qd in _closed_states(limb, 200, 12):
        H = limb.H(theta)
        thd = H @ qd
        plus = limb.close_loops(theta + h * thd)
        minus = limb.close_loops(theta - h * thd)
        fd = (limb.H(plus) - limb.H(minus)) @ qd / (2 * h)
        np.testing.assert_allclose(limb.Hdot_qd(theta, thd), fd, atol=1e-7)


def test_delta_parallelogram_H_eq48():
    """H_(1,l) = (−1, −1, 1) in the order (θ3, θ5, θ4) and the constant limb H of eq. (81)."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    limb = robot.limbs[0]
    (loop,) = limb.loops
    assert loop.m == 2 and len(loop.cut.c0) + len(loop.cut.n) == 5  # 5 cut-joint rows of rank 2
    assert [limb.variable_names[i] for i in loop.y] == ["limb1/3", "limb1/5"]
    assert [limb.variable_names[i] for i in loop.q] == ["limb1/4"]
    H81 = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [-1, 0, 0, 0], [1, 0, 0, 0], [-1, 0, 0, 0], [0, 0, 0, 1.0]])
    for theta, _ in _closed_states(limb, 20, 13):
        np.testing.assert_allclose(limb.H(theta), H81, atol=1e-12)
        np.testing.assert_allclose(theta[[2, 4]], [-theta[3], -theta[3]], atol=1e-12)


def test_non_hybrid_limb_is_rejected():
    spec = load_spec(TESTS / "robots_ok" / "non_hybrid_limb.toml")
    with pytest.raises(TopologyError, match="not hybrid.*share the joints"):
        limb_topologies(spec)


def test_automatic_cut_prefers_fewest_constraints_and_never_actuated():
    """Without `cut` marks, the 3R[2US] loop is cut at an S joint (3 constraints), not at the U."""
    spec = load_spec(ROBOTS / "delta_3r2us.toml")
    from dataclasses import replace

    limb = replace(spec.limb, joints=tuple(replace(j, cut=None) for j in spec.limb.joints))
    topo = limb_topologies(replace(spec, limb=limb))
    for t in topo:
        (cut,) = t.cut_joints
        assert cut.type == "S" and not cut.actuated
