"""The 3-D viewer (pkm.viewer, pkm view): the scene's body poses against forward kinematics, the
shapes carried with their bodies, the self-contained page, and the page in a real headless
Chromium (skipped when no chromium binary is installed: ``apt-get install chromium``)."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.algorithms.kinematics import forward_kinematics
from pkm.plotting.mechanism import mechanism
from test_corpus import check_run  # noqa: E402  (tests/conftest.py puts tests/ on the path)

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
from pkm.viewer import html_page, scene

#: The page needs three.js from the optional extra 'view' (meshcat); the scene does not.
needs_three = pytest.mark.skipif(importlib.util.find_spec("meshcat") is None,
                                 reason="the optional extra 'view' (meshcat's three.js) is not installed")


def _motion(robot, n=5):
    """n poses on a line from the reference pose (a small move along every task axis)."""
    step = np.where(np.arange(robot.task_dof) < 3, 0.03, 0.05)[: robot.task_dof]
    return robot.x_ref + np.linspace(0.0, 1.0, n)[:, None] * step


@pytest.fixture(scope="module", params=["delta_3rr2rrr", "hexapod_6ups"])
def case(request):
    robot = pkm.load(ROBOTS / f"{request.param}.toml")
    X = _motion(robot)
    return robot, X, scene(robot, X, 0.1 * np.arange(len(X)), axes=True)


def _fk_reference(robot, X, names):
    """Each named body's world pose per pose, from the IK at each pose alone (not followed along the
    motion) and the forward kinematics of its limb; the platform's from every limb (they agree)."""
    out = np.full((len(X), len(names), 4, 4), np.nan)
    for f, x in enumerate(X):
        sol = robot.inverse_kinematics(x, limits=False)
        for limb in robot.limbs:
            C = forward_kinematics(limb.tree, sol.joints[limb.name][0])
            for i, name in enumerate(limb.tree.body_names):
                if name in names:
                    j = names.index(name)
                    if name == robot.spec.platform and not np.isnan(out[f, j]).all():
                        np.testing.assert_allclose(C[i], out[f, j], atol=1e-9)   # the loops are closed
                    out[f, j] = C[i]
    return out


def test_scene_poses_equal_forward_kinematics(case):
    robot, X, sc = case
    expanded = [b.name for b in robot.spec.expanded()[0] if b.name != robot.spec.ground]
    assert sorted(sc.names) == sorted(expanded)   # one object per body: every limb's, the platform
    assert sc.poses.shape == (len(X), len(sc.names), 4, 4)
    ref = _fk_reference(robot, X, sc.names)
    assert not np.isnan(ref).any()
    np.testing.assert_allclose(sc.poses, ref, atol=1e-9, rtol=0)
    assert np.ptp(sc.poses[:, :, :3, 3], axis=0).max() > 1e-3   # the bodies do move along the motion


def test_shape_ends_stay_on_their_joints(case):
    """A cylinder that ends at a joint at the reference pose still ends there at every frame (the
    joint points from pkm.plotting.mechanism, another computation): shapes ride with their bodies,
    mirrored limb instances (the hexapod's) included."""
    robot, X, sc = case
    sol = robot.inverse_kinematics(X, warm_start=True, limits=False)
    points = [np.concatenate([mechanism(robot, X[f], joints=[sol.joints[l.name][f] for l in robot.limbs]).joints[l.name]
                              for l in robot.limbs]) for f in range(len(X))]
    matched = 0
    for j, shape in enumerate(sc.shapes):
        if shape["type"] != "cylinder":
            continue
        c, a, half = np.array(shape["center"]), np.array(shape["axis"]), shape["length"] / 2
        for end in (c - half * a, c + half * a):
            world = [sc.poses[f, j, :3, :3] @ end + sc.poses[f, j, :3, 3] for f in range(len(X))]
            d0 = np.linalg.norm(points[0] - world[0], axis=1)
            if d0.min() < 1e-9:
                k = int(np.argmin(d0))
                for f in range(1, len(X)):
                    assert np.linalg.norm(points[f][k] - world[f]) < 1e-9, (sc.names[j], f)
                matched += 1
    assert matched >= 6


@needs_three
def test_page_is_self_contained(case, tmp_path):
    robot, X, sc = case
    page = html_page(sc, frames=True, axes=True)
    assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)\s*=", page, re.I)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    assert "@import" not in page and "url(http" not in page
    assert page.count("<script") == page.count("</script>") == 3   # nothing ends a script early
    assert "Copyright 2010-2021 Three.js Authors" in page   # the bundle's licence notices come along
    data = json.loads(re.search(r'<script type="application/json" id="scene">(.*?)</script>', page, re.S)
                      .group(1))
    assert len(data["bodies"]) == len(sc.names) and len(data["poses"]) == len(X)
    np.testing.assert_array_equal(np.array(data["poses"]).reshape(len(X), -1, 3, 4), sc.poses[:, :, :3, :])


@needs_three
def test_page_escapes_names(case):
    """A robot or body name with HTML in it stays text: in the title escaped, in the JSON as \\u003c."""
    robot, X, sc = case
    hostile = '</script><!--<script>alert(1)</script>&'
    sc2 = scene(robot, X[:1])
    sc2.robot, sc2.names = hostile, [hostile] + sc2.names[1:]
    page = html_page(sc2)
    assert page.count("<script") == page.count("</script>") == 3 and "<!--" not in page
    data = json.loads(re.search(r'id="scene">(.*?)</script>', page, re.S).group(1))
    assert data["robot"] == hostile and data["bodies"][0]["name"] == hostile


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--virtual-time-budget=5000"]


def _check_in_browser(case, webgl, tmp_path):
    """The page loads in a real browser, its scene holds one object per body at the positions of the
    forward kinematics (read back from the scene objects), and its screenshot is not blank."""
    import matplotlib.image

    robot, X, sc = case
    flags = FLAGS if webgl else [*FLAGS, "--disable-webgl"]   # without WebGL: the page's 2-D canvas projection
    path = tmp_path / "view.html"
    path.write_text(html_page(sc, frames=True, axes=True), encoding="utf-8")
    ref = _fk_reference(robot, X, sc.names)
    for f in (0, len(X) - 1):
        dom = subprocess.run([_chromium(), *flags, "--dump-dom", f"{path.as_uri()}#frame={f}"],
                             capture_output=True, text=True, timeout=120).stdout
        bodies = re.search(r'data-bodies="(\d+)"', dom)
        assert bodies is not None, dom[-2000:]
        assert int(bodies.group(1)) == len(sc.names)
        renderer = re.search(r'data-renderer="(\w+)"', dom).group(1)
        assert renderer == ("webgl" if webgl else "canvas2d")
        poses = json.loads(re.search(r'<pre id="poses">(.*?)</pre>', dom, re.S).group(1))
        assert poses["frame"] == f and [b["name"] for b in poses["bodies"]] == sc.names
        got = np.array([b["position"] for b in poses["bodies"]])
        print(f"{robot.name} frame {f} ({renderer}):", [repr(float(v)) for v in got[-1]],
              [repr(float(v)) for v in ref[f, -1, :3, 3]])
        np.testing.assert_allclose(got, ref[f, :, :3, 3], atol=1e-9, rtol=0)
    png = tmp_path / "view.png"
    subprocess.run([_chromium(), *flags, f"--screenshot={png}", "--window-size=800,600", path.as_uri()],
                   capture_output=True, timeout=120, cwd=tmp_path)
    image = matplotlib.image.imread(png)[..., :3]
    assert image.shape[:2] == (600, 800)
    assert image.var() > 0 and len(np.unique(image.reshape(-1, 3), axis=0)) > 10
    view = image[:500]   # the 3-D view above the bar: coloured bodies on the light background
    assert (np.ptp(view, axis=2) > 0.2).mean() > 1e-3


browser = pytest.mark.skipif(_chromium() is None, reason="no chromium binary (apt-get install chromium)")


@needs_three
@browser
def test_page_in_headless_chromium(case, tmp_path):
    _check_in_browser(case, True, tmp_path)


@needs_three
@browser
def test_page_without_webgl_in_headless_chromium(tmp_path):
    """Where the browser has no WebGL the page draws a 2-D canvas projection, with the same markers."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X = _motion(robot, 3)
    _check_in_browser((robot, X, scene(robot, X)), False, tmp_path)


# ------------------------------------------------------------------------- the command
DELTA = ROBOTS / "delta_3rr2rrr.toml"


@needs_three
def test_cli_writes_the_page(tmp_path):
    out = tmp_path / "d.html"
    code, stdout, _ = check_run(["view", DELTA, "--samples", "7", "--frames", "--axes",
                                 "--html", out], ok=True)
    assert "16 bodies, 7 frames" in stdout and out.exists()
    data = json.loads(re.search(r'id="scene">(.*?)</script>', out.read_text(), re.S).group(1))
    assert len(data["t"]) == 7 and data["showFrames"] and data["showAxes"]


@needs_three
def test_cli_motion_csv(tmp_path):
    """--motion: the task coordinates of a CSV (as pkm simulate --out writes them) are the frames."""
    robot = pkm.load(DELTA)
    X = _motion(robot, 4)
    csv = tmp_path / "m.csv"
    csv.write_text("t,x,y,z,q_a1\n" + "".join(f"{0.1 * k},{float(x[0])!r},{float(x[1])!r},{float(x[2])!r},0\n" for k, x in enumerate(X)))
    out = tmp_path / "m.html"
    check_run(["view", DELTA, "--motion", csv, "--html", out], ok=True)
    data = json.loads(re.search(r'id="scene">(.*?)</script>', out.read_text(), re.S).group(1))
    j = [b["name"] for b in data["bodies"]].index("platform")
    np.testing.assert_allclose([fr[j][3::4] for fr in data["poses"]], [robot.platform_pose(x)[:3, 3] for x in X],
                               atol=1e-12)


@needs_three
@pytest.mark.parametrize("argv", [
    ["--samples", "0"], ["--port", "70000"], ["--html", "/nonexistent-dir/v.html"],
    ["--motion", "/nonexistent.csv"], ["--motion", "BAD", "--trajectory", "line"], ["--motion", "NOCOLS"],
])
def test_cli_refuses_in_one_line(argv, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,a\n0,1\n1,2\n")
    argv = [str(bad) if a in ("BAD", "NOCOLS") else a for a in argv]
    out = tmp_path / "v.html"
    if "--html" not in argv:
        argv += ["--html", out]
    check_run(["view", DELTA, *argv], ok=False)
    assert not out.exists() and not list(tmp_path.glob("*.html"))


@needs_three
def test_cli_serves_the_page(tmp_path):
    """Without --html the page is served on a local port (a subprocess, stopped after one request)."""
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "pkm", "view", str(DELTA), "--samples", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        with urllib.request.urlopen(url, timeout=30) as resp:
            page = resp.read().decode("utf-8")
        assert 'id="scene"' in page and "MeshCat" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@needs_three
def test_cli_reference_pose_without_a_trajectory(tmp_path):
    """A robot file without a [trajectory] table (and no trajectory options) shows its reference pose."""
    out = tmp_path / "s.html"
    code, stdout, _ = check_run(["view", ROBOTS / "serial_6r.toml", "--html", out], ok=True)
    assert "6 bodies at one pose" in stdout and out.exists()


def test_cli_without_the_extra_refuses_in_one_line(tmp_path, monkeypatch):
    """Without meshcat (the optional extra 'view') pkm view says how to install it, writes nothing."""
    monkeypatch.setitem(sys.modules, "meshcat", None)   # import meshcat now raises ImportError
    out = tmp_path / "v.html"
    code, _, err = check_run(["view", DELTA, "--html", out], ok=False)
    assert "pkm[view]" in err and not out.exists()
