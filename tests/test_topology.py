"""Graph analysis: spanning tree, fundamental cycles and mobility at the reference configuration."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pkm.robotfile import load_spec
from pkm.topology import Graph, joint_screws, mobility

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
