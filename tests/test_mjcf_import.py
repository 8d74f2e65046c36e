"""MJCF in (pkm.formats.mjcf_read, issue 30 items 1 and 3, the MJCF part).

Every robot in robots/ goes TOML -> pkm.export.write_mjcf -> pkm.load(xml) with the same torques; a
hand-written five-bar MJCF (a <connect> loop, motors, explicit inertials) gives the torques of its
TOML version; bad MJCF files give one-line errors; what pkm does not model is a one-line note.
"""
from __future__ import annotations

import json
import sys
import tomllib
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

import pkm  # noqa: E402
from pkm.errors import PkmError, RobotFileError, TopologyError  # noqa: E402
from pkm.export.mjcf import write_mjcf  # noqa: E402
from pkm.formats import FormatNote, load_robot_spec  # noqa: E402
from pkm.robot import Robot  # noqa: E402

from test_corpus import check_run  # noqa: E402
from test_urdf import A1, A2, B1, B2, FIVEBAR_TOML, P5, cylinder, f, torques  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def side_text(toml_path: Path, platform: str) -> str:
    """The side file ROBOT.pkm.toml: the platform (a body or site of the MJCF) and the TOML's [task]."""
    task = tomllib.loads(toml_path.read_text())["task"]
    return f"platform = {json.dumps(platform)}\n[task]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in task.items())


# ---------------------------------------------------------------- round trip of every robot in robots/
@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "robots").glob("*.toml")))
def test_round_trip_toml_mjcf_pkm_torques(name, tmp_path):
    src = ROOT / "robots" / name
    r1 = pkm.load(src)
    xml = tmp_path / "r.xml"
    try:
        write_mjcf(r1, xml)
    except TopologyError as exc:   # what the export refuses, it refuses in one line
        assert "\n" not in str(exc) and "cannot export" in str(exc)
        pytest.skip(str(exc))
    # the export's site "platform" carries the platform frame on the first platform copy
    (tmp_path / "r.pkm.toml").write_text(side_text(src, "platform"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatNote)
        spec, notes = load_robot_spec(xml)
    r2 = Robot(spec)
    assert len(r2.limbs) == len(r1.limbs) and r2.task_dof == r1.task_dof
    assert np.isclose(sum(b.mass for b in r2.spec.expanded()[0]), sum(b.mass for b in r1.spec.expanded()[0]), rtol=1e-12)
    motors = {e.get("name"): e.get("joint") for e in ET.parse(xml).getroot().iter("motor")}
    idx = [r2.actuator_names.index(motors[n].replace("/", "_")) for n in r1.actuator_names]
    assert np.allclose(r2.x_ref, r1.x_ref, atol=1e-12)
    a, b = torques(r1, n=3), torques(r2, n=3)[:, idx]
    assert np.abs(a - b).max() <= 1e-10 * np.abs(a).max()


# ---------------------------------------------------------------- a hand-written five-bar
def inertial(body_origin, props):
    m, c, I = props
    return (f'<inertial pos="{f(np.asarray(c) - body_origin)}" mass="{float(m)!r}" fullinertia="'
            f'{f([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])}"/>')


def fivebar_mjcf(connect=None, extra_joint="", actuators=None, equality_extra=""):
    """The five-bar of tests/test_urdf.py as MuJoCo users write it: nested bodies (world-aligned
    frames, positions relative to the parent), hinges, one <connect> closing the loop at the pin P on
    rod2, two motors; a collision geom on crank1 (a note)."""
    disk = cylinder(P5 - [0, 0, 0.01], P5 + [0, 0, 0.01], 0.04)
    connect = connect or f'<connect name="pin2" body1="rod2" body2="disk" anchor="{f(P5 - B2)}"/>'
    actuators = actuators or '<motor name="m1" joint="mot1"/><motor name="m2" joint="mot2"/>'
    return f"""<mujoco model="five-bar">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="crank1" pos="{f(A1)}">
      <joint name="mot1" axis="0 0 1" range="-2 2"/>{extra_joint}
      {inertial(A1, cylinder(A1, B1, 0.02))}
      <geom type="sphere" size="0.005" mass="0"/>
      <body name="rod1" pos="{f(B1 - A1)}">
        <joint name="free1" axis="0 0 1"/>
        {inertial(B1, cylinder(B1, P5, 0.015))}
        <body name="disk" pos="{f(P5 - B1)}">
          <joint name="pin1" axis="0 0 1"/>
          {inertial(P5, disk)}
          <site name="centre"/>
        </body>
      </body>
    </body>
    <body name="crank2" pos="{f(A2)}">
      <joint name="mot2" axis="0 0 1"/>
      {inertial(A2, cylinder(A2, B2, 0.02))}
      <body name="rod2" pos="{f(B2 - A2)}">
        <joint name="free2" axis="0 0 1"/>
        {inertial(B2, cylinder(B2, P5, 0.015))}
      </body>
    </body>
  </worldbody>
  <equality>{connect}{equality_extra}</equality>
  <actuator>{actuators}</actuator>
</mujoco>
"""


FIVEBAR_SIDE = 'platform = "disk"\n[task]\ntype = "select"\ncomponents = ["vx", "vy"]\nideal_constraint = ["wz"]\n'


@pytest.fixture(scope="module")
def fivebar(tmp_path_factory):
    d = tmp_path_factory.mktemp("mjcf_fivebar")
    (d / "fivebar.toml").write_text(FIVEBAR_TOML)
    (d / "robot.xml").write_text(fivebar_mjcf())
    (d / "robot.pkm.toml").write_text(FIVEBAR_SIDE)
    return d


def test_fivebar_mjcf_loads_with_its_mobility_and_the_toml_torques(fivebar):
    with pytest.warns(FormatNote, match="collision"):
        r_xml = pkm.load(fivebar / "robot.xml")
    r_toml = pkm.load(fivebar / "fivebar.toml")
    assert r_xml.actuator_names == ["mot1", "mot2"] and r_xml.task_dof == 2
    mob = r_xml.mobility()
    assert (mob.dof, mob.platform_dof, mob.cycles) == (3, 3, 1)
    assert {b.name for b in r_xml.spec.bodies} == {"crank1", "crank2", "rod1", "rod2", "disk"}
    assert np.allclose(r_xml.spec.joint("mot1").limits.ranges, [[-2, 2]])
    assert [j.type for j in r_xml.spec.joints if j.name == "pin2"] == ["S"]   # the connect
    a, b = torques(r_toml), torques(r_xml)
    assert np.abs(a - b).max() <= 1e-10 * np.abs(a).max()


def test_platform_as_a_site_and_task_as_options(fivebar):
    """A site names the platform (its body, with the site's frame); options override the side file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatNote)
        r = pkm.load(fivebar / "robot.xml", platform="centre", task={"type": "select", "components": ["vx", "vy"],
                                                                      "ideal_constraint": ["wz"]}, side=None)
    assert r.spec.platform == "disk" and np.allclose(r.x_ref, pkm.load(fivebar / "fivebar.toml").x_ref)


def test_ball_joint_and_weld_are_read(tmp_path):
    """A ball joint becomes an S joint; a weld merges its two bodies (masses added): a 3-DOF
    spherical pendulum made of two welded halves."""
    text = """<mujoco><worldbody>
      <body name="a" pos="0 0 -0.5"><joint name="ball" type="ball" pos="0 0 0.5"/>
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.02 0.03"/></body>
      <body name="b" pos="0 0 -0.5"><inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
        <joint name="free_b" type="hinge" axis="1 0 0" pos="0 0 0.5"/></body>
    </worldbody>
    <equality><weld body1="a" body2="b"/></equality>
    <actuator><motor joint="free_b"/></actuator></mujoco>"""
    (tmp_path / "p.xml").write_text(text)
    spec, notes = load_robot_spec(tmp_path / "p.xml", platform="a", task="rotational")
    assert {j.name: j.type for j in spec.joints} == {"ball": "S", "free_b": "R"}
    assert [b.mass for b in spec.bodies] == [3.0]
    assert notes == []


def test_ref_shifts_the_joint_variable_with_a_note(tmp_path):
    text = fivebar_mjcf().replace('<joint name="mot2" axis="0 0 1"/>', '<joint name="mot2" axis="0 0 1" ref="0.5"/>')
    (tmp_path / "r.xml").write_text(text)
    spec, notes = load_robot_spec(tmp_path / "r.xml", platform="disk", task="planar")
    assert any("ref = 0.5" in n and "q − ref" in n for n in notes)


# ---------------------------------------------------------------- bad MJCF: one-line errors
BAD = [
    ("<mujoco><worldbody><body></mujoco>", "MuJoCo cannot compile"),
    ("""<mujoco><worldbody><body name="b"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
        </body></worldbody></mujoco>""", "free joints are not supported"),
    (fivebar_mjcf(equality_extra='<joint joint1="free1" joint2="free2"/>'), "only <connect> and <weld>"),
    (fivebar_mjcf(actuators='<motor site="centre"/>'), "only actuators on a joint"),
    (fivebar_mjcf(actuators='<motor joint="mot1"/><motor joint="mot1"/>'), "two actuators"),
]


BAD += [
    ('<mujoco><worldbody><body name="a"><joint axis="1 0 0"/><joint axis="0 1 0" pos="0 0 1"/><inertial pos="0 0 0" '
     'mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>', "are read only as one U or S joint"),
    (fivebar_mjcf(extra_joint='<joint name="tilt" axis="1 0 0"/>',
                  actuators='<motor joint="mot1"/><motor joint="mot2"/>'), "one axis of a U or S joint"),
    ('<robot name="r"><link name="a"/></robot>', "root element is <robot>, expected <mujoco>"),   # MuJoCo reads URDF too
    ('<mujoco><worldbody><body name="a" pos="nan 0 0"><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
     '</body></worldbody></mujoco>', "MuJoCo warns: XML contains a 'NaN'"),
    ('<mujoco><worldbody><body name="a" pos="1e300 0 0"><joint/><inertial pos="0 0 0" mass="1" '
     'diaginertia="1 1 1"/></body></worldbody></mujoco>', "numbers too large"),
]


@pytest.mark.parametrize("text,phrase", BAD)
def test_bad_mjcf_one_line_error(tmp_path, text, phrase, monkeypatch):
    monkeypatch.chdir(tmp_path)   # MuJoCo's warnings must not reach stderr or MUJOCO_LOG.TXT here
    (tmp_path / "bad.xml").write_text(text)
    (tmp_path / "bad.pkm.toml").write_text(FIVEBAR_SIDE)
    with pytest.raises(RobotFileError, match=phrase) as err:
        load_robot_spec(tmp_path / "bad.xml")
    assert "\n" not in str(err.value)
    check_run(["info", tmp_path / "bad.xml"], ok=False)
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_open_sites_connect_is_refused(tmp_path):
    """Two sites that do not coincide at qpos0: the loop is not closed at the reference configuration."""
    text = fivebar_mjcf().replace('<site name="centre"/>', '<site name="centre"/><site name="off" pos="0.01 0 0"/>')
    text = text.replace(f'{inertial(B2, cylinder(B2, P5, 0.015))}',
                        f'{inertial(B2, cylinder(B2, P5, 0.015))}<site name="end" pos="{f(P5 - B2)}"/>')
    text = text.replace(f'<connect name="pin2" body1="rod2" body2="disk" anchor="{f(P5 - B2)}"/>',
                        '<connect name="pin2" site1="end" site2="off"/>')
    (tmp_path / "bad.xml").write_text(text)
    with pytest.raises(RobotFileError, match="equality 'pin2': is violated by 0.01 at qpos0"):
        load_robot_spec(tmp_path / "bad.xml", platform="disk", task="planar")


def test_platform_and_task_are_asked_for(fivebar, tmp_path):
    (tmp_path / "r.xml").write_text(fivebar_mjcf())
    with pytest.raises(RobotFileError, match="an MJCF cannot say the platform"):
        load_robot_spec(tmp_path / "r.xml")
    with pytest.raises(RobotFileError, match="'nothing' is not a body or site"):
        load_robot_spec(tmp_path / "r.xml", platform="nothing", task="planar")
    with pytest.raises(RobotFileError, match="closure YAML"):
        load_robot_spec(tmp_path / "r.xml", closures="x.yaml")
    with pytest.raises(RobotFileError, match="file not found"):
        load_robot_spec(tmp_path / "none.xml")
    check_run(["info", tmp_path / "r.xml"], ok=False)
    check_run(["convert", fivebar / "robot.xml", tmp_path / "r.toml"], ok=True)
    assert np.allclose(torques(pkm.load(tmp_path / "r.toml")), torques(pkm.load(fivebar / "fivebar.toml")), rtol=1e-10)


def test_without_mujoco_one_line_error(fivebar, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(PkmError, match="pip install mujoco"):
        load_robot_spec(fivebar / "robot.xml")
