"""Graph analysis: spanning tree, fundamental cycles and mobility at the reference configuration."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pkm.description.robotfile import load_spec
from pkm.description.topology import Graph, joint_screws, mobility

from conftest import ROBOTS, ROOT


def test_delta_mobility():
    """3RR[2RR]R Delta: 3 × 7 variables, γ = L(γ_l + 1) − 1 = 5 cycles, platform DOF 3."""
    m = mobility(load_spec(ROBOTS / "delta_3rr2rrr.toml"))
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (21, 5, 3, 3)
    assert m.constraint_rank == 18


def test_serial_arm_mobility():
    m = mobility(load_spec(ROBOTS / "serial_6r.toml"))
    assert (m.variables, m.cycles, m.dof, m.platform_dof) == (6, 0, 6, 6)


def test_cycles_close_at_the_reference_configuration():
    """Σ σ_i Y_i η̇_i around each cycle vanishes for the loop's own motion: the cycle matrix of
    the Delta's parallelogram has the known rank 3 (cut-body formulation, Ex. 12)."""
    spec = load_spec(ROBOTS / "delta_3rr2rrr.toml")
    g = Graph.from_spec(spec)
    tree, cut = g.spanning_tree()
    assert len(tree) == len(g.vertices) - 1 and len(cut) == 5
    for cyc in g.fundamental_cycles():
        # consecutive joints of a cycle share a body: walking the signs gives a closed walk
        G = np.column_stack([s * joint_screws(g.joints[k])[0] for k, s in cyc])
        assert G.shape[0] == 6
        rank = np.linalg.matrix_rank(G, tol=1e-9)
        assert rank <= len(cyc)
    ranks = sorted(np.linalg.matrix_rank(np.column_stack([s * joint_screws(g.joints[k])[0] for k, s in cyc]), tol=1e-9)
                   for cyc in g.fundamental_cycles() if len(cyc) == 4)
    assert ranks == [3, 3, 3]  # the three parallelograms: 4 screws of rank 3 (Ex. 12)


def test_cli_info_reports_dof_and_masses():
    out = subprocess.run([sys.executable, "-m", "pkm", "info", str(ROBOTS / "delta_3rr2rrr.toml")],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "DOF at the reference configuration: 3, platform DOF 3" in out
    assert "fundamental cycles: 5" in out
    assert "limb2/rod1" in out and "0.212058" in out
    assert "actuated joints (3): limb1/1, limb2/1, limb3/1" in out


def test_cli_help():
    out = subprocess.run([sys.executable, "-m", "pkm", "--help"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "info" in out


@pytest.mark.parametrize("seed", range(100))
def test_graph_search_matches_scipy_csgraph(seed):
    """The pure-Python component labelling and breadth-first tree (no scipy import at start-up)
    give scipy.sparse.csgraph's results: same components, same BFS predecessors from the ground."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    from pkm.description.topology import _bfs_predecessors, _components

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 15))
    edges = [(int(rng.integers(0, n)), int(rng.integers(0, n))) for _ in range(int(rng.integers(0, 2 * n)))]
    edges = [(u, v) for u, v in edges if u != v]
    rows = [u for u, _ in edges]
    cols = [v for _, v in edges]
    adj = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    ncomp, labels = connected_components(adj, directed=False)
    mine = _components(n, edges)
    assert max(mine) + 1 == ncomp
    same = np.equal.outer(labels, labels)
    np.testing.assert_array_equal(np.equal.outer(mine, mine), same)
    _, pred = breadth_first_order(adj, 0, directed=False, return_predecessors=True)
    expected = [int(p) if p >= 0 else -1 for p in pred]
    assert _bfs_predecessors(n, edges) == expected
