"""Writable model fields: `diffmj.Model`'s real fields are written as `mujoco.MjModel`'s are
(`m.body_mass[1] = 2.0`), with the same effect on the next step; the integer structure is
read-only; written values survive pickling and reach every Data, rollout and Jacobian."""
import pickle
import threading

import mujoco
import numpy as np
import pytest

import diffmj

from conftest import MODELS

CARTPOLE = str(MODELS / "cartpole.xml")
STACKS = str(MODELS / "constraints" / "stacks.xml")
CHEETAH = str(MODELS / "thirdparty" / "dm_control" / "cheetah.xml")


def pair(path):
    return diffmj.Model.from_xml_path(path), mujoco.MjModel.from_xml_path(path)


def write_fields(m):
    """The same writes on a diffmj.Model or a mujoco.MjModel (numpy-style, as users do)."""
    m.body_mass[1:] *= 1.3
    m.body_inertia[-1] *= 0.8
    m.geom_friction[:, 0] = 0.7
    m.geom_solref[:, 0] = 0.03
    m.geom_solimp[:, 1] = 0.97
    m.dof_damping[:] = 0.05
    m.dof_armature[0] += 0.01
    m.jnt_stiffness[-1] = 0.2
    if m.nu:
        m.actuator_gear[:, 0] *= 1.5
        m.actuator_ctrlrange[:] = [-0.8, 0.8]
    m.opt.gravity[2] = -9.0
    m.opt.timestep = 0.8 * m.opt.timestep


def trajectories(m, mm, steps, write_after=None, same=True):
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    rng = np.random.default_rng(1)
    worst, contacts = 0.0, 0
    for k in range(steps):
        if k == write_after:
            # written while a Data of the model exists: the next step uses it (mjData reads
            # mjModel at every call)
            for model in (m, mm):
                model.dof_damping[:] = 0.2
                model.geom_friction[:, 0] = 0.4
                model.body_mass[1] *= 2.0
        u = rng.uniform(-1, 1, m.nu)
        d.ctrl[:] = u
        md.ctrl[:] = u
        d.step()
        mujoco.mj_step(mm, md)
        worst = max(worst, np.abs(d.qpos - md.qpos).max(), np.abs(d.qvel - md.qvel).max())
        assert d.ncon == md.ncon or not same
        contacts += d.ncon > 0
    return worst, contacts, d, md


@pytest.mark.parametrize("path", [CARTPOLE, CHEETAH])
def test_written_fields_step_as_in_mujoco(path):
    m, mm = pair(path)
    write_fields(m)
    write_fields(mm)
    for name in ["body_mass", "body_inertia", "geom_friction", "geom_solref", "geom_solimp",
                 "dof_damping", "dof_armature", "jnt_stiffness", "actuator_gear",
                 "actuator_ctrlrange", "body_subtreemass", "dof_invweight0"]:
        # (compiled values agree to rounding, a few ulps)
        np.testing.assert_allclose(getattr(m, name), getattr(mm, name), rtol=1e-12,
                                   err_msg=name)
    assert m.opt.timestep == mm.opt.timestep
    np.testing.assert_array_equal(m.opt.gravity, mm.opt.gravity)
    worst, contacts, _, _ = trajectories(m, mm, 200, write_after=100)
    print(f"{path}: worst |Δqpos|, |Δqvel| over 200 steps {worst:.1e}, "
          f"{contacts} steps with contacts")
    if path == CHEETAH:
        assert contacts > 50
    assert worst < 1e-10, worst


def test_written_contact_fields_on_stacks():
    # a stack of boxes in contact; its trajectories leave MuJoCo's by ~1e-4 within 10 steps
    # even unwritten (the solver stops at its tolerance), so compare the first steps
    m, mm = pair(STACKS)
    for model in (m, mm):
        model.geom_friction[:, 0] = 0.7
        model.geom_solref[:, 0] = 0.03
        model.geom_solimp[:, 1] = 0.97
        model.dof_damping[:] = 0.05
        model.opt.gravity[2] = -9.0
        model.opt.timestep = 0.001
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    d.step()
    mujoco.mj_step(mm, md)
    assert d.ncon == md.ncon > 0
    worst = max(np.abs(d.qpos - md.qpos).max(), np.abs(d.qvel - md.qvel).max())
    print(f"stacks, one step after writing contact fields: {worst:.1e}")
    assert worst < 1e-10


def test_written_mass_of_a_simple_body_as_in_mujoco():
    # MuJoCo's mass matrix of a simple body is the compiled dof_M0: a written mass, inertia
    # or armature of such a body reaches the bias forces but not M until mj_setConst (set_param)
    m, mm = pair(STACKS)  # free boxes: body_simple = 1
    for model in (m, mm):
        model.body_mass[1] *= 1.3
        model.body_inertia[1] *= 1.5
    d, md = diffmj.Data(m), mujoco.MjData(mm)
    d.step()
    mujoco.mj_step(mm, md)
    assert np.abs(d.qvel - md.qvel).max() < 1e-10
    # writing dof_M0 reaches M, as in MuJoCo
    for model in (m, mm):
        model.dof_M0[0:3] *= 2.0
    d.step()
    mujoco.mj_step(mm, md)
    assert np.abs(d.qvel - md.qvel).max() < 1e-10


def test_written_fields_change_the_trajectory():
    # the writes above are not no-ops: without them the trajectory differs
    m, mm = pair(CHEETAH)
    write_fields(mm)
    worst, _, _, _ = trajectories(m, mm, 50, same=False)
    assert worst > 1e-3


def test_derived_constants_are_not_recomputed_as_in_mujoco():
    m, mm = pair(CARTPOLE)
    before = m.body_subtreemass.copy()
    m.body_mass[2] = 5.0
    mm.body_mass[2] = 5.0
    # MuJoCo does not recompute derived quantities when a field is written ...
    np.testing.assert_array_equal(m.body_subtreemass, before)
    np.testing.assert_array_equal(m.body_subtreemass, mm.body_subtreemass)
    # ... set_param does (mj_setConst)
    m.set_param('body 2 mass', 5.0)
    mujoco.mj_setConst(mm, mujoco.MjData(mm))
    np.testing.assert_allclose(m.body_subtreemass, mm.body_subtreemass, rtol=1e-12)
    np.testing.assert_allclose(m.dof_invweight0, mm.dof_invweight0, rtol=1e-9)


def test_read_back_slicing_and_broadcast():
    m = diffmj.Model.from_xml_path(STACKS)
    assert m.body_mass is m.body_mass  # the model's array, not a copy
    m.geom_friction[:, 0] = 0.3
    assert (m.geom_friction[:, 0] == 0.3).all()
    m.geom_friction[2] = [0.9, 0.01, 0.001]
    np.testing.assert_array_equal(m.geom_friction[2], [0.9, 0.01, 0.001])
    m.dof_damping = 0.25  # attribute assignment broadcasts (numpy.copyto)
    assert m.dof_damping.shape == (m.nv,) and (m.dof_damping == 0.25).all()
    m.body_mass[1:3] = np.array([2.0, 3.0])
    np.testing.assert_array_equal(m.body_mass[1:3], [2.0, 3.0])
    m.body_mass[3:] += 1.0
    view = m.geom_solref[1:4, 0]
    view[:] = 0.05
    np.testing.assert_array_equal(m.geom_solref[1:4, 0], 0.05)
    with pytest.raises(ValueError):
        m.body_mass = np.zeros(3)  # the wrong shape
    # options and statistics, under MuJoCo's names and the attribute spellings
    m.opt.timestep = 0.001
    assert m.opt.timestep == 0.001 and m.opt_timestep == 0.001
    m.opt_timestep = 0.0015
    assert m.opt.timestep == 0.0015
    m.opt.gravity[:] = [0, 0, -1.62]
    assert m.opt.gravity is m.opt_gravity and m.opt.gravity.shape == (3,)
    np.testing.assert_array_equal(m.field("opt.gravity"), [0, 0, -1.62])
    m.stat.meaninertia = 2.0
    assert m.stat_meaninertia == 2.0
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER
    m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    m.opt.iterations = 7
    assert (m.opt.integrator, m.opt.iterations) == (int(mujoco.mjtIntegrator.mjINT_RK4), 7)
    assert "body_mass" in m.writable_field_names()
    assert "jnt_type" not in m.writable_field_names()


def test_structural_fields_raise_naming_the_field():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    with pytest.raises(ValueError, match="jnt_type"):
        m.jnt_type[0] = 1
    with pytest.raises(ValueError, match="body_parentid"):
        m.body_parentid[1:][0] = 0
    with pytest.raises(ValueError, match="jnt_qposadr"):
        m.jnt_qposadr += 1
    with pytest.raises(AttributeError, match="jnt_type"):
        m.jnt_type = [0, 0]
    with pytest.raises(AttributeError, match="nq"):
        m.nq = 3
    with pytest.raises(AttributeError, match="no_such_field"):
        m.no_such_field = 1.0
    with pytest.raises(ValueError, match="disableflags"):
        m.opt.disableflags = 1
    np.testing.assert_array_equal(m.jnt_type, [2, 3])  # nothing changed
    # the copies handed out are ordinary arrays once copied or computed with
    t = m.jnt_type.copy()
    t[0] = 1
    assert (m.jnt_type + 1).flags.writeable


def test_set_param_updates_arrays_already_handed_out():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    damping, subtree = m.dof_damping, m.body_subtreemass
    m.body_mass[1] = 4.0  # a raw write, then set_param: set_const sees the written mass
    m.set_param('joint "hinge" damping', 0.7)
    assert damping[1] == 0.7
    assert subtree[0] == pytest.approx(m.body_mass.sum())
    assert m.get_param('body 1 mass') == 4.0


def test_pickle_keeps_written_fields_exactly():
    m = diffmj.Model.from_xml_path(CHEETAH)
    write_fields(m)
    m.set_option("integrator", "RK4")
    m.body_subtreemass[0] = 123.0  # a derived field written raw survives as written
    m2 = pickle.loads(pickle.dumps(m))
    for name in m.writable_field_names():
        a, b = m.field(name), m2.field(name)
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert m2.body_subtreemass[0] == 123.0 and m2.opt.integrator == m.opt.integrator
    m.body_subtreemass[0] = m2.body_subtreemass[0] = 0.0
    d, d2 = diffmj.Data(m), diffmj.Data(m2)
    d.step(100)
    d2.step(100)
    np.testing.assert_array_equal(d.qpos, d2.qpos)
    np.testing.assert_array_equal(d.qvel, d2.qvel)


def test_jacobians_and_rollout_use_written_fields():
    m = diffmj.Model.from_xml_path(CARTPOLE)
    d = diffmj.Data(m)
    d.qpos[1], d.qvel[1] = 0.3, 1.0
    A0, _ = diffmj.transition_jacobian(m, d)
    m.dof_damping[1] = 3.0
    A1, _ = diffmj.transition_jacobian(m, d)  # the same Data: its workspaces are rebuilt
    fresh = diffmj.Data(m)
    fresh.qpos[1], fresh.qvel[1] = 0.3, 1.0
    A2, _ = diffmj.transition_jacobian(m, fresh)
    assert np.abs(A1 - A0).max() > 1e-3
    np.testing.assert_array_equal(A1, A2)
    m.set_param('joint "hinge" damping', 5.0)  # so does set_param
    A3, _ = diffmj.transition_jacobian(m, d)
    assert np.abs(A3 - A1).max() > 1e-3
    # rollout runs the written model
    m.body_mass[2] = 0.3
    x0 = d.get_state()
    out = diffmj.rollout(m, x0, nstep=30)
    d.step(30)
    np.testing.assert_array_equal(out[0, -1], d.get_state())


def test_writes_while_stepping_on_another_thread():
    # a step runs on a snapshot of the model with the GIL released; writes made meanwhile go
    # to the model's arrays (owned by Python) and are used from the next call on
    m = diffmj.Model.from_xml_path(CHEETAH)
    d = diffmj.Data(m)
    t = threading.Thread(target=d.step, args=(3000,))
    t.start()
    k = 0
    while t.is_alive():
        m.dof_damping[:] = 0.01 * (k % 7)
        m.geom_friction[:, 0] = 0.5 + 0.01 * (k % 5)
        k += 1
    t.join()
    m.dof_damping[:] = 0.1
    m.geom_friction[:, 0] = 0.6
    ref = diffmj.Model.from_xml_path(CHEETAH)
    ref.dof_damping[:] = 0.1
    ref.geom_friction[:, 0] = 0.6
    r = diffmj.Data(ref)
    r.set_state(d.get_state(diffmj.State.INTEGRATION), diffmj.State.INTEGRATION)
    d.step(50)
    r.step(50)
    np.testing.assert_array_equal(d.qpos, r.qpos)


def test_old_pickles_and_dir():
    # pickles from before the field values were stored: (xml, path, overrides)
    xml = open(CARTPOLE).read()
    m = diffmj.Model.__new__(diffmj.Model)
    m.__setstate__((xml, None, [('joint "hinge" damping', 0.5)]))
    assert m.get_param('joint "hinge" damping') == 0.5
    names = dir(m)
    assert {"body_mass", "jnt_type", "opt_timestep", "nq", "set_param", "opt"} <= set(names)
