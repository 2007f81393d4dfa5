#!/usr/bin/env python3
"""Generate golden reference data for diffmj from MuJoCo.

Usage (from the repository root or anywhere):

    python3 tests/golden/generate.py            # all models
    python3 tests/golden/generate.py pendulum   # only models whose golden name matches

For every model listed in OWN_MODELS and THIRDPARTY_MODELS below this writes tests/golden/<name>.json holding
compiled model fields, the results of mj_forward at five random states, and one 1 s
rollout per integrator (Euler, RK4, implicit, implicitfast).  See README.md in this
directory for the file format.  Output is deterministic for a given MuJoCo version:
every model has its own fixed random seed.
"""

import json
import math
import os
import sys
import zlib

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS_DIR = os.path.join(REPO, "models")

# paths under models/ (third-party models under models/thirdparty/)
OWN_MODELS = [
    "pendulum.xml",
    "double_pendulum.xml",
    "cartpole.xml",
    "acrobot.xml",
    "hinge_chain.xml",
    "slide_chain.xml",
    "ball_chain.xml",
    "free_body.xml",
    "humanoid_like.xml",
    "actuators.xml",
    "tendons.xml",
    "defaults.xml",
    "orientations.xml",
    "orientations_radian.xml",
    "passive.xml",
    "poly_passive.xml",
    "include.xml",
    "mocap.xml",
    "slider_crank.xml",
    "tendon_armature.xml",
    "tendon_actfrc.xml",
]

THIRDPARTY_MODELS = [
    "thirdparty/dm_control/acrobot.xml",
    "thirdparty/dm_control/cartpole.xml",
    "thirdparty/dm_control/cheetah.xml",
    "thirdparty/dm_control/finger.xml",
    "thirdparty/dm_control/fish.xml",
    "thirdparty/dm_control/hopper.xml",
    "thirdparty/dm_control/humanoid.xml",
    "thirdparty/dm_control/humanoid_CMU.xml",
    "thirdparty/dm_control/manipulator.xml",
    "thirdparty/dm_control/pendulum.xml",
    "thirdparty/dm_control/point_mass.xml",
    "thirdparty/dm_control/reacher.xml",
    "thirdparty/dm_control/walker.xml",
    "thirdparty/gymnasium/ant.xml",
    "thirdparty/gymnasium/half_cheetah.xml",
    "thirdparty/gymnasium/hopper.xml",
    "thirdparty/gymnasium/humanoid.xml",
    "thirdparty/gymnasium/inverted_double_pendulum.xml",
    "thirdparty/gymnasium/inverted_pendulum.xml",
    "thirdparty/gymnasium/point.xml",
    "thirdparty/gymnasium/pusher.xml",
    "thirdparty/gymnasium/pusher_v5.xml",
    "thirdparty/gymnasium/reacher.xml",
    "thirdparty/gymnasium/swimmer.xml",
    "thirdparty/gymnasium/walker2d.xml",
]

# XML files under models/ that are fragments pulled in by <include>, not models.
FRAGMENTS = [
    "include_part.xml",
    "thirdparty/dm_control/common/materials.xml",
    "thirdparty/dm_control/common/skybox.xml",
    "thirdparty/dm_control/common/visual.xml",
]

NSTATES = 5
ROLLOUT_DURATION = 1.0
# Store one control row per step unless that exceeds this many numbers per rollout;
# otherwise hold each random control for as many steps as keep it within the budget.
CTRL_BUDGET = 4000
MAX_FILE_BYTES = 1_500_000

INTEGRATORS = [
    (int(mujoco.mjtIntegrator.mjINT_EULER), "euler"),
    (int(mujoco.mjtIntegrator.mjINT_RK4), "rk4"),
    (int(mujoco.mjtIntegrator.mjINT_IMPLICIT), "implicit"),
    (int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST), "implicitfast"),
]

FREE = int(mujoco.mjtJoint.mjJNT_FREE)
BALL = int(mujoco.mjtJoint.mjJNT_BALL)
SLIDE = int(mujoco.mjtJoint.mjJNT_SLIDE)
HINGE = int(mujoco.mjtJoint.mjJNT_HINGE)
DYN_MUSCLE = int(mujoco.mjtDyn.mjDYN_MUSCLE)

SIZES = ["nq", "nv", "nu", "nactuator", "na", "nbody", "njnt", "ngeom", "nsite", "ntendon", "neq",
         "nsensor", "nkey", "nmocap", "ncam", "nlight", "nwrap", "ntree", "nM"]

COMPILED_FIELDS = [
    "qpos0", "body_parentid", "body_rootid", "body_weldid", "body_mocapid", "body_jntnum",
    "body_jntadr", "body_dofnum", "body_dofadr", "body_pos", "body_quat", "body_ipos",
    "body_iquat", "body_mass", "body_subtreemass", "body_inertia", "body_invweight0",
    "body_gravcomp",
    "jnt_type", "jnt_qposadr", "jnt_dofadr", "jnt_bodyid", "jnt_pos", "jnt_axis",
    "jnt_stiffness", "qpos_spring",
    "dof_bodyid", "dof_jntid", "dof_parentid", "dof_armature", "dof_damping",
    "dof_invweight0", "dof_M0",
    "geom_type", "geom_bodyid", "geom_size", "geom_pos", "geom_quat", "geom_rbound",
    "geom_fluid",
    "site_bodyid", "site_pos", "site_quat", "cam_pos", "cam_quat",
    "tendon_adr", "tendon_num", "tendon_stiffness", "tendon_damping", "tendon_lengthspring",
    "tendon_length0", "tendon_invweight0", "wrap_type", "wrap_objid", "wrap_prm",
    "actuator_trntype", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
    "actuator_trnid", "actuator_actadr", "actuator_actnum", "actuator_ctrladr",
    "actuator_ctrlnum", "actuator_ctrlspec", "actuator_ctrllimited",
    "actuator_forcelimited", "actuator_actlimited", "actuator_actearly", "actuator_dynprm",
    "actuator_gainprm", "actuator_biasprm", "actuator_ctrlrange", "actuator_forcerange",
    "actuator_actrange", "actuator_gear", "actuator_cranklength", "actuator_acc0",
    "actuator_length0", "actuator_lengthrange",
    "jnt_actfrclimited", "jnt_actfrcrange", "jnt_actgravcomp",
    "key_time", "key_qpos", "key_qvel", "key_act", "key_ctrl", "key_mpos", "key_mquat",
    # MuJoCo 4.0 additions that affect smooth dynamics (polynomial springs/dampers,
    # actuator- and tendon-level armature/damping, tendon actuator force limits).
    "jnt_stiffnesspoly", "dof_dampingpoly", "tendon_stiffnesspoly", "tendon_dampingpoly",
    "tendon_armature", "tendon_actfrclimited", "tendon_actfrcrange",
    "actuator_damping", "actuator_dampingpoly", "actuator_armature",
    # sparsity pattern of ten_J (static in 4.0)
    "ten_J_rownnz", "ten_J_rowadr", "ten_J_colind",
]

STATE_OUTPUTS = [
    "qacc", "qfrc_bias", "qfrc_passive", "qfrc_spring", "qfrc_damper", "qfrc_gravcomp",
    "qfrc_fluid", "qfrc_actuator", "qfrc_smooth", "qacc_smooth",
    "xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos", "geom_xmat",
    "site_xpos", "site_xmat", "subtree_com", "cinert", "cdof", "cvel", "cdof_dot",
    "ten_length", "ten_velocity", "actuator_length", "actuator_velocity", "actuator_force",
    "act_dot",
]


def flat(a):
    """Flatten a numpy array (row-major) into a JSON-ready list of Python scalars."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return [int(x) for x in a.reshape(-1)]
    if np.issubdtype(a.dtype, np.integer):
        return [int(x) for x in a.reshape(-1)]
    out = [float(x) for x in a.reshape(-1)]
    for x in out:
        if not math.isfinite(x):
            raise ValueError("non-finite value in output")
    return out


def golden_name(rel):
    stem = os.path.splitext(rel)[0]
    if rel.startswith("thirdparty/"):
        return stem.replace("thirdparty/", "thirdparty_").replace("/", "_")
    return stem.replace("/", "_")


def random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


def small_rotation(rng, max_angle):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    ang = rng.uniform(-max_angle, max_angle)
    return np.concatenate([[math.cos(ang / 2)], math.sin(ang / 2) * axis])


def random_qpos(m, rng):
    q = m.qpos0.copy()
    for j in range(m.njnt):
        t = int(m.jnt_type[j])
        a = int(m.jnt_qposadr[j])
        if t == FREE:
            q[a:a + 3] += rng.uniform(-0.5, 0.5, 3)
            q[a + 3:a + 7] = random_quat(rng)
        elif t == BALL:
            q[a:a + 4] = random_quat(rng)
        elif t == SLIDE:
            q[a] += rng.uniform(-0.3, 0.3)
        else:
            q[a] += rng.uniform(-1.0, 1.0)
    return q


def perturbed_qpos(m, rng):
    """qpos0 plus a small perturbation (rollout start for models without a keyframe)."""
    q = m.qpos0.copy()
    for j in range(m.njnt):
        t = int(m.jnt_type[j])
        a = int(m.jnt_qposadr[j])
        if t == FREE:
            q[a:a + 3] += rng.uniform(-0.05, 0.05, 3)
            q[a + 3:a + 7] = quat_mul(q[a + 3:a + 7], small_rotation(rng, 0.1))
            q[a + 3:a + 7] /= np.linalg.norm(q[a + 3:a + 7])
        elif t == BALL:
            q[a:a + 4] = quat_mul(q[a:a + 4], small_rotation(rng, 0.1))
            q[a:a + 4] /= np.linalg.norm(q[a:a + 4])
        elif t == SLIDE:
            q[a] += rng.uniform(-0.05, 0.05)
        else:
            q[a] += rng.uniform(-0.1, 0.1)
    return q


def random_qvel(m, rng, scale=1.0):
    v = rng.normal(0.0, scale, m.nv)
    for j in range(m.njnt):
        if int(m.jnt_type[j]) == FREE:
            a = int(m.jnt_dofadr[j])
            v[a:a + 6] *= 0.5
    return v


def random_act(m, rng):
    act = np.zeros(m.na)
    for i in range(m.nactuator):
        n = int(m.actuator_actnum[i])
        if n == 0:
            continue
        adr = int(m.actuator_actadr[i])
        if m.actuator_actlimited[i]:
            lo, hi = m.actuator_actrange[i]
            act[adr:adr + n] = rng.uniform(lo, hi, n)
        elif int(m.actuator_dyntype[i]) == DYN_MUSCLE:
            act[adr:adr + n] = rng.uniform(0.0, 1.0, n)
        else:
            act[adr:adr + n] = rng.normal(0.0, 1.0, n)
    return act


def random_ctrl(m, rng, overshoot=0.0):
    """Uniform in ctrlrange when limited (optionally extended by `overshoot` times the range
    width on each side, to exercise clamping), standard normal otherwise."""
    c = np.zeros(m.nu)
    for i in range(m.nu):
        if m.actuator_ctrllimited[i]:
            lo, hi = m.actuator_ctrlrange[i]
            w = hi - lo
            c[i] = rng.uniform(lo - overshoot * w, hi + overshoot * w)
        else:
            c[i] = rng.normal()
    return c


def random_mocap(m, rng):
    pos = np.zeros((m.nmocap, 3))
    quat = np.zeros((m.nmocap, 4))
    for b in range(m.nbody):
        k = int(m.body_mocapid[b])
        if k < 0:
            continue
        pos[k] = m.body_pos[b] + rng.uniform(-0.2, 0.2, 3)
        q = m.body_quat[b] + 0.3 * rng.normal(size=4)
        quat[k] = q / np.linalg.norm(q)
    return pos, quat


def sparse_to_dense(nrow, ncol, val, rownnz, rowadr, colind):
    res = np.zeros((nrow, ncol))
    for r in range(nrow):
        a = int(rowadr[r])
        for k in range(int(rownnz[r])):
            res[r, int(colind[a + k])] = val[a + k]
    return res


def dense_ten_J(m, d):
    return sparse_to_dense(m.ntendon, m.nv, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr,
                           m.ten_J_colind)


def dense_moment(m, d):
    return sparse_to_dense(m.nout, m.nv, d.actuator_moment, d.moment_rownnz, d.moment_rowadr,
                           d.moment_colind)


def dense_M(m, d):
    M = np.zeros((m.nv, m.nv))
    if m.nv:
        mujoco.mj_fullM(m, d, M)
    return M


def warnings_of(d):
    out = {}
    for i, w in enumerate(d.warning):
        if w.number:
            out[mujoco.mjtWarning(i).name] = int(w.number)
    return out


def names(m, objtype, n):
    return [mujoco.mj_id2name(m, objtype, i) or "" for i in range(n)]


def describe_model(m):
    ot = mujoco.mjtObj
    return {
        "body": names(m, ot.mjOBJ_BODY, m.nbody),
        "jnt": names(m, ot.mjOBJ_JOINT, m.njnt),
        "geom": names(m, ot.mjOBJ_GEOM, m.ngeom),
        "site": names(m, ot.mjOBJ_SITE, m.nsite),
        "cam": names(m, ot.mjOBJ_CAMERA, m.ncam),
        "tendon": names(m, ot.mjOBJ_TENDON, m.ntendon),
        "actuator": names(m, ot.mjOBJ_ACTUATOR, m.nactuator),
        "key": names(m, ot.mjOBJ_KEY, m.nkey),
    }


def check_no_constraints(d, what):
    if d.nefc != 0 or d.ncon != 0:
        raise AssertionError(f"{what}: nefc={d.nefc} ncon={d.ncon}, expected none")


def compute_state(m, rng, idx):
    """Sample input state `idx` and run mj_forward. Returns the JSON record."""
    d = mujoco.MjData(m)
    qpos = random_qpos(m, rng)
    qvel = random_qvel(m, rng)
    act = random_act(m, rng)
    # state 4 pushes limited controls up to 25% outside ctrlrange to exercise clamping
    ctrl = random_ctrl(m, rng, overshoot=0.25 if idx == 4 else 0.0)
    time = float(rng.uniform(0.0, 5.0))
    qfrc_applied = np.zeros(m.nv)
    xfrc_applied = np.zeros((m.nbody, 6))
    mocap_pos = d.mocap_pos.copy()
    mocap_quat = d.mocap_quat.copy()
    if idx in (1, 3, 4):
        qfrc_applied = rng.normal(0.0, 1.0, m.nv)
    if idx in (2, 3, 4):
        xfrc_applied[1:] = rng.normal(0.0, 1.0, (m.nbody - 1, 6))
    if idx != 0 and m.nmocap:
        mocap_pos, mocap_quat = random_mocap(m, rng)

    d.time = time
    d.qpos[:] = qpos
    d.qvel[:] = qvel
    d.act[:] = act
    d.ctrl[:] = ctrl
    d.qfrc_applied[:] = qfrc_applied
    d.xfrc_applied[:] = xfrc_applied
    d.mocap_pos[:] = mocap_pos
    d.mocap_quat[:] = mocap_quat
    mujoco.mj_forward(m, d)
    check_no_constraints(d, f"state {idx}")

    out = {k: flat(getattr(d, k)) for k in STATE_OUTPUTS}
    out["M"] = flat(dense_M(m, d))
    out["ten_J"] = flat(dense_ten_J(m, d))
    out["actuator_moment"] = flat(dense_moment(m, d))
    rec = {
        "input": {
            "time": time,
            "qpos": flat(qpos),
            "qvel": flat(qvel),
            "act": flat(act),
            "ctrl": flat(ctrl),
            "qfrc_applied": flat(qfrc_applied),
            "xfrc_applied": flat(xfrc_applied),
            "mocap_pos": flat(mocap_pos),
            "mocap_quat": flat(mocap_quat),
        },
        "output": out,
    }
    return rec, warnings_of(d)


def rollout_setup(m, rng):
    """Initial state and control sequence shared by the rollouts of all integrators."""
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
        source = "keyframe 0"
    else:
        mujoco.mj_resetData(m, d)
        d.qpos[:] = perturbed_qpos(m, rng)
        d.qvel[:] = random_qvel(m, rng, scale=0.1)
        d.act[:] = random_act(m, rng)
        source = "qpos0 + small perturbation"
    init = {
        "source": source,
        "time": float(d.time),
        "qpos": flat(d.qpos),
        "qvel": flat(d.qvel),
        "act": flat(d.act),
        "ctrl": flat(d.ctrl),
        "mocap_pos": flat(d.mocap_pos),
        "mocap_quat": flat(d.mocap_quat),
    }
    h = float(m.opt.timestep)
    nstep = int(round(ROLLOUT_DURATION / h))
    hold = 1
    for cand in (1, 10, 20, 50, 100):
        hold = cand
        if math.ceil(nstep / hold) * m.nu <= CTRL_BUDGET:
            break
    nrow = math.ceil(nstep / hold)
    ctrl = [random_ctrl(m, rng) for _ in range(nrow)]
    return d, init, nstep, hold, ctrl


class Unstable(Exception):
    pass


def run_rollout(m, base, nstep, hold, ctrl, integrator, timestep):
    """Step from `base` for nstep steps of size `timestep` with `integrator`.

    Before step k (0-based) ctrl is set to ctrl[k // hold].  Raises Unstable if MuJoCo
    raises a warning (e.g. bad qacc, after which it would silently reset the state)."""
    saved = (m.opt.integrator, m.opt.timestep)
    m.opt.integrator = integrator
    m.opt.timestep = timestep
    try:
        d = mujoco.MjData(m)
        d.time = base.time
        d.qpos[:] = base.qpos
        d.qvel[:] = base.qvel
        d.act[:] = base.act
        d.ctrl[:] = base.ctrl
        d.mocap_pos[:] = base.mocap_pos
        d.mocap_quat[:] = base.mocap_quat
        record_at = sorted({int(round(i * nstep / 10)) for i in range(11)})
        traj = []

        def snap(k):
            traj.append({"step": k, "time": float(d.time), "qpos": flat(d.qpos),
                         "qvel": flat(d.qvel), "act": flat(d.act)})

        if 0 in record_at:
            snap(0)
        for k in range(nstep):
            d.ctrl[:] = ctrl[k // hold]
            mujoco.mj_step(m, d)
            check_no_constraints(d, f"rollout integrator {integrator} step {k}")
            if warnings_of(d) or not (np.all(np.isfinite(d.qpos))
                                      and np.all(np.isfinite(d.qvel))):
                raise Unstable(f"integrator {integrator} h={timestep}: unstable at step {k} "
                               f"({warnings_of(d)})")
            if k + 1 in record_at:
                snap(k + 1)
        return traj
    finally:
        m.opt.integrator, m.opt.timestep = saved


MAX_HALVINGS = 4
PERTURBATION = 1e-9
# A rollout whose final state moves by more than MAX_GAIN times a 1e-9 change of the
# initial velocity is numerically unstable (erratic, though it may stay bounded).
MAX_GAIN = 1e6


def perturbation_gain(m, base, nstep, hold, ctrl, integrator, timestep, traj):
    """How strongly this rollout amplifies a tiny change of the initial state: rerun with
    qvel shifted by PERTURBATION and return max |change of final qpos, qvel| / PERTURBATION.
    A comparison tolerance for the final state should be at least roughly
    gain * (expected per-step rounding differences)."""
    if m.nv == 0:
        return 0.0
    pert = mujoco.MjData(m)
    mujoco.mj_copyData(pert, m, base)
    pert.qvel[:] = base.qvel + PERTURBATION
    try:
        t2 = run_rollout(m, pert, nstep, hold, ctrl, integrator, timestep)
    except Unstable:
        return float("inf")
    a, b = traj[-1], t2[-1]
    diff = max(np.abs(np.array(a["qpos"]) - np.array(b["qpos"])).max(),
               np.abs(np.array(a["qvel"]) - np.array(b["qvel"])).max())
    return float(diff / PERTURBATION)




def generate(rel, thirdparty):
    path = os.path.join(MODELS_DIR, rel)
    name = golden_name(rel)
    m = mujoco.MjModel.from_xml_path(path)
    xml_disableflags = int(m.opt.disableflags)
    if thirdparty:
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    seed = zlib.crc32(name.encode())
    rng = np.random.default_rng(seed)

    doc = {
        "model": name,
        # <mujoco model="..."> is stored first in the names buffer
        "model_name": bytes(m.names).split(b"\0", 1)[0].decode(),
        "xml": "models/" + rel,
        "mujoco_version": mujoco.__version__,
        "seed": seed,
        "disable_constraint": bool(thirdparty),
        "sizes": {k: int(getattr(m, k)) for k in SIZES},
        "option": {
            "timestep": float(m.opt.timestep),
            "gravity": flat(m.opt.gravity),
            "wind": flat(m.opt.wind),
            "magnetic": flat(m.opt.magnetic),
            "density": float(m.opt.density),
            "viscosity": float(m.opt.viscosity),
            "integrator": int(m.opt.integrator),
            "disableflags": int(m.opt.disableflags),
            "disableflags_xml": xml_disableflags,
            "enableflags": int(m.opt.enableflags),
        },
        "names": describe_model(m),
        "compiled": {k: flat(getattr(m, k)) for k in COMPILED_FIELDS},
    }

    warnings = {}
    states = []
    for i in range(NSTATES):
        rec, w = compute_state(m, rng, i)
        states.append(rec)
        for k, v in w.items():
            warnings[f"state{i}:{k}"] = v
    doc["states"] = states

    base, init, nstep, hold, ctrl = rollout_setup(m, rng)
    reduced = {}
    skipped = []
    rollouts = []
    for integ, iname in INTEGRATORS:
        # Some third-party models are only stable with their own integrator (typically Euler
        # with implicit damping).  For those, halve the timestep until the rollout is stable,
        # keeping the same control signal in time (hold doubles with each halving).  Our own
        # models must be stable at their nominal timestep.
        # If it is still unstable after MAX_HALVINGS, the rollout is recorded as skipped.
        halvings = 0
        traj = None
        while True:
            factor = 2 ** halvings
            h = float(m.opt.timestep) / factor
            try:
                traj = run_rollout(m, base, nstep * factor, hold * factor, ctrl, integ, h)
                gain = perturbation_gain(m, base, nstep * factor, hold * factor, ctrl, integ,
                                         h, traj)
                if not gain < MAX_GAIN:
                    traj = None
                    raise Unstable(f"integrator {integ} h={h}: perturbation gain {gain:.3g}")
                break
            except Unstable as e:
                if not thirdparty:
                    raise
                if halvings >= MAX_HALVINGS:
                    print(f"  {name} {iname}: {e}; skipping this rollout", file=sys.stderr)
                    break
                print(f"  {name} {iname}: {e}; halving timestep", file=sys.stderr)
                halvings += 1
        if traj is None:
            # left out of "rollouts" (so every entry there is a usable trajectory)
            reduced[iname] = "skipped"
            skipped.append({
                "integrator": integ,
                "integrator_name": iname,
                "reason": f"unstable even with timestep {float(m.opt.timestep)}/2^{halvings}",
            })
            continue
        if halvings:
            reduced[iname] = halvings
        rollouts.append({
            "integrator": integ,
            "integrator_name": iname,
            "timestep": h,
            "timestep_halvings": halvings,
            "duration": ROLLOUT_DURATION,
            "nstep": nstep * factor,
            "init": init,
            "ctrl_hold": hold * factor,
            "ctrl": [flat(c) for c in ctrl],
            "trajectory": traj,
            "perturbation_gain": gain,
        })
    doc["rollouts"] = rollouts
    doc["skipped_rollouts"] = skipped
    doc["warnings"] = warnings

    out = os.path.join(HERE, name + ".json")
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    with open(out, "w") as f:
        f.write(text)
        f.write("\n")
    size = os.path.getsize(out)
    if size > MAX_FILE_BYTES:
        raise AssertionError(f"{out} is {size} bytes, over the {MAX_FILE_BYTES} budget")
    print(f"{name:45s} nq={m.nq:3d} nv={m.nv:3d} nu={m.nu:3d} na={m.na:3d} "
          f"ntendon={m.ntendon:2d} nstep={nstep:4d} hold={hold:3d} {size / 1024:8.1f} KiB"
          + (f"  timestep halved/skipped: {reduced}" if reduced else "")
          + (f"  WARNINGS {warnings}" if warnings else ""))
    return name, warnings


# Models whose golden data another script writes (path prefix under models/ -> script), and
# models without golden data of MuJoCo's (-> why): check_model_list skips them.
ELSEWHERE = {
    "contacts/": "generate_contacts.py",
    "sensors/": "generate_sensors.py",
    "fluid/": "generate_fluid.py",
    "constraints/": "generate_constraints.py (and the inverse, noslip, PGS and step scripts)",
    "mjcf29/": "generate_mjcf29.py",
    "spatial/": "generate_spatial.py",
    "sysid/": "generate_sysid.py",
    "delays.xml": "generate_delays.py",
    "thirdparty/dm_control/ball_in_cup.xml": "generate_spatial.py",
    "thirdparty/mujoco/mjx/": "generate_spatial.py",
    "thirdparty/mujoco/testdata/": "generate_mjcf29.py and generate_spatial.py",
    "thirdparty/mujoco/attach/": "generate_mjcf29.py",
    "thirdparty/mujoco/replicate/": "generate_mjcf29.py",
    "thirdparty/mujoco/tendon_arm/": "none: MuJoCo 4.0 refuses arm26.xml (tests/suite/spatial.rs)",
    "pbad/": "none: PBAD is diffmj's own integrator, checked by its own tests",
    "control/": "none: task models of the control examples and tests",
}


def check_model_list():
    """Every XML file under models/ must be listed as a model or as a fragment, or covered by
    ELSEWHERE."""
    listed = set(OWN_MODELS) | set(THIRDPARTY_MODELS) | set(FRAGMENTS)
    found = set()
    for root, _, files in os.walk(MODELS_DIR):
        for fn in files:
            rel = os.path.relpath(os.path.join(root, fn), MODELS_DIR).replace(os.sep, "/")
            if fn.endswith(".xml") and not any(rel.startswith(k) for k in ELSEWHERE):
                found.add(rel)
    unlisted = sorted(found - listed)
    missing = sorted(listed - found)
    if unlisted or missing:
        raise SystemExit(f"model list out of date: unlisted={unlisted} missing={missing}")


def _log_mujoco_warning(msg):
    # Route mju_warning to stderr instead of MuJoCo's default, which also appends to
    # MUJOCO_LOG.TXT in the working directory. (Warnings are expected while probing the
    # stability of third-party rollouts; the ones that count are read from d.warning.)
    print(f"  mujoco warning: {msg}", file=sys.stderr)


def main(argv):
    mujoco.set_mju_user_warning(_log_mujoco_warning)
    check_model_list()
    filt = argv[1:]
    all_warnings = {}
    jobs = [(r, False) for r in OWN_MODELS] + [(r, True) for r in THIRDPARTY_MODELS]
    for rel, tp in jobs:
        name = golden_name(rel)
        if filt and not any(f in name for f in filt):
            continue
        _, w = generate(rel, tp)
        if w:
            all_warnings[name] = w
    if all_warnings:
        print("MuJoCo warnings were raised:", all_warnings)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
