"""Results that do not depend on threads or luck: chunks, branches (assembly modes), jumps, sample
times in other units, singular configurations, non-finite results, sample indices in errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pkm
from conftest import ROBOTS, run_pkm
from pkm.kernels import batch
from pkm.trajectory import from_spec, line, sine

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml"}
ROBOT = {k: pkm.load(ROBOTS / f) for k, f in FILES.items()}
DELTA = ROBOT["delta"]
#: A reachable point of the Delta where a cold IK (from the reference configuration) lands on the
#: other elbow of limb 2 than the IK continued along the line from the reference.
X_FAR = np.array([0.58889366, -0.28236585, -0.54714781])


def _there_and_back(robot, x_far, n=300, dt=0.01):
    go = line(robot.x_ref, x_far, duration=n * dt, dt=dt)
    back = line(x_far, robot.x_ref, duration=n * dt, dt=dt)
    t = np.concatenate([go.t, n * dt + back.t[1:]])
    return t, *(np.vstack([getattr(go, k), getattr(back, k)[1:]]) for k in ("x", "xd", "xdd"))


# ------------------------------------------------------------------ threads and chunks
def test_threads_do_not_change_the_branch(monkeypatch):
    """The fuzz case: 600 samples out to X_FAR and back; the second chunk used to start cold on the
    other elbow (torques off by 1.6e4 N·m from sample 300 on)."""
    monkeypatch.setattr(batch, "SPLIT", 2)  # two segments of 301 (segment_length) whatever the host's pool
    t, x, xd, xdd = _there_and_back(DELTA, X_FAR)
    alone = DELTA.inverse_kinematics(X_FAR).q_act[0]
    for tt in (None, t):
        one = DELTA.inverse_dynamics(x, xd, xdd, t=tt, threads=1)
        assert abs(one.q_act[300, 1] - alone[1]) > 1.0  # the trajectory's branch is not the cold one
        for threads in (2, 3):
            other = DELTA.inverse_dynamics(x, xd, xdd, t=tt, threads=threads)
            assert np.abs(other.tau - one.tau).max() <= 1e-12
            assert np.abs(other.q_act - one.q_act).max() <= 1e-12


@st.composite
def _trajectories(draw):
    name = draw(st.sampled_from(sorted(FILES)))
    robot = ROBOT[name]
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    scale = draw(st.floats(0.2, 1.2))
    centre = robot.x_ref + scale * (tr.x.mean(axis=0) - robot.x_ref)
    amplitude = scale * draw(st.floats(0.3, 1.0)) * (tr.x.max(axis=0) - tr.x.min(axis=0)) / 2
    amplitude = amplitude * np.array(draw(st.lists(st.floats(-1, 1), min_size=len(centre), max_size=len(centre))))
    n = draw(st.integers(520, 900))
    period = draw(st.floats(0.5, 4.0))
    traj = sine(centre, amplitude, period, duration=n * 0.01, dt=0.01, names=robot.task.coordinate_names())
    return name, traj, draw(st.booleans()), draw(st.integers(1, 300))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trajectories())
def test_any_thread_count_and_chunking_gives_the_same_torques(case):
    """Threads 1, 2, 3, 7 give the same bits, at the default segment length and at any other; other
    segment lengths (another chunking of the work) agree to 1e-12 relative to the largest torque."""
    name, traj, with_t, segment = case
    robot = ROBOT[name]
    t = traj.t if with_t else None

    def run(threads):
        return robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=t, threads=threads)

    try:
        ref = run(1)
    except pkm.PkmError:
        return  # out of the workspace or singular: nothing to compare
    scale = max(1.0, np.abs(ref.tau).max())
    for threads in (2, 3, 7):
        r = run(threads)
        assert np.abs(r.tau - ref.tau).max() <= 1e-12 and np.abs(r.q_act - ref.q_act).max() <= 1e-12
    old = batch.SEGMENT, batch.SEGMENT_MAX
    try:
        batch.SEGMENT = batch.SEGMENT_MAX = segment  # every segment `segment` samples long, whatever N
        other = run(1)
        for threads in (2, 3, 7):
            r = run(threads)
            assert np.abs(r.tau - other.tau).max() <= 1e-12 and np.abs(r.q_act - other.q_act).max() <= 1e-12
    finally:
        batch.SEGMENT, batch.SEGMENT_MAX = old
    assert np.abs(other.tau - ref.tau).max() <= 1e-12 * scale
    assert np.abs(other.q_act - ref.q_act).max() <= 1e-12


# ------------------------------------------------------------------ jumps
def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [x for x in w if issubclass(x.category, pkm.BranchWarning)]


#: A jump of the Delta between two reachable points after which the warm-started IK lands on
#: another branch, while the straight line between them stays on sample 0's branch.
JUMP = np.array([[-0.50127538, 0.22900438, -0.76671447], [0.04580145, -0.44466792, -0.7383887]])


@pytest.mark.parametrize("api", ["inverse_dynamics", "inverse_kinematics"])
def test_a_jump_keeps_the_branch_and_warns_naming_the_sample(api):
    Z = np.zeros_like(JUMP)
    call = (lambda: DELTA.inverse_dynamics(JUMP, Z, Z)) if api == "inverse_dynamics" else \
        (lambda: DELTA.inverse_kinematics(JUMP))
    res, w = _caught(call)
    assert len(w) == 1 and "jumps at sample 1 " in str(w[0].message)
    # the branch of sample 0, continued finely along the jump (no jump left), independently
    path = JUMP[0] + np.linspace(0, 1, 401)[:, None] * (JUMP[1] - JUMP[0])
    fine, w_fine = _caught(lambda: DELTA.inverse_kinematics(path))
    assert not w_fine
    np.testing.assert_allclose(res.q_act[1], fine.q_act[-1], atol=1e-9)
    # without the check, warm-started from sample 0, Newton lands elsewhere
    warm = DELTA.inverse_kinematics(JUMP[1], start=[fine.joints[l.name][0] for l in DELTA.limbs])
    assert np.abs(warm.q_act[0] - res.q_act[1]).max() > 0.1


#: A jump (the fuzz case) whose target is on another branch of every continuation from sample 0.
JUMP_ACROSS = np.array([[0.491, 0.252, -0.600], [-0.169, -0.393, -0.715]])


@pytest.mark.parametrize("api", ["inverse_dynamics", "inverse_kinematics"])
def test_a_jump_across_a_singularity_warns_or_raises_naming_the_sample(api):
    Z = np.zeros_like(JUMP_ACROSS)

    def call(policy):
        if api == "inverse_dynamics":
            return DELTA.inverse_dynamics(JUMP_ACROSS, Z, Z, on_branch_change=policy)
        return DELTA.inverse_kinematics(JUMP_ACROSS, on_branch_change=policy)

    _, w = _caught(lambda: call("warn"))
    assert len(w) == 1 and "branch (assembly mode) changes at sample 1 " in str(w[0].message)
    with pytest.raises(pkm.BranchError, match="changes at sample 1 ") as info:
        call("raise")
    assert info.value.sample == 1
    with pytest.raises(ValueError, match="on_branch_change"):
        call("ignore")


def test_a_step_trajectory_is_never_silent():
    X = np.vstack([np.tile(JUMP[0], (200, 1)), np.tile(JUMP[1], (200, 1))])
    Z = np.zeros_like(X)
    res, w = _caught(lambda: DELTA.inverse_dynamics(X, Z, Z, t=np.arange(400) * 0.01))
    assert [str(x.message).count("sample 200 ") for x in w] == [1]
    assert np.abs(res.q_act[200:] - res.q_act[200]).max() < 1e-12


def test_a_smooth_trajectory_gives_no_warning():
    for robot in ROBOT.values():
        tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
        _, w = _caught(lambda: robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t))
        assert not w


# ------------------------------------------------------------------ sample times in other units
@pytest.mark.parametrize("name", sorted(FILES))
def test_sample_times_in_other_units_give_the_same_result(name):
    """t in ms with rates per second: the fuzz case failed with 'residual 1.2e-12 after 50 Newton
    iterations' (predictions thousands of radians off); such a prediction is now discarded."""
    robot = ROBOT[name]
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    ref = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    for factor in (10.0, 1000.0):
        res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t * factor)
        assert np.abs(res.q_act - ref.q_act).max() <= 1e-12
        assert np.abs(res.tau - ref.tau).max() <= 1e-12


def test_coarse_sampling_stays_on_the_revolution():
    """Three samples per period: joint values stay within a turn of the finely sampled ones."""
    tr = sine(DELTA.x_ref, [0.3, 0.0, 0.0], period=1.0, duration=3.0, dt=1 / 3)
    fine = sine(DELTA.x_ref, [0.3, 0.0, 0.0], period=1.0, duration=3.0, dt=1 / 300)
    res = DELTA.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    ref = DELTA.inverse_dynamics(fine.x, fine.xd, fine.xdd, t=fine.t)
    np.testing.assert_allclose(res.q_act, ref.q_act[::100], atol=1e-12)
    np.testing.assert_allclose(res.tau, ref.tau[::100], atol=1e-11)


# ------------------------------------------------------------------ singular configurations
def _stretched():
    """Task point 1e-12 m below the Delta's top workspace boundary (every arm stretched)."""
    lo, hi = -0.9, -0.5  # reachable, not reachable
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        try:
            DELTA.inverse_kinematics([0.0, 0.0, mid], singularity_threshold=np.inf)
            lo = mid
        except pkm.IKError:
            hi = mid
    return np.array([0.0, 0.0, lo - 1e-12])


def test_the_stretched_arm_is_reported_as_singular():
    x = _stretched()
    with pytest.raises(pkm.SingularityError):
        DELTA.inverse_kinematics(x)
    with pytest.raises(pkm.SingularityError):
        DELTA.eom(x, np.zeros(3))
    with pytest.raises(pkm.SingularityError):
        DELTA.inverse_dynamics(x, np.zeros(3), np.zeros(3))
    # what it used to return: a 4.8 kg robot with an apparent mass of ~1e11 kg
    M = DELTA.eom(x + [0, 0, -1e-3], np.zeros(3)).M_t
    assert M[2, 2] < 1e3


# ------------------------------------------------------------------ non-finite results, errors, input
def test_non_finite_torques_raise_naming_the_sample():
    tr = from_spec(DELTA.spec.trajectory, DELTA.task.coordinate_names())
    with pytest.raises(pkm.PkmError, match=r"non-finite actuator torque at sample 0 "):
        DELTA.inverse_dynamics(tr.x[:5], tr.xd[:5], tr.xdd[:5], gravity=[0, 0, -1e308])
    xd = tr.xd[:5].copy()
    xd[3] = 1e160
    with pytest.raises(pkm.PkmError, match=r"non-finite actuator torque at sample 3 "):
        DELTA.inverse_dynamics(tr.x[:5], xd, tr.xdd[:5])


def test_errors_of_a_trajectory_name_the_sample():
    X = np.array([[0.0, 0.0, -1.0], [0.05, 0.0, -1.0], [3.0, 0.0, -1.0]])
    with pytest.raises(pkm.IKError, match="sample 2 ") as info:
        DELTA.inverse_kinematics(X)
    assert info.value.sample == 2
    with pytest.raises(pkm.IKError) as info:
        DELTA.inverse_dynamics(X, 0 * X, 0 * X)
    assert info.value.sample == 2
    with pytest.raises(pkm.SingularityError) as info:
        DELTA.inverse_kinematics(np.vstack([X[:2], _stretched()]))
    assert info.value.sample == 2


@pytest.mark.parametrize("bad, match", [
    (dict(max_iter=0), "max_iter"), (dict(max_iter=-1), "max_iter"), (dict(max_iter=2.5), "max_iter"),
    (dict(tol=0.0), "tol"), (dict(tol=float("nan")), "tol"), (dict(singularity_threshold=-1.0), "singularity"),
])
@pytest.mark.parametrize("api", ["inverse_dynamics", "inverse_kinematics"])
def test_bad_solver_settings_are_value_errors(api, bad, match):
    x = DELTA.x_ref
    with pytest.raises(ValueError, match=match):
        if api == "inverse_dynamics":
            DELTA.inverse_dynamics(x, 0 * x, 0 * x, **bad)
        else:
            DELTA.inverse_kinematics(x, **bad)


def test_no_samples_and_complex_input_are_value_errors():
    empty = np.zeros((0, 3))
    with pytest.raises(ValueError, match="no samples"):
        DELTA.inverse_dynamics(empty, empty, empty)
    x = DELTA.x_ref + 0j
    x[0] += 1e-3j
    for call in (lambda: DELTA.inverse_kinematics(x), lambda: DELTA.inverse_dynamics(x, 0 * x, 0 * x),
                 lambda: DELTA.inverse_dynamics(DELTA.x_ref, np.zeros(3), np.zeros(3), t=[0j])):
        with pytest.raises(ValueError, match="complex"):
            call()


# ------------------------------------------------------------------ the command line
def _write_trajectory(path, X):
    n = len(X)
    from pkm.trajectory import Trajectory

    Trajectory(t=np.arange(n) * 0.01, names=("x", "y", "z"), x=X, xd=np.zeros_like(X), xdd=np.zeros_like(X)).to_csv(path)


def test_cli_names_the_global_sample_and_prints_a_jump_in_one_line(tmp_path):
    tr = from_spec(DELTA.spec.trajectory, DELTA.task.coordinate_names())
    X = tr.x.copy()
    X[633] = [3.0, 0.0, -1.0]  # unreachable
    _write_trajectory(tmp_path / "bad.csv", X)
    proc = run_pkm("inverse-dynamics", ROBOTS / FILES["delta"], "--trajectory", "file", "--file", tmp_path / "bad.csv",
                cwd=tmp_path)
    assert proc.returncode == 2 and "sample 633 " in proc.stderr and "Traceback" not in proc.stderr
    X = np.vstack([np.tile(JUMP[0], (50, 1)), np.tile(JUMP[1], (50, 1))])
    _write_trajectory(tmp_path / "jump.csv", X)
    proc = run_pkm("inverse-dynamics", ROBOTS / FILES["delta"], "--trajectory", "file", "--file", tmp_path / "jump.csv",
                "--out", tmp_path / "out.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if line.startswith("pkm: warning:")]
    assert len(warned) == 1 and "jumps at sample 50 " in warned[0]


def test_info_prints_the_reference_branch(tmp_path):
    proc = run_pkm("info", ROBOTS / FILES["delta"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "branch (assembly mode): the reference configuration's" in proc.stdout
    assert "det J_IK = -20.32" in proc.stdout
