"""The Delta's robot file reproduces the paper's §9.1 reference data (paper Sec. 9.1; Sec. 9.3).

The expected numbers below are the paper's printed *numeric* values (paper Sec. 9.1, eq. 148; Sec. 9.1, with the
typos of §14.4 corrected: Y4' fifth entry (Rp·d − h²)/c, ^3X_3' = (1,0,0,0,c/2,0)); the file itself
only holds points, axes and dimensions, never screw coordinates.
"""

from __future__ import annotations

import numpy as np
import pytest

from pkm.algorithms.kinematics import forward_kinematics
from pkm.description.model import limb_tree
from pkm.description.robotfile import load_spec

from conftest import ROBOTS

R0, Rp, a, b, c = 0.150, 0.070, 0.250, 0.080, 1.000
d = a + R0 - Rp
h = np.sqrt(c**2 - d**2)


@pytest.fixture(scope="module")
def spec():
    return load_spec(ROBOTS / "delta_3rr2rrr.toml")


@pytest.fixture(scope="module")
def tree(spec):
    return limb_tree(spec, "limb1")


def test_numbering_follows_the_paper(tree):
    assert tree.body_names == ("limb1/arm", "limb1/upper_link", "limb1/rod1", "limb1/lower_link", "limb1/rod2", "platform")
    assert tree.variable_names == tuple(f"limb1/{i}" for i in range(1, 7))
    assert list(tree.parent) == [-1, 0, 1, 2, 1, 3]  # pred = {1:0, 2:1, 3:2, 4:3, 5:2, 6:4}
    assert list(tree.actuated) == [True] + [False] * 5


def test_spatial_screws_eq148(tree):
    """Y_i' of paper Sec. 9.1, eq. 148 (numeric column, Y4' corrected)."""
    Y = np.array([
        [0, -1, 0, 0, 0, 0.15],
        [0, -1, 0, 0, 0, 0.40],
        [0.943981, 0, 0.33, -0.0132, 0.132, 0.0377592],
        [0.943981, 0, 0.33, -0.0132, -0.868, 0.0377592],
        [0.943981, 0, 0.33, 0.0132, 0.132, -0.0377592],
        [0, -1, 0, -0.943981, 0, 0.07],
    ])
    np.testing.assert_allclose(tree.Y, Y, atol=6e-7)  # the paper prints 6 digits
    exact4 = np.array([h, 0, d, -b * d / 2, Rp * d - h**2, b * h / 2]) / c
    np.testing.assert_allclose(tree.Y[3], exact4, atol=1e-15)


def test_body_frames(tree):
    """A_i' = (R_i', p_i') of paper Sec. 9.1."""
    R25 = np.array([[h / c, 0, -d / c], [0, 1, 0], [d / c, 0, h / c]])
    rotations = [np.eye(3), R25, R25, R25, R25, np.eye(3)]
    origins = [(-a / 2 - R0, 0, 0), (-a - R0, 0, 0), (-d / 2 - Rp, -b / 2, -h / 2), (-Rp, 0, -h), (-d / 2 - Rp, b / 2, -h / 2), (0, 0, -h)]
    for i in range(6):
        np.testing.assert_allclose(tree.A[i][:3, :3], rotations[i], atol=1e-15)
        np.testing.assert_allclose(tree.A[i][:3, 3], origins[i], atol=1e-15)


def test_body_fixed_screws_equal_the_papers_numbers(tree):
    """^iX_i' = Ad_{A_i'}⁻¹ Y_i' equals the paper's printed numbers (§9.1; paper Sec. 9.1)."""
    X = np.array([
        [0, -1, 0, 0, 0, -1 / 8],
        [0, -1, 0, 0, 0, 0],
        [1, 0, 0, 0, 1 / 2, 0],
        [1, 0, 0, 0, 0, 1 / 25],
        [1, 0, 0, 0, 1 / 2, 0],
        [0, -1, 0, 0, 0, 7 / 100],
    ])
    np.testing.assert_allclose(tree.X, X, atol=1e-14)


def test_joint_points_and_axes_of_every_limb(spec):
    """Joint i of limb l sits at S_0(l) y_i' with axis R_0(l) e_i' (eq. 122, mounts ±120° about z)."""
    y = {"1": (-R0, 0, 0), "2": (-R0 - a, 0, 0), "3": (-R0 - a, -b / 2, 0), "4": (-Rp, -b / 2, -h),
         "5": (-R0 - a, b / 2, 0), "6": (-Rp, 0, -h), "7": (-Rp, b / 2, -h)}
    e = {k: (0, -1, 0) for k in "126"} | {k: (h / c, 0, d / c) for k in "3457"}
    for mount, angle in (("limb1", 0.0), ("limb2", 120.0), ("limb3", -120.0)):
        t = np.radians(angle)
        Rz = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
        for name in y:
            j = spec.joint(f"{mount}/{name}")
            np.testing.assert_allclose(j.point, Rz @ y[name], atol=1e-15)
            np.testing.assert_allclose(j.axes[0], Rz @ e[name], atol=1e-15)
    assert spec.joint("limb1/7").cut is True
    assert spec.body("platform").frame[2, 3] == pytest.approx(-h, abs=1e-15)


def test_parallelogram_closes_and_platform_pose_matches_closed_form(tree):
    """With θ3 = θ5 = −θ4 the cut joint 7 closes, and C_p equals paper Sec. 9.1's closed form."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        t1, t2, t4, t6 = rng.uniform(-0.8, 0.8, 4)
        q = np.array([t1, t2, -t4, t4, -t4, t6])
        C = forward_kinematics(tree, q)
        # joint-7 point and axis, carried by rod2 (body 5) and by the lower link (body 4)
        y7, e7 = np.array([-Rp, b / 2, -h, 1.0]), np.array([h / c, 0, d / c])
        p5 = C[4] @ np.linalg.solve(tree.A[4], y7)
        p4 = C[3] @ np.linalg.solve(tree.A[3], y7)
        np.testing.assert_allclose(p5, p4, atol=1e-14)
        np.testing.assert_allclose(C[4][:3, :3] @ tree.A[4][:3, :3].T @ e7, C[3][:3, :3] @ tree.A[3][:3, :3].T @ e7, atol=1e-14)
        s12, c12, a126 = np.sin(t1 + t2), np.cos(t1 + t2), t1 + t2 + t6
        x = (d * c12 + h * s12) * np.cos(t4) + Rp * np.cos(a126) - a * np.cos(t1) - R0
        y = -c * np.sin(t4)
        z = (d * s12 - h * c12) * np.cos(t4) + Rp * np.sin(a126) - a * np.sin(t1)
        Cp = np.array([[np.cos(a126), 0, -np.sin(a126), x], [0, 1, 0, y], [np.sin(a126), 0, np.cos(a126), z], [0, 0, 0, 1]])
        np.testing.assert_allclose(C[5], Cp, atol=1e-14)


def test_masses_of_the_aluminium_cylinders(spec):
    """Spec §12.7: solid aluminium cylinders, ρ = 2700 kg/m³."""
    # (printed value, its last digit, diameter, length) per body, paper Sec. 9.3
    expected = {"limb1/arm": (0.477129, 1e-6, 0.030, a), "limb1/upper_link": (0.0678584, 1e-7, 0.020, b),
                "limb1/rod1": (0.212058, 1e-6, 0.010, c), "limb1/lower_link": (0.0678584, 1e-7, 0.020, b),
                "limb1/rod2": (0.212058, 1e-6, 0.010, c), "platform": (1.717666, 1e-6, 0.090, 0.100)}
    for name, (printed, digit, diameter, length) in expected.items():
        m = spec.body(name).mass
        assert m == pytest.approx(2700 * np.pi * diameter**2 / 4 * length, rel=1e-13)
        assert abs(m - printed) <= digit / 2 + 1e-15  # agrees with the printed digits
    arm = spec.body("limb1/arm")
    np.testing.assert_allclose(np.diag(arm.inertia), [5.3677e-5, 2.51193e-3, 2.51193e-3], rtol=2e-5)
    rod = spec.body("limb1/rod1")  # axis along body z
    np.testing.assert_allclose(np.diag(rod.inertia), [1.767280e-2, 1.767280e-2, 2.6507e-6], rtol=2e-5)
    link = spec.body("limb1/lower_link")  # axis along body y
    np.testing.assert_allclose(np.diag(link.inertia), [3.78876e-5, 3.3929e-6, 3.78876e-5], rtol=2e-5)
