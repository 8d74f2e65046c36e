"""Design over cycle time (issue 31.4): a sweep reports each design's time-optimal cycle time
(:func:`pkm.sweep` with ``time_optimal=True``, ``pkm sweep --time-optimal``)."""
import numpy as np
import pytest

import pkm
from pkm.errors import PkmError
from pkm.planning import pick_place_route

ROBOT = "examples/delta_servo.toml"


@pytest.fixture(scope="module")
def arm_sweep():
    return pkm.sweep(ROBOT, {"a": [220, 280]}, executor="serial", time_optimal=True, progress=False,
                     cycle_points=300)


def test_sweep_over_arm_length_returns_each_designs_cycle_time(arm_sweep):
    cyc = arm_sweep.as_array("cycle_time")
    assert cyc.shape == (2, 1) and np.all(np.isfinite(cyc)) and arm_sweep.n_ok == 2
    for a, row in zip((220, 280), arm_sweep.rows):   # the same as planning that design by hand
        robot = pkm.load(ROBOT, parameters={"a": a})
        traj = robot.spec.trajectory
        ref = pkm.time_optimal(robot, pick_place_route(traj["start"], traj["lift"], traj["travel"],
                                                       0.5 * traj["lift"]), n=300)
        assert row["cycle_time"] == pytest.approx(ref.cycle_time, rel=1e-12)
        assert row["picks_per_minute"] == pytest.approx(60.0 / ref.cycle_time, rel=1e-12)
        assert row["cycle_limit"].startswith(("torque", "speed"))
    assert cyc[0, 0] != cyc[1, 0]   # the design changes the cycle


def test_heavier_payload_is_slower():
    res = pkm.sweep(ROBOT, {"mass:platform": [0.5, 2.0]}, executor="serial", time_optimal=True, progress=False,
                    cycle_points=200)
    light, heavy = res.as_array("cycle_time")[:, 0]
    assert heavy > light * 1.05


def test_cli_writes_the_cycle_time_column_and_panel(tmp_path, capsys):
    from pkm.cli.main import main

    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    assert main(["sweep", ROBOT, "--param", "a=220,280", "--time-optimal", "--workers", "1", "--no-progress",
                 "--out", str(out), "--plot", str(png)]) == 0
    header = out.read_text().splitlines()[0].split(",")
    assert "cycle_time [s]" in header and "picks_per_minute [1/min]" in header and "cycle_limit" in header
    rows = [line.split(",") for line in out.read_text().splitlines()[1:]]
    assert all(0.1 < float(r[header.index("cycle_time [s]")]) < 1.0 for r in rows)
    assert png.stat().st_size > 0 and "cycle [s]" in capsys.readouterr().out


@pytest.mark.parametrize("kw, text", [
    (dict(parameters=None, trajectories=[{"type": "sine", "amplitude": [0.01, 0, 0], "period": 1.0}]),
     "pick-place or line"),
    (dict(parameters=None, cycle_points=3), "cycle_points"),
])
def test_bad_time_optimal_sweeps_are_one_line_errors(kw, text):
    with pytest.raises(PkmError, match=text) as exc:
        pkm.sweep(ROBOT, executor="serial", time_optimal=True, progress=False, **kw)
    assert "\n" not in str(exc.value)


def test_robot_without_drives_is_refused_at_once():
    with pytest.raises(PkmError, match="drives") as exc:
        pkm.sweep("robots/delta_3rr2rrr.toml", {"a": [250]}, executor="serial", time_optimal=True, progress=False)
    assert "\n" not in str(exc.value)
