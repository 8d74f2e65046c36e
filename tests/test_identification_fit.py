"""Identification's own judgement of its fit (found by a battery of bad data): torques the fit cannot explain are
refused, a model that does not explain the data and parameters the motion does not determine are warned of (their
± holds the derivative filter's error), and CSV columns in non-SI units are refused by every reader."""
from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

import pkm
from pkm.cli.main import main
from pkm.identification.base import robot_base_parameters
from pkm.identification.estimate import identify, read_data
from pkm.sim.inputs import read_table

from conftest import ROBOTS

PLANAR = ROBOTS / "planar_3rpr.toml"


def _rows(path):
    rows = list(csv.reader(open(path, encoding="utf-8")))
    return rows[0], np.array(rows[1:], dtype=float)


def _write(path, header, data):
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header] + data.tolist())
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The planar 3-RPR's data along an exciting trajectory and along a motion that barely turns the platform
    (1e-4 rad: the platform's inertia is hardly excited), as ``pkm inverse-dynamics --out`` writes them."""
    tmp = tmp_path_factory.mktemp("fit")
    assert main(["identify", str(PLANAR), "--excite", str(tmp / "exc.csv"), "--period", "1"]) == 0
    assert main(["inverse-dynamics", str(PLANAR), "--trajectory", "file", "--file", str(tmp / "exc.csv"),
                 "--out", str(tmp / "good.csv")]) == 0
    assert main(["inverse-dynamics", str(PLANAR), "--trajectory", "sine", "--center", "0", "0", "0", "--amplitude",
                 "0.08", "0.08", "0", "--rotation-amplitude", "0", "0", "1e-4", "--period", "2", "--duration", "2",
                 "--dt", "0.01", "--out", str(tmp / "weak.csv")]) == 0
    return tmp


def _identify(path):
    robot = pkm.load(PLANAR)
    return identify(robot, [read_data(robot, path)], robot_base_parameters(robot))[0]


def test_good_data_pass_silently_and_the_filter_error_is_in_the_plus_minus(runs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _identify(runs / "good.csv")
    assert np.all(est.explained > 0.9999) and np.all(est.rms < est.noise)
    assert np.all(est.uncertainty >= est.std) and np.any(est.filter != 0)
    # the ± covers the estimate's distance from the true parameters (noise-free data: the filter's error alone)
    robot = pkm.load(PLANAR)
    true = robot_base_parameters(robot).values(robot.dynamic_parameters()[1])
    assert np.all(np.abs(est.beta - true) <= 3 * est.uncertainty), (est.beta - true, est.uncertainty)
    assert not np.all(np.abs(est.beta - true) <= 3 * est.std)   # (the noise's ± alone did not)


def test_a_barely_excited_parameter_is_named_and_its_plus_minus_covers_the_truth(runs):
    """Before: ``b3 = 189.66 ± 13.9`` (true −0.039), silently."""
    with pytest.warns(pkm.AccuracyWarning, match=r"do not determine b1, b2, b3\b.*--excite"):
        est = _identify(runs / "weak.csv")
    robot = pkm.load(PLANAR)
    true = robot_base_parameters(robot).values(robot.dynamic_parameters()[1])
    assert abs(est.beta[2] - true[2]) > 100 and abs(est.beta[2] - true[2]) <= est.uncertainty[2]


@pytest.mark.parametrize("case, message", [
    ("noise", r"torque leg1/leg is explained only \d.* % by the fit"),
    ("dead", r"torque leg3/leg is constant"),
    ("swapped", r"is explained only"),
])
def test_torques_the_fit_cannot_explain_are_refused(runs, tmp_path, case, message):
    header, data = _rows(runs / "good.csv")
    tau = [i for i, c in enumerate(header) if c.startswith("tau_")]
    if case == "noise":
        data[:, tau] = np.random.default_rng(0).normal(0.0, 50.0, (len(data), len(tau)))
    elif case == "dead":
        data[:, tau[2]] = 0.0
    else:
        data[:, tau] = data[::-1][:, tau]   # the torques of the motion run backwards
    path = _write(tmp_path / f"{case}.csv", header, data)
    with pytest.raises(pkm.PkmError, match=message):
        _identify(path)
    code = main(["identify", str(PLANAR), "--data", str(path), "--out", str(tmp_path / "id.toml")])
    assert code != 0 and not (tmp_path / "id.toml").exists()


def test_an_offset_is_a_model_error_warning(runs, tmp_path):
    header, data = _rows(runs / "good.csv")
    tau = [i for i, c in enumerate(header) if c.startswith("tau_")]
    data[:, tau] += 20.0
    with pytest.warns(pkm.AccuracyWarning, match=r"residual is .* times the measured torques' own noise"):
        _identify(_write(tmp_path / "offset.csv", header, data))


@pytest.mark.parametrize("unit", ["kN", "ms", "mm", "deg", "N·mm"])
def test_columns_in_other_units_are_refused(runs, tmp_path, unit):
    """A log in kN was read as N (masses 1000× too small), times in ms as s: every CSV reader that strips the unit
    suffix refuses a non-SI one, naming the column (SI suffixes as pkm writes them pass)."""
    header, data = _rows(runs / "good.csv")
    k = {"kN": "tau_leg1/leg", "N·mm": "tau_leg1/leg", "ms": "t", "mm": "q_leg1/leg", "deg": "q_leg2/leg"}[unit]
    j = next(i for i, c in enumerate(header) if c.split(" [")[0] == k)
    header = list(header)
    header[j] = f"{k} [{unit}]"
    path = _write(tmp_path / "units.csv", header, data)
    robot = pkm.load(PLANAR)
    with pytest.raises(pkm.InputError, match=rf"column '{k}' is in '{unit}': pkm reads SI units"):
        read_data(robot, path)
    if k.startswith("tau") or k == "t":
        with pytest.raises(pkm.InputError, match=rf"column '{k}' is in '{unit}'"):
            read_table(path, robot.actuator_names)
    read_table(runs / "good.csv", robot.actuator_names)   # pkm's own suffixes ([m], [N]) pass


def test_an_overflowing_torque_column_is_named(runs, tmp_path):
    header, data = _rows(runs / "good.csv")
    j = header.index("tau_leg3/leg [N]")
    data[:, j] *= 1e200
    with pytest.raises(pkm.PkmError, match=r"torque leg3/leg overflows the fit \(values up to .*e\+2\d\d: units\?\)"):
        _identify(_write(tmp_path / "huge.csv", header, data))


def test_a_bad_validation_file_writes_no_robot_file(runs, tmp_path):
    """The validation data are read before ``--out`` is written: a missing one had left the identified file
    written and the command failed."""
    out = tmp_path / "id.toml"
    code = main(["identify", str(PLANAR), "--data", str(runs / "good.csv"), "--out", str(out),
                 "--validate", str(tmp_path / "missing.csv")])
    assert code != 0 and not out.exists()
    assert main(["identify", str(PLANAR), "--data", str(runs / "good.csv"), "--out", str(out),
                 "--validate", str(runs / "good.csv")]) == 0 and out.exists()
