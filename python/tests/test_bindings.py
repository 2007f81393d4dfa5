"""diffmj's Python bindings against the `mujoco` package (same functions, same numbers) and
against themselves (views, pickling, errors, threads)."""
import pickle

import mujoco
import numpy as np
import pytest

import diffmj

from conftest import MODELS

CARTPOLE = str(MODELS / "cartpole.xml")
STACKS = str(MODELS / "constraints" / "stacks.xml")
# contacts with the floor, and trajectories that agree with MuJoCo's to rounding
CHEETAH = str(MODELS / "thirdparty" / "dm_control" / "cheetah.xml")


def pair(path):
    return diffmj.Model.from_xml_path(path), mujoco.MjModel.from_xml_path(path)


def test_sizes_and_fields_match_mujoco():
    m, mm = pair(STACKS)
    for n in ["nq", "nv", "nu", "na", "nbody", "ngeom", "njnt"]:
        assert getattr(m, n) == getattr(mm, n), n
    np.testing.assert_allclose(m.body_mass, mm.body_mass, rtol=1e-12)
    np.testing.assert_allclose(m.geom_friction, mm.geom_friction)
    np.testing.assert_array_equal(m.jnt_type, mm.jnt_type)
    assert m.opt_timestep == mm.opt.timestep
    # real fields are writable as in MuJoCo (python/tests/test_model_fields.py), the integer
    # structure is not
    assert m.body_mass.flags.writeable
    assert not m.jnt_type.flags.writeable


@pytest.mark.parametrize("path,steps", [(CARTPOLE, 500), (CHEETAH, 1000)])
def test_step_trajectory_matches_mujoco(path, steps):
    m, mm = pair(path)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(0)
    worst = 0.0
    for k in range(steps):
        u = rng.uniform(-1, 1, m.nu)
        d.ctrl[:] = u
        md.ctrl[:] = u
        d.step()
        mujoco.mj_step(mm, md)
        worst = max(worst, np.abs(d.qpos - md.qpos).max(), np.abs(d.qvel - md.qvel).max())
    assert d.time == pytest.approx(md.time)
    assert worst < 1e-10, worst


def test_forward_fields_match_mujoco():
    m, mm = pair(CHEETAH)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    for _ in range(200):
        d.step()
        mujoco.mj_step(mm, md)
    d.forward()
    mujoco.mj_forward(mm, md)
    assert d.ncon == md.ncon and d.nefc == md.nefc
    np.testing.assert_allclose(d.xpos, md.xpos, atol=1e-9)
    np.testing.assert_allclose(d.qacc, md.qacc, atol=1e-7)
    np.testing.assert_allclose(d.efc_force, md.efc_force, atol=1e-6)
    full = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, md, full)
    np.testing.assert_allclose(d.full_m(), full, atol=1e-12)


def test_inverse_matches_mujoco():
    m, mm = pair(CHEETAH)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    for _ in range(100):
        d.step()
        mujoco.mj_step(mm, md)
    d.forward()
    mujoco.mj_forward(mm, md)
    d.inverse()
    mujoco.mj_inverse(mm, md)
    np.testing.assert_allclose(d.qfrc_inverse, md.qfrc_inverse, atol=1e-8)


def test_state_masks_are_mujocos():
    assert diffmj.State.FULLPHYSICS == int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    assert diffmj.State.QPOS == int(mujoco.mjtState.mjSTATE_QPOS)
    m, mm = pair(CARTPOLE)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    d.reset_keyframe("upright")
    mujoco.mj_resetDataKeyframe(mm, md, 0)
    mask = diffmj.State.FULLPHYSICS
    x = d.get_state(mask)
    xm = np.zeros(mujoco.mj_stateSize(mm, mask))
    mujoco.mj_getState(mm, md, xm, mask)
    np.testing.assert_array_equal(x, xm)
    assert d.state_size(mask) == len(xm)
    x[0] = 3.0
    d.set_state(x, mask)
    assert d.time == 3.0


def test_views_are_views_and_writable():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    d = diffmj.Data(m)
    q = d.qpos
    d.qpos[1] = 0.4
    assert q[1] == 0.4
    d.step()
    assert q[1] == d.qpos[1] != 0.4  # the view follows the simulation
    d.qvel = [1.0, 2.0]
    np.testing.assert_array_equal(d.qvel, [1.0, 2.0])
    del d
    assert np.isfinite(q).all()  # the array keeps its Data alive


def test_transition_jacobian_matches_mjd_transitionFD():
    m, mm = pair(CHEETAH)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    for _ in range(200):
        d.step()
        mujoco.mj_step(mm, md)
    A, B = diffmj.transition_jacobian(m, d, method="ad")
    ndx = 2 * mm.nv + mm.na
    Am, Bm = np.zeros((ndx, ndx)), np.zeros((ndx, mm.nu))
    mujoco.mjd_transitionFD(mm, md, 1e-6, True, Am, Bm, None, None)
    assert A.shape == Am.shape and B.shape == Bm.shape
    assert np.abs(A - Am).max() < 1e-5 * max(1.0, np.abs(Am).max())
    assert np.abs(B - Bm).max() < 1e-5 * max(1.0, np.abs(Bm).max())
    Af, Bf = diffmj.transition_jacobian(m, d, method="fd", eps=1e-6, centered=True)
    assert np.abs(Af - Am).max() < 1e-6 * max(1.0, np.abs(Am).max())


def test_transition_jacobian_with_sensors():
    # the cartpole integrates by RK4, which mjd_transitionFD refuses: exact against our own
    # centered differences
    m = diffmj.Model.from_xml_path(CARTPOLE)
    d = diffmj.Data(m)
    d.qpos[1] = 0.3
    A, B, C, D = diffmj.transition_jacobian(m, d, sensors=True)
    Af, Bf, Cf, Df = diffmj.transition_jacobian(m, d, method="fd", centered=True, sensors=True)
    assert C.shape == (m.nsensordata, 4) and D.shape == (m.nsensordata, 1)
    for x, y in [(A, Af), (B, Bf), (C, Cf), (D, Df)]:
        np.testing.assert_allclose(x, y, atol=1e-7)


def test_inverse_jacobian_matches_mjd_inverseFD():
    m, mm = pair(CHEETAH)
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    for _ in range(100):
        d.step()
        mujoco.mj_step(mm, md)
    d.forward()
    mujoco.mj_forward(mm, md)
    J = diffmj.inverse_jacobian(m, d)
    nv = mm.nv
    DfDq, DfDv, DfDa = (np.zeros((nv, nv)) for _ in range(3))
    mujoco.mjd_inverseFD(mm, md, 1e-7, False, DfDq, DfDv, DfDa, None, None, None, None)
    for k, ref in [("DfDq", DfDq), ("DfDv", DfDv), ("DfDa", DfDa)]:
        assert np.abs(J[k] - ref).max() < 1e-4 * max(1.0, np.abs(ref).max()), k


def test_parameter_jacobian_ad_vs_fd():
    m = diffmj.Model.from_xml_path(STACKS)
    d = diffmj.Data(m)
    d.step(200)
    # (not a friction of the floor: it ties with the boxes' in MuJoCo's max, a kink)
    ps = ['body "mid" mass', m.param('geom "base" solref[0]')]
    J = diffmj.parameter_jacobian(m, d, ps)
    Jf = diffmj.parameter_jacobian(m, d, ps, method="fd", eps=1e-7, centered=True)
    assert J.shape == (2 * m.nv + m.na, 2)
    assert np.abs(J - Jf).max() < 1e-4 * max(1.0, np.abs(J).max())


def test_params_and_pickle():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    p = m.param('joint "hinge" damping')
    m.set_param(p, 0.5)
    assert m.get_param(p) == 0.5
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.get_param('joint "hinge" damping') == 0.5
    d = diffmj.Data(m)
    d.qpos[1] = 0.3
    d.step(7)
    d2 = pickle.loads(pickle.dumps(d))
    d.step(10)
    d2.step(10)
    np.testing.assert_array_equal(d.qpos, d2.qpos)


def test_rollout_matches_serial_steps():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    d = diffmj.Data(m)
    nbatch, nstep = 8, 50
    rng = np.random.default_rng(1)
    x0 = np.stack([d.get_state() for _ in range(nbatch)])
    x0[:, 2] = rng.uniform(-1, 1, nbatch)  # qpos[1]
    ctrl = rng.uniform(-1, 1, (nbatch, nstep, m.nu))
    out = diffmj.rollout(m, x0, ctrl, threads=2)
    assert out.shape == (nbatch, nstep, len(x0[0]))
    for i in (0, 5):
        d.reset()
        d.set_state(x0[i])
        for k in range(nstep):
            d.ctrl[:] = ctrl[i, k]
            d.step()
        np.testing.assert_array_equal(out[i, -1], d.get_state())


def test_rollout_matches_mujoco_rollout():
    from mujoco import rollout as mjrollout

    m, mm = pair(CARTPOLE)
    md = mujoco.MjData(mm)
    nbatch, nstep = 4, 30
    rng = np.random.default_rng(2)
    mask = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    x = np.zeros(mujoco.mj_stateSize(mm, mask))
    mujoco.mj_getState(mm, md, x, mask)
    x0 = np.tile(x, (nbatch, 1))
    x0[:, 2] = rng.uniform(-1, 1, nbatch)
    ctrl = rng.uniform(-1, 1, (nbatch, nstep, mm.nu))
    ours = diffmj.rollout(m, x0, ctrl)
    theirs, _ = mjrollout.rollout(mm, md, x0, ctrl)
    assert np.abs(ours - theirs).max() < 1e-10


def test_rollout_of_multi_input_actuators_matches_mujoco():
    # pid actuators with controller states: 14 controls for 8 actuators, 10 activations
    from mujoco import rollout as mjrollout

    m, mm = pair(str(MODELS / "mjcf29" / "pid_states.xml"))
    assert m.nu == mm.nu == 14 and m.nactuator == mm.nactuator == 8 and m.na == mm.na == 10
    md = mujoco.MjData(mm)
    nbatch, nstep = 3, 200
    rng = np.random.default_rng(5)
    mask = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    x = np.zeros(mujoco.mj_stateSize(mm, mask))
    mujoco.mj_getState(mm, md, x, mask)
    x0 = np.tile(x, (nbatch, 1))
    ctrl = rng.uniform(-1, 1, (nbatch, nstep, mm.nu))
    ours = diffmj.rollout(m, x0, ctrl)
    theirs, _ = mjrollout.rollout(mm, md, x0, ctrl)
    assert np.abs(ours - theirs).max() < 1e-10


def test_errors_are_exceptions_with_positions():
    with pytest.raises(diffmj.MjcfError, match=r"<string>:\d+:\d+"):
        diffmj.Model.from_xml_string("<mujoco><worldbody><geom type='sphere' size='a'/></worldbody></mujoco>")
    with pytest.raises(diffmj.MjcfError):
        diffmj.Model.from_xml_path("/nonexistent.xml")
    m = diffmj.Model.from_xml_path(CARTPOLE)
    with pytest.raises(ValueError, match="unknown kind|no joint"):
        m.param('joint "nope" damping')
    with pytest.raises(ValueError):
        diffmj.transition_jacobian(m, diffmj.Data(m), method="xx")
    with pytest.raises(AttributeError):
        diffmj.Data(m).not_a_field
    d = diffmj.Data(m)
    d.qvel[0] = np.nan
    with pytest.raises(diffmj.SimulationError):
        d.step()


def test_ilqr_swings_the_cartpole_up_and_mpc_balances():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    d = diffmj.Data(m)
    d.qpos[1] = np.pi  # hanging down
    goal = [0.0, 0.0, 0.0, 0.0]
    T = 150
    r = diffmj.ilqr(m, d, np.zeros((T, m.nu)), running_weight=[0.1, 0.1, 0.01, 0.01],
                    terminal_weight=[100, 1000, 100, 100], control_weight=[0.01], goal=goal)
    assert r.states.shape == (T + 1, d.state_size()) and r.ctrl.shape == (T, 1)
    assert r.gains.shape == (T, 1, 4)
    assert r.cost < r.cost_history[0]
    assert r.gauss_newton_iterations == 0  # iLQR: counted for DDP only
    angle = r.states[-1, 2]
    assert abs(np.remainder(angle + np.pi, 2 * np.pi) - np.pi) < 0.05
    # the plan's controls replay it
    out = diffmj.rollout(m, d.get_state()[None], r.ctrl[None])
    np.testing.assert_allclose(out[0, -1], r.states[-1], atol=1e-9)
    # MPC holds it upright from near the top
    mpc = diffmj.Mpc(m, horizon=50, running_weight=[0.1, 1, 0.01, 0.01],
                     terminal_weight=[10, 100, 10, 10], control_weight=[0.01], goal=goal)
    d.reset()
    d.qpos[1] = 0.2
    for _ in range(200):
        d.ctrl[:] = mpc.control(d)
        d.step()
    assert abs(d.qpos[1]) < 0.05
    assert mpc.plan() is not None


def test_sysid_recovers_a_mass_from_simulated_data():
    m = diffmj.Model.from_xml_path(str(MODELS / "sysid" / "spring_mass.xml"))
    truth = m.get_param('body "mass" mass')
    d = diffmj.Data(m)
    d.qpos[0] = 0.1
    N = 200
    qpos, qvel, ctrl = np.zeros((N, m.nq)), np.zeros((N, m.nv)), np.zeros((N, m.nu))
    for k in range(N):
        qpos[k], qvel[k] = d.qpos, d.qvel
        d.ctrl[0] = ctrl[k, 0] = 3.0 * np.sin(5.0 * d.time)
        d.step()
    traj = dict(qpos=qpos, qvel=qvel, ctrl=ctrl)
    r = diffmj.sysid(m, [('body "mass" mass', 2.0, 0.1, 10.0, True)], [traj])
    assert r.converged
    assert abs(r.estimate[0] - truth) < 1e-8 * truth
    assert r.names == ['body "mass" mass'] and r.covariance.shape == (1, 1)
    assert r.warnings == {}


def test_sysid_estimated_starts_on_noisy_states():
    # the pendulum's damping and friction loss by multiple shooting on states with 1e-3 noise:
    # from the measured (noisy) starts the fit is biased and far above the noise level; with
    # estimated starts it lands within 4 standard errors and reports the offsets
    m = diffmj.Model.from_xml_path(str(MODELS / "sysid" / "pendulum.xml"))
    d = diffmj.Data(m)
    d.qpos[0] = 1.3
    N = 301
    qpos, qvel = np.zeros((N, 1)), np.zeros((N, 1))
    for k in range(N):
        qpos[k], qvel[k] = d.qpos, d.qvel
        d.step()
    rng = np.random.default_rng(3)
    traj = dict(qpos=qpos + 1e-3 * rng.standard_normal(qpos.shape),
                qvel=qvel + 1e-3 * rng.standard_normal(qvel.shape))
    params = [("joint hinge damping", 0.05, 0.0, 1.0), ("joint hinge frictionloss", 0.05, 0.0, 1.0)]
    measured = diffmj.sysid(m, params, [traj], estimator="shooting", segment_steps=25)
    est = diffmj.sysid(m, params, [traj], estimator="shooting", segment_steps=25,
                       estimate_starts=True)
    assert est.converged and est.start_offsets.shape == (12, 2)
    assert est.start_solves_capped == 0
    assert not hasattr(measured, "start_offsets")
    truth = np.array([0.03, 0.08])
    err = np.abs(est.estimate - truth)
    assert np.all(err < 4 * np.array(est.std_error)), (est.estimate, est.std_error)
    assert np.abs(measured.estimate - truth).max() > 2 * err.max()
    # the offsets are of the noise's size
    assert 1e-4 < np.abs(est.start_offsets).max() < 1e-2


def test_trajopt_cartpole_swing_up_replays():
    xml = open(CARTPOLE).read().replace('ctrllimited="true"', 'ctrllimited="false"')
    m = diffmj.Model.from_xml_string(xml)
    m.set_option("integrator", "Euler")
    n = 150
    terms = [
        {"type": "effort", "weight": 1e-2},
        {"type": "unactuated", "weight": 1e4},
        {"type": "qpos", "time": n, "target": [0.0, 0.0], "weight": [1e3, 1e3]},
        {"type": "qvel", "time": n, "target": [0.0, 0.0], "weight": [1e2, 1e2]},
    ]
    init = np.stack([[0.0, np.pi * (1 - t / n)] for t in range(n + 1)])
    r = diffmj.trajopt(m, n, terms, qpos0=[0.0, np.pi], init=init)
    fd = diffmj.trajopt(m, n, terms, qpos0=[0.0, np.pi], init=init, method="fd")
    # finite-difference Jacobians reach the same swing-up
    assert fd.max_unactuated < 1e-3 and np.abs(fd.qpos - r.qpos).max() < 1e-4
    with pytest.raises(ValueError, match="method"):
        diffmj.trajopt(m, n, terms, method="xx")
    assert r.converged
    assert r.qpos.shape == (n + 1, 2) and r.ctrl.shape == (n, 1)
    assert np.abs(r.qpos[-1]).max() < 2e-2
    assert r.max_unactuated < 1e-3 and r.replay_deviation < 1e-6


def test_trajopt_free_start_moves_the_start():
    """With free_start the initial state is optimized: a target at step 0 is allowed, the start
    leaves its guess for the zero-effort optimum (start on the step-0 target, coast to the goal),
    qvel[0] is the optimized velocity and the replay from it reproduces the motion; without
    free_start a term at step 0 is refused."""
    m = diffmj.Model.from_xml_string("""<mujoco><option timestep="0.01" gravity="0 0 0"/>
      <worldbody><body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="2"/>
      </body></worldbody><actuator><motor joint="x"/></actuator></mujoco>""")
    terms = [{"type": "effort", "weight": 1.0},
             {"type": "qpos", "time": 30, "target": [1.0], "weight": [1e4]},
             {"type": "qpos", "time": 0, "target": [0.5], "weight": [10.0]}]
    with pytest.raises(ValueError, match="free start"):
        diffmj.trajopt(m, 30, terms)
    r = diffmj.trajopt(m, 30, terms, free_start=True)
    assert r.converged and r.replay_deviation < 1e-9
    # the optimum costs nothing: start at 0.5 from the guess 0 and coast to 1 in 0.3 s
    assert abs(r.qpos[0, 0] - 0.5) < 1e-6 and abs(r.qvel[0, 0] - 0.5 / 0.3) < 1e-4
    assert np.abs(r.actuator_force).max() < 1e-4


def test_trajopt_body_term_equals_the_site_term_at_its_origin():
    m = diffmj.Model.from_xml_string("""<mujoco><option timestep="0.01" gravity="0 0 0"/>
      <worldbody><body name="b"><joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/><geom size=".1" mass="1"/><site name="s"/>
      </body></worldbody><actuator><motor joint="x"/><motor joint="y"/></actuator></mujoco>""")
    base = [{"type": "effort", "weight": 1e-3},
            {"type": "qvel", "time": 40, "target": [0.0, 0.0], "weight": [1e4, 1e4]}]
    goal = {"time": 20, "target": [0.3, -0.2, 0.0], "weight": 1e6}
    a = diffmj.trajopt(m, 40, base + [dict(goal, type="site_pos", site=0)])
    b = diffmj.trajopt(m, 40, base + [dict(goal, type="body_pos", body=1)])
    assert np.abs(a.qpos - b.qpos).max() < 1e-12
    assert np.abs(b.qpos[20] - [0.3, -0.2]).max() < 1e-3


def test_trajopt_control_limits_hold_on_a_bang_solution():
    """A target out of reach under a 1 N limit: with the control-limit term every control ends
    at the limit (within 1e-6) and the replay reproduces the motion; without it the controls
    leave the range and are clamped."""
    m = diffmj.Model.from_xml_string("""<mujoco><option timestep="0.01" gravity="0 0 0"/>
      <worldbody><body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="2"/>
      </body></worldbody><actuator><motor joint="x" ctrllimited="true" ctrlrange="-1 1"/>
      </actuator></mujoco>""")
    terms = [{"type": "effort", "weight": 1.0},
             {"type": "qpos", "time": 30, "target": [1.0], "weight": [1e6]}]
    r = diffmj.trajopt(m, 30, terms + [{"type": "ctrl_limit", "weight": 1e2}])
    assert np.abs(r.actuator_force - 1.0).max() < 1e-6 and r.replay_deviation < 1e-6
    excess = np.clip(np.abs(r.ctrl) - 1.0, 0, None).max()
    assert r.max_ctrl_excess is not None and abs(r.max_ctrl_excess - excess) < 1e-12
    free = diffmj.trajopt(m, 30, terms)
    assert free.ctrl_clamped > 0 and free.actuator_force.max() > 2
    assert free.max_ctrl_excess is None
    # through a smoothing stage with the range widened fourfold: the same bang solution
    w = diffmj.trajopt(m, 30, terms + [{"type": "ctrl_limit", "weight": 1.0},
                                       {"type": "unactuated", "weight": 1e2}],
                       smoothing=[1.0], ctrl_range_scale=[4.0])
    assert w.actuator_force.max() <= 1.0 + 1e-8 and w.actuator_force.min() >= 1.0 - 1e-5
    assert w.replay_deviation < 1e-6
    with pytest.raises(ValueError):
        diffmj.trajopt(m, 30, terms, smoothing=[1.0], ctrl_range_scale=[0.5])


def test_trajopt_contact_force_term_as_mujoco_computes_the_force():
    """A ball on a motorized vertical slide asked for twice its weight of contact force: at the
    plan's last states and controls, `mujoco`'s forward dynamics and mj_contactForce give that
    force."""
    xml = """<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="1 1 .1"/>
      <body pos="0 0 .1"><joint name="z" type="slide" axis="0 0 1"/><geom size=".1" mass="1"/>
      </body></worldbody><actuator><motor joint="z"/></actuator></mujoco>"""
    m = diffmj.Model.from_xml_string(xml)
    terms = [{"type": "effort", "weight": 1e-6},
             {"type": "contact_force", "body": 1, "target": [0.0, 0.0, 19.62], "weight": 1.0},
             {"type": "qvel", "time": 40, "target": [0.0], "weight": [1.0]}]
    r = diffmj.trajopt(m, 40, terms, qpos0=[-5e-4], init=np.full((41, 1), -5e-4))
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:], md.qvel[:], md.ctrl[:] = r.qpos[39], r.qvel[39], r.ctrl[39]
    mujoco.mj_forward(mm, md)
    f = np.zeros(6)
    mujoco.mj_contactForce(mm, md, 0, f)
    assert md.ncon == 1 and abs(f[0] * md.contact[0].frame[2] - 19.62) < 1e-3


def test_trajopt_orientation_term_turns_a_site_as_mujoco_places_it():
    """An orientation term on a rotated site of a ball-jointed body: at the final step,
    `mujoco`'s site_xmat at the optimized qpos is within 1e-3 rad of the target; a bad frame
    key is refused."""
    xml = """<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
      <body><joint name="j" type="ball"/><geom size=".1" mass="1"/>
      <site name="s" pos="0 .2 0" euler="-30 10 80"/></body></worldbody>
      <actuator><motor joint="j" gear="1 0 0"/><motor joint="j" gear="0 1 0"/>
      <motor joint="j" gear="0 0 1"/></actuator></mujoco>"""
    m = diffmj.Model.from_xml_string(xml)
    target = np.array([0.8, 0.2, -0.4, 0.4]) / np.linalg.norm([0.8, 0.2, -0.4, 0.4])
    terms = [{"type": "effort", "weight": 1e-3},
             {"type": "qvel", "time": 40, "target": [0.0] * 3, "weight": [1e4] * 3},
             {"type": "orientation", "time": 40, "site": 0, "target": list(target), "weight": 1e4}]
    r = diffmj.trajopt(m, 40, terms)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:] = r.qpos[40]
    mujoco.mj_kinematics(mm, md)
    want = np.zeros(9)
    mujoco.mju_quat2Mat(want, target)
    rel = want.reshape(3, 3).T @ md.site_xmat[0].reshape(3, 3)
    angle = np.arccos(np.clip((np.trace(rel) - 1) / 2, -1, 1))
    assert angle < 1e-3 and r.replay_deviation < 1e-6
    with pytest.raises(ValueError, match="exactly one"):
        diffmj.trajopt(m, 40, terms[:2] + [dict(terms[2], body=1)])


def test_trajopt_hopper_under_its_limits_replays_in_mujoco():
    """The planar hopper hops 0.1 m forward through contact under its own ±1 controls (the
    control-limit term, the smoothed solves, Rust's `hopper_hops_forward_under_its_control_limits`);
    its controls replayed by `mujoco` reproduce the optimized configurations."""
    xml = open(MODELS / "control" / "hopper.xml").read()
    m = diffmj.Model.from_xml_string(xml)
    n = 100
    q0 = np.array([0.0, 1.19735335, -0.0023067, 0.0, 0.0, 0.0])

    def at(x):
        q = q0.copy()
        q[0] = x
        return q.tolist()

    terms = [
        {"type": "effort", "weight": 1e-2},
        {"type": "unactuated", "weight": 1e3},
        {"type": "ctrl_limit", "weight": 1e3},
        {"type": "qpos", "time": n, "target": at(0.1), "weight": [100, 100, 100, 10, 10, 10]},
        {"type": "qvel", "time": n, "target": [0.0] * 6, "weight": [10.0] * 6},
    ]
    init = np.stack([at(0.1 * t / n) for t in range(n + 1)])
    r = diffmj.trajopt(m, n, terms, qpos0=q0.tolist(), init=init, max_iterations=100,
                       smoothing=[10.0, 1.0, 0.1], unactuated_tol=1e-4, ctrl_limit_tol=1e-4)
    assert r.max_unactuated < 1e-4 and r.replay_deviation < 1e-3
    assert r.max_ctrl_excess < 1e-3 and np.abs(r.ctrl).max() <= 1.0
    assert r.qpos[-1][0] > 0.08
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:] = q0
    worst, flight = 0.0, 0
    for t in range(n):
        md.ctrl[:] = r.ctrl[t]
        mujoco.mj_step(mm, md)
        worst = max(worst, np.abs(md.qpos - r.qpos[t + 1]).max())
        flight += md.ncon == 0
    print(f"hopper replayed in mujoco: worst {worst:.2e}, {flight} steps without contact")
    assert worst < 1e-3, worst
    assert flight >= 1


def test_ilqr_position_terms_bring_a_site_to_its_target():
    xml = """<mujoco><option timestep="0.02" gravity="0 0 0"/><worldbody>
      <body name="a"><joint name="ax" type="slide" axis="1 0 0" damping="1"/>
        <joint name="ay" type="slide" axis="0 1 0" damping="1"/>
        <geom size=".05" mass="1"/><site name="tip" pos="0 0 0.1"/></body>
      </worldbody><actuator><motor joint="ax"/><motor joint="ay"/></actuator></mujoco>"""
    m = diffmj.Model.from_xml_string(xml)
    d = diffmj.Data(m)
    target = [0.3, -0.2, 0.1]
    r = diffmj.ilqr(m, d, np.zeros((60, 2)), control_weight=[2e-4, 2e-4],
                    terminal_weight=[0, 0, 10, 10],
                    positions=[{"site": "tip", "target": target, "weight": 2e4, "terminal": True}])
    assert r.converged and r.warnings == {}
    # the final configuration, measured by mujoco
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    md.qpos[:] = r.states[-1, 1:1 + mm.nq]
    mujoco.mj_forward(mm, md)
    np.testing.assert_allclose(md.site_xpos[0], target, atol=2e-3)
    with pytest.raises(ValueError, match="no site named 'nowhere'"):
        diffmj.ilqr(m, d, np.zeros((5, 2)),
                    positions=[{"site": "nowhere", "target": target, "weight": 1}])
    with pytest.raises(ValueError, match="terminal"):
        diffmj.ilqr(m, d, np.zeros((5, 2)),
                    positions=[{"site": "tip", "target": target, "weight": 1, "terminal": 1}])
