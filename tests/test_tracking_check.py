"""The closed-loop check of a planned motion (issue 31.5): computed-torque control with a wrong
model, tracking error and the commanded forces against the drives' limits
(:func:`pkm.control.tracking.closed_loop_check`)."""
import numpy as np
import pytest

import pkm
from pkm.control import closed_loop_check
from pkm.errors import InputError, RobotFileError
from pkm.trajectory import pick_place


@pytest.fixture(scope="module")
def delta():
    return pkm.load("examples/delta_servo.toml")


@pytest.fixture(scope="module")
def cycle(delta):
    return pick_place(delta.x_ref, 0.025, 0.305, 0.6, dt=0.01, names=delta.task.coordinate_names())


@pytest.fixture(scope="module")
def reports(delta, cycle):
    return {e: closed_loop_check(delta, cycle, model_error=e) for e in (0.0, 0.1, 0.2)}


def test_exact_model_tracks_and_commands_the_inverse_dynamics_torques(delta, cycle, reports):
    rep = reports[0.0]
    assert rep.max_error.max() < 5e-5   # only the controller's spline of the samples and the solver
    ref = delta.inverse_dynamics(cycle.x, cycle.xd, cycle.xdd)   # the planned motion's own motor torques
    assert np.abs(rep.tau - ref.tau).max() < 1e-5 * np.abs(ref.tau).max()
    moving = np.abs(ref.qd_act) > 1e-3   # at rest the gear's efficiency switches sides (driving/braking)
    scale = np.abs(ref.tau_motor).max()
    assert np.abs(rep.tau_motor - ref.tau_motor)[moving].max() < 1e-5 * scale
    peak = np.abs(ref.tau_motor).max(axis=0) / delta.drives.peak_torque
    np.testing.assert_allclose(rep.peak_ratio, peak, rtol=2e-2)
    assert rep.simulation.closure.max() < 1e-10


def test_model_error_grows_the_tracking_error_in_proportion(reports):
    e0, e1, e2 = (reports[k].max_error.max() for k in (0.0, 0.1, 0.2))
    assert e1 > 10 * e0
    assert 1.6 < e2 / e1 < 2.4   # "of the order of the model error times the accelerations over K_p"
    assert "model error" in reports[0.1].summary() and "\n" not in reports[0.1].summary()


def test_a_limit_below_the_needed_torque_is_reported_as_saturation(delta, cycle, reports):
    rep = closed_loop_check(delta, cycle, model_error=0.1, torque_limit=0.5 * delta.drives.peak_torque)
    np.testing.assert_allclose(rep.peak_ratio, 2 * reports[0.1].peak_ratio, rtol=1e-12)
    assert rep.peak_ratio.max() > 1.0 and reports[0.1].saturated.max() == 0
    assert np.all((rep.saturated >= 0) & (rep.saturated <= 1)) and rep.saturated.max() > 0


@pytest.mark.parametrize("kw", [dict(model_error=-1.0), dict(model_error=float("nan")),
                                dict(torque_limit=[1.0, 2.0]), dict(speed_limit=-3.0),
                                dict(torque_limit=float("nan")), dict(torque_limit=[1.0, 0.0, 1.0])])
def test_bad_arguments_are_one_line_errors(delta, cycle, kw):
    with pytest.raises(InputError) as exc:
        closed_loop_check(delta, cycle, **kw)
    assert "\n" not in str(exc.value)


def test_inertia_scale_scales_every_body_and_refuses_nonsense(delta):
    spec = delta.spec.with_inertia_scaled(1.1)
    for b0, b1 in zip(delta.spec.expanded()[0], spec.expanded()[0]):
        assert b1.mass == pytest.approx(1.1 * b0.mass) and np.allclose(b1.inertia, 1.1 * b0.inertia)
        assert np.array_equal(b1.com, b0.com)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(RobotFileError):
            delta.spec.with_inertia_scaled(bad)


def test_cli_cycle_check_prints_the_closed_loop(capsys):
    from pkm.cli.main import main

    assert main(["cycle", "examples/irsbot2_servo.toml", "--points", "64", "--check", "0.1"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "closed loop" in l)
    assert "the model's masses +10 %" in line and "tracking error max" in line and "× the limit" in line


@pytest.mark.parametrize("value", ["nan", "-1", "-2", "inf"])
def test_cli_cycle_bad_check_is_a_one_line_error(value, capsys):
    from pkm.cli.main import main

    assert main(["cycle", "examples/irsbot2_servo.toml", "--check", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pkm: error: --check") and "\n" not in err
