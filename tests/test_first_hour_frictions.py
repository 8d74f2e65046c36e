"""The first hour's frictions (issue 30, item 5), one test per friction: the compile message, the
notebooks' working directory (tests/test_notebooks.py), the plots' names and panels, `pkm eom`'s
equation, progress on stderr."""

from __future__ import annotations

import numpy as np
import pytest

import pkm

from conftest import ROBOTS
from test_bad_input import DELTA_PATH, one_line_error, run_main

RPR = ROBOTS / "planar_3rpr.toml"


# ====================================================================== pkm eom: the sides of the equation
def test_eom_says_on_which_side_each_term_stands(capsys):
    """`pkm eom` printed W_t^grav without the equation it belongs to: a user could not tell whether
    the actuators hold +W_t^grav or −W_t^grav."""
    code, out, err = run_main(capsys, "eom", DELTA_PATH, "--at", 0.05, 0.0, -0.9)
    assert code == 0, err
    assert "M_t V̇_t + C_t V_t + W_t^grav = J_IKᵀ u + W^EE" in out
    labels = {line.split()[0]: line for line in out.splitlines() if line[:1] in "MCWJ" and line.endswith(":")}
    for term in ("M_t", "C_t·V_t", "W_t^grav"):
        assert "left side" in labels[term], labels
    assert "right side" in labels["J_IK"]
    # the stated side is the one the numbers obey: at rest the actuators' J_IKᵀ u equals +W_t^grav
    robot = pkm.load(DELTA_PATH)
    x = np.array([0.05, 0.0, -0.9])
    e = robot.eom(x, np.zeros(3))
    u = robot.inverse_dynamics(x, np.zeros(3), np.zeros(3)).tau[0]
    np.testing.assert_allclose(e.J_IK.T @ u, e.W_t_grav, rtol=1e-9, atol=1e-9)
    assert np.abs(e.W_t_grav).max() > 1.0


# ====================================================================== the compile message
def test_compile_message_on_stderr_without_a_terminal(monkeypatch):
    """The message showed only on a terminal: a user piping stderr to a log (or a notebook) waited
    without a word. Now always, unless PKM_COMPILE_MESSAGE=0."""
    from pkm.cli.main import _announcer, build_parser

    monkeypatch.delenv("PKM_COMPILE_MESSAGE", raising=False)
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    messages = []
    args = build_parser().parse_args(["eom", str(RPR), "--at", "0", "0", "0"])
    ann = _announcer(args, messages.append)
    ann.write("x")
    assert messages == ["x"]
    assert ann.key == f"one-point|eom|{RPR.resolve()}" and ann.kind == "one-point"
    monkeypatch.setenv("PKM_COMPILE_MESSAGE", "0")
    _announcer(args, messages.append).write("y")
    assert messages == ["x"]


def test_compile_estimate_from_the_robot_not_the_slowest_ever(tmp_path):
    """The message said "~90 s" (the slowest compile ever recorded here) before a 17.6 s compile: the
    estimate is now the last measurement of the same command and robot, else of the same kind of
    command, else the figure measured for that kind (a one-point command compiles ~1 s, not ~10 s)."""
    import json

    import numba

    from pkm.lie.numba_cache import DEFAULT_COMPILE_SECONDS, TIMING, CompileAnnouncer, compile_estimate

    root = tmp_path / "pkg"
    (root / "__pycache__").mkdir(parents=True)
    assert compile_estimate(root, "one-point|eom|a.toml", "one-point") == round(DEFAULT_COMPILE_SECONDS["one-point"])
    assert compile_estimate(root, "trajectory|simulate|a.toml", "trajectory") == 10
    (root / "__pycache__" / TIMING).write_text(json.dumps({"trajectory|inverse-dynamics|big.toml": 90.0,
                                                           "trajectory|inverse-dynamics|small.toml": 17.6}))
    assert compile_estimate(root, "trajectory|inverse-dynamics|small.toml", "trajectory") == 20
    assert compile_estimate(root, "trajectory|inverse-dynamics|big.toml", "trajectory") == 90
    assert compile_estimate(root, "trajectory|simulate|new.toml", "trajectory") == 55   # median of this machine's
    assert compile_estimate(root, "compile|compile|a,b,c", "compile", robots=3) == 65  # 53.8 + 2 × 6
    # a run that compiles records its own time under its key
    messages = []
    f = numba.njit(lambda v: v * 3.5 + 1)
    with CompileAnnouncer(messages.append, root=root, key="trajectory|sweep|c.toml") as ann:
        assert f(2.0) == 8.0
    assert messages and messages[0].startswith("compiling kernels (first run only, ~55 s")
    times = json.loads((root / "__pycache__" / TIMING).read_text())
    if ann.seconds > 0.5:
        assert times["trajectory|sweep|c.toml"] == pytest.approx(ann.seconds, abs=0.06)


# ====================================================================== plots
@pytest.fixture
def captured(monkeypatch):
    """The figures pkm's plotting functions return during a CLI run, by function name."""
    import pkm.plotting as plotting

    figs = {}
    for name in ("plot_simulation", "plot_actuators"):
        original = getattr(plotting, name)

        def wrapper(*a, _original=original, _name=name, **kw):
            figs[_name] = _original(*a, **kw)
            return figs[_name]
        monkeypatch.setattr(plotting, name, wrapper)
    return figs


def test_computed_torque_plot_shows_torques_and_tracking_error(tmp_path, capsys, captured):
    """The simulation plot of computed-torque control showed neither the torques nor how well the
    trajectory was tracked, and its title named the input by its option value ("…: zero")."""
    png = tmp_path / "ct.png"
    code, out, err = run_main(capsys, "simulate", RPR, "--torques", "computed-torque", "--duration", 0.1, "--dt",
                              0.01, "--plot", png)
    assert code == 0, err
    fig = captured["plot_simulation"]
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == ["actuator position [m]", "actuator force [N]", "task coordinate [m, rad]",
                      "tracking error [m, rad]", "E − E(0) − W [J]"]
    assert ": simulated under computed-torque control along the 0.1 s trajectory" in fig._suptitle.get_text()
    err_lines = fig.axes[3].get_lines()
    assert [l.get_label() for l in err_lines] == ["rz − rz_ref [rad]", "x − x_ref [m]", "y − y_ref [m]"]
    tracking = np.concatenate([l.get_ydata() for l in err_lines])
    # the controller's own reference x_d(t) (its splines), not the samples interpolated linearly (whose
    # chords differ from the motion by ~1e-5 m here): an exact model tracks to round-off and the gain's lag
    assert np.all(np.isfinite(tracking)) and 0 < np.abs(tracking).max() < 1e-7
    forces = np.concatenate([l.get_ydata() for l in fig.axes[1].get_lines()])
    assert np.abs(forces).max() > 0


def test_simulation_plot_title_names_the_input(tmp_path, capsys, captured):
    code, _, err = run_main(capsys, "simulate", RPR, "--torques", "zero", "--duration", 0.02, "--plot",
                            tmp_path / "z.png")
    assert code == 0, err
    fig = captured["plot_simulation"]
    title = fig._suptitle.get_text()
    assert title.endswith(": simulated under zero torque") and not title.endswith(": zero")
    assert len(fig.axes) == 4      # no reference: no tracking-error panel


def test_reactions_plot_one_panel_per_limb():
    """The reactions plot drew the Delta's 21 joints as 21 curves in one panel, labelled "limb1, joint 1"
    …: one panel per limb now (titled by the limb), its joints labelled by their own names."""
    from pkm.plotting.reactions import plot_reactions

    names = [f"limb{l}/{j}" for l in (1, 2, 3) for j in range(1, 8)]
    t = np.linspace(0.0, 1.0, 5)
    F = np.random.default_rng(0).normal(size=(5, 21, 6))
    fig = plot_reactions(t, F, names, title="Delta: joint reaction forces")
    assert len(fig.axes) == 3 and [ax.get_title(loc="left") for ax in fig.axes] == ["limb1", "limb2", "limb3"]
    for ax, l in zip(fig.axes, (1, 2, 3)):
        lines = ax.get_lines()
        assert [x.get_label() for x in lines] == [f"joint {j}" for j in range(1, 8)]
        k = names.index(f"limb{l}/2")
        np.testing.assert_allclose(lines[1].get_ydata(), np.linalg.norm(F[:, k, :3], axis=1))
    rpr = plot_reactions(t, F[:, :9], [f"leg{l}/{j}" for l in (1, 2, 3) for j in ("base", "leg", "top")])
    assert [x.get_label() for x in rpr.axes[0].get_lines()] == ["base", "leg", "top"]


def test_pkm_reactions_plot_has_a_panel_per_limb(tmp_path, capsys, monkeypatch):
    import pkm.plotting.reactions as module

    figs = []
    original = module.plot_reactions
    monkeypatch.setattr(module, "plot_reactions", lambda *a, **kw: figs.append(original(*a, **kw)) or figs[-1])
    code, _, err = run_main(capsys, "reactions", DELTA_PATH, "--samples", 2, "--plot", tmp_path / "r.png")
    assert code == 0, err
    [fig] = figs
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["limb1", "limb2", "limb3"]
    assert [x.get_label() for x in fig.axes[0].get_lines()][:3] == ["joint 1 (arm)", "joint 2 (upper_link)",
                                                                    "joint 3 (rod1)"]


def test_reactions_progress_bar_and_one_error_line_after_it(tmp_path, capsys, monkeypatch):
    """`pkm reactions` ran ~1 s per sample in silence (67 s for 50 Delta samples): a bar on stderr
    above PROGRESS_ABOVE samples; an error after the bar started still ends stderr with one error
    line (the bar's lines, holding "%|", are not errors: tests/test_corpus.py check_run)."""
    import pkm.cli.reactions as reactions

    code, out, err = run_main(capsys, "reactions", RPR, "--samples", reactions.PROGRESS_ABOVE + 1)
    assert code == 0, err
    assert "joint reactions: 100%|" in err and f"{reactions.PROGRESS_ABOVE + 1}/{reactions.PROGRESS_ABOVE + 1}" in err
    code, out, err = run_main(capsys, "reactions", RPR, "--samples", 2)
    assert code == 0 and err == ""                                  # short: no bar
    original, calls = reactions.ik_configuration, []

    def failing(*a, **kw):
        calls.append(1)
        if len(calls) == 4:
            raise pkm.PkmError("sample 4 cannot be assembled")
        return original(*a, **kw)
    monkeypatch.setattr(reactions, "ik_configuration", failing)
    code, _, err = run_main(capsys, "reactions", RPR, "--samples", 8)
    line = one_line_error(code, err, "sample 4 cannot be assembled")
    assert err.rstrip("\n").splitlines()[-1] == line and "joint reactions:" in err
    assert all("%|" in l for l in err.splitlines()[:-1] if l.strip())


def test_animation_progress_and_a_larger_mechanism_panel(tmp_path, capsys, monkeypatch):
    """`pkm animate` wrote its frames for ~50 s in silence, and the mechanism had half of a small figure."""
    import pkm.plotting as plotting
    import pkm.cli.show as show

    made = {}
    original = plotting.animate

    def spy(*a, **kw):
        made["anim"] = original(*a, **kw)
        return made["anim"]
    monkeypatch.setattr(plotting, "animate", spy)
    frames = show.ANIMATE_PROGRESS_ABOVE + 1
    code, _, err = run_main(capsys, "animate", RPR, "--trajectory", "line", "--end", 0.02, 0.0, 0.0, "--duration",
                            0.2, "--dt", 0.01, "--frames", frames, "--out", tmp_path / "a.gif")
    assert code == 0, err
    assert f"animation: 100%|" in err and f"{frames}/{frames}" in err
    fig = made["anim"]._fig
    mech, forces = fig.axes[0], fig.axes[1]
    assert mech.name == "3d"
    w, h = fig.get_size_inches()
    assert mech.get_position().width * w >= 6.0 > forces.get_position().width * w     # was 10 × 0.35 in
    assert mech.get_position().width > 1.3 * forces.get_position().width


# ====================================================================== pkm show: prismatic joints
LINEAR_DELTA = ROBOTS.parent / "tests" / "robots_ok" / "linear_delta_3puu.toml"


def _pose(robot):
    return robot.x_ref + 0.02 * np.sin(np.arange(1, robot.task_dof + 1))


@pytest.mark.parametrize("path", [LINEAR_DELTA, RPR], ids=["linear_delta", "planar_3rpr"])
def test_show_draws_prismatic_guides(path):
    """`pkm show` drew a prismatic joint as a point and nothing of the guide it slides on: every
    prismatic joint now has its guide, a segment along the joint's axis that holds the joint's point
    (and its reference point, carried by the parent body)."""
    from pkm.plotting import mechanism, show_robot

    robot = pkm.load(path)
    x = _pose(robot)
    fig = show_robot(robot, x)
    m = mechanism(robot, x)
    for limb in robot.limbs:
        prismatic = [i for i in range(limb.n) if limb.tree.axis_kind[i] == "P"]
        assert prismatic
        drawn = [l for l in fig.axes[0].get_lines() if l.get_gid() == f"guides:{limb.name}"]
        assert len(drawn) == len(prismatic) == len(m.guides[limb.name])
        for line, i in zip(drawn, prismatic):
            a, b = np.array(line.get_data_3d()).T
            p = m.joints[limb.name][i]
            e = (b - a) / np.linalg.norm(b - a)
            assert abs(abs(e @ m.axes[limb.name][i]) - 1.0) < 1e-9                      # along the axis
            off = (p - a) - e * (e @ (p - a))
            assert np.linalg.norm(off) < 1e-9 and 0.0 < e @ (p - a) < np.linalg.norm(b - a)   # holds the joint


def test_show_base_outline_joins_fixed_points_not_carriages():
    """The linear Delta's base outline joined the carriages (the prismatic first joints' moving
    points), so it moved with the actuators: it joins the guides' fixed points now."""
    from pkm.plotting import show_robot

    robot = pkm.load(LINEAR_DELTA)
    assert all(limb.tree.axis_kind[0] == "P" for limb in robot.limbs)
    bases = []
    for x in (robot.x_ref, _pose(robot)):
        fig = show_robot(robot, x)
        [line] = [l for l in fig.axes[0].get_lines() if l.get_gid() == "base"]
        bases.append(np.array(line.get_data_3d()).T)
    np.testing.assert_allclose(bases[0], bases[1], atol=1e-12)
    q = robot.inverse_kinematics(_pose(robot)).q_act[0]
    assert np.abs(q - robot.inverse_kinematics(robot.x_ref).q_act[0]).max() > 1e-3   # the carriages did move


# ====================================================================== legends: the file's names
def test_legends_name_the_actuators_as_the_robot_file_does(tmp_path, capsys, captured):
    """The legends read "limb1, joint 1" (pkm's numbering of the Delta's joints "1"…"7"): the body the
    actuator moves, as the file names it, is in the label now ("limb1, joint 1 (arm)")."""
    from pkm.plotting.style import joint_labels

    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--duration", 0.2, "--dt", 0.02, "--plot",
                            tmp_path / "d.png")
    assert code == 0, err
    fig = captured["plot_actuators"]
    expected = [f"limb{k}, joint 1 (arm)" for k in (1, 2, 3)]
    assert [l.get_label() for l in fig.axes[0].get_lines()] == expected
    rpr = pkm.load(RPR)
    assert joint_labels(rpr) == ["leg1, leg (rod)", "leg2, leg (rod)", "leg3, leg (rod)"]
    assert joint_labels(rpr, ["leg1/base", "leg1/top", "other"]) == ["leg1, base (cylinder)", "leg1, top (platform)", "other"]
    code, _, err = run_main(capsys, "simulate", RPR, "--torques", "zero", "--duration", 0.02, "--plot", tmp_path / "s.png")
    assert code == 0, err
    assert [l.get_label() for l in captured["plot_simulation"].axes[0].get_lines()] == \
        [f"leg{k}, leg (rod)" for k in (1, 2, 3)]


def test_pkm_compile_shows_a_bar_over_the_robots(capsys):
    """`pkm compile` of several robots said nothing between robots on a quiet terminal: a bar over
    the robots, each robot's line above it."""
    code, out, err = run_main(capsys, "compile", RPR, RPR)
    assert code == 0, err
    assert "compile: 100%|" in err and "2/2" in err and err.count(f"{RPR}: kernels ready") == 2
    code, out, err = run_main(capsys, "compile", RPR)
    assert code == 0 and "%|" not in err and f"{RPR}: kernels ready" in err


def test_computed_torque_simulation_shows_progress_and_the_same_motion(tmp_path, capsys, monkeypatch):
    """A long computed-torque simulation (the controller runs in Python at every step) ran in silence:
    a bar of the simulated time now, which changes nothing of the motion."""
    import pkm.cli.simulate as simulate

    args = ["simulate", RPR, "--torques", "computed-torque", "--duration", 0.3, "--dt", 0.01, "--out"]
    code, out, err = run_main(capsys, *args, tmp_path / "a.csv")
    assert code == 0, err
    assert "simulate: 100%|" in err and "1000/1000" in err
    monkeypatch.setattr(simulate, "PROGRESS_SPAN", 10.0)
    code, out2, err2 = run_main(capsys, *args, tmp_path / "b.csv")
    assert code == 0 and "%|" not in err2, err2
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


@pytest.mark.parametrize("torques", ["zero", "table"])
def test_long_simulations_show_progress_at_a_terminal_and_errors_stay_one_line(tmp_path, capsys, monkeypatch,
                                                                               torques):
    """Issue 30.5: long `simulate` runs of zero or tabulated torques were silent. At a terminal they
    show a bar of the simulated time (the same motion to the last digit); in a log or pipe none, so
    that a run ending in an error (the Delta's free fall into its singularity) keeps its one line."""
    import pkm.cli.simulate as simulate

    if torques == "table":
        table = tmp_path / "tau.csv"
        code, _, err = run_main(capsys, "inverse-dynamics", RPR, "--out", table)
        assert code == 0, err
        torques = table
    args = ["simulate", RPR, "--torques", torques, "--duration", 0.3, "--step", 0.01, "--out"]
    code, _, err = run_main(capsys, *args, tmp_path / "b.csv")
    assert code == 0 and "%|" not in err, err                     # not a terminal: no bar
    monkeypatch.setattr(simulate, "_interactive", lambda: True)
    code, _, err = run_main(capsys, *args, tmp_path / "a.csv")
    assert code == 0, err
    assert "simulate: 100%|" in err and "1000/1000" in err
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    monkeypatch.setattr(simulate, "_interactive", lambda: False)
    code, _, err = run_main(capsys, "simulate", DELTA_PATH, "--torques", "zero", "--duration", 0.5, "--form", "task")
    assert code == 2 and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("torques", ["hold", "table"])
def test_numba_rk4_simulations_show_an_advancing_bar_at_a_terminal(tmp_path, capsys, monkeypatch, torques):
    """Issue 30.5: `--method RK4 --form task` with hold or tabulated torques runs the whole RK4 in numba,
    which showed no bar at all. It now runs in chunks of steps, and at a terminal the bar advances
    after each (the same motion to the last digit as without a bar); in a log or pipe no bar, and a
    run ending in an error keeps its one line."""
    import pkm.cli.simulate as simulate
    import pkm.sim.task as task

    monkeypatch.setattr(task, "CHUNK_STEPS", 50)
    if torques == "table":
        table = tmp_path / "tau.csv"
        code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--duration", 0.4, "--dt", 0.01, "--out", table)
        assert code == 0, err
        torques = table
    args = ["simulate", DELTA_PATH, "--torques", torques, "--method", "RK4", "--step", 0.001, "--form", "task",
            "--duration", 0.3, "--out"]
    code, _, err = run_main(capsys, *args, tmp_path / "b.csv")
    assert code == 0 and "%|" not in err, err                     # not a terminal: no bar
    seen = []

    class Spy(simulate._Progress):
        def __call__(self, t):
            seen.append((t, self.bar.n))
            super().__call__(t)

    monkeypatch.setattr(simulate, "_interactive", lambda: True)
    monkeypatch.setattr(simulate, "_Progress", Spy)
    code, _, err = run_main(capsys, *args, tmp_path / "a.csv")
    assert code == 0, err
    assert "simulate: 100%|" in err and "1000/1000" in err
    times = [t for t, _ in seen]
    # 301 passes in chunks of 50 (the last only solves the end state): the time after each
    assert times == pytest.approx([0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.3])
    assert np.all(np.diff([n for _, n in seen]) > 0)    # the bar (its position before each report) advanced
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    monkeypatch.setattr(simulate, "_interactive", lambda: False)
    code, _, err = run_main(capsys, "simulate", DELTA_PATH, "--torques", "zero", "--duration", 0.5, "--form", "task",
                            "--method", "RK4", "--step", 0.002)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
