#!/usr/bin/env python3
"""Generate golden data for spatial tendons (issue 23 §3): lengths, Jacobians, velocities and
path points of every tendon, and what the tendons feed (passive forces, actuator lengths and
moments, constraint forces, qacc, inverse dynamics), at random states after mj_forward, plus
rollouts with every integrator.

Usage:  python3 tests/golden/generate_spatial.py

Models: models/spatial/*.xml (ours: site paths and pulleys, sphere and cylinder wrapping with
and without side sites, inside wrapping, limits, friction loss, springs and dampers, motors,
servos and muscles, a tendon equality, armature on site paths, side sites all round a cylinder
and a sphere), dm_control's ball_in_cup (models/thirdparty/dm_control,
copied unmodified from the dm_control 1.0.50 wheel) and models published in MuJoCo's repository
(models/thirdparty/mujoco, see its NOTICE): a muscle arm, an activation test with a muscle on a
spatial tendon, MJX's sensor test model (every sensor type but camprojection), MJX's tendon
test models (site paths, pulleys, sphere and cylinder wrapping, side sites, armature). Options applied after loading, to all: solver
Newton, tolerance 1e-12, iterations 1000, ls_iterations 100 (so that constraint forces are
defined to rounding).

States: NSTATE per model (NSTATE_OF where given), from numpy's default_rng(SEED): qpos = qpos0 + U(-s, s) per
coordinate with s alternating 0.3 and 1.2 (small states keep the wrapping tendons on their geoms,
large ones reach the straight paths), quaternions of ball and free joints replaced by normalized
Gaussian 4-vectors, free-joint positions qpos0 + U(-0.1, 0.1); qvel ~ N(0, 1); ctrl uniform in
the control range (or U(-1, 1)); act U(0, 1).

Rollouts: from state 0 with its ctrl held, 1 s of mj_step calls (the model's timestep), with
the model's integrator and then each other one (Euler, RK4, implicit, implicitfast); records
qpos, qvel, act at the end. After each forward, mj_inverse at the forward's qacc gives
qfrc_inverse.

File format (json, floats with repr): model, xml, mujoco_version, option {solver, tolerance,
iterations, ls_iterations}, actuator_lengthrange, tendon_length0, tendon_invweight0, states:
[{qpos, qvel, ctrl, act, ten_length, ten_J (dense ntendon x nv, row-major), ten_velocity,
ten_wrapadr, ten_wrapnum, wrap_obj, wrap_xpos (the first sum(ten_wrapnum) points), actuator_length,
actuator_moment (dense nu x nv), qfrc_passive, qfrc_actuator, qfrc_bias, qfrc_constraint, nefc, qacc,
qfrc_inverse, sensordata}], rollouts [{integrator (mjtIntegrator int), nstep, qpos, qvel, act,
sensordata (of the last step's forward pass)}].
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["spatial/sites", "spatial/sphere", "spatial/cylinder", "spatial/uses",
          "spatial/muscle", "spatial/armature", "spatial/sides",
          "thirdparty/dm_control/ball_in_cup",
          # published by MuJoCo (models/thirdparty/mujoco/NOTICE)
          "thirdparty/mujoco/mjx/actuator/arm21", "thirdparty/mujoco/testdata/activation",
          "thirdparty/mujoco/mjx/sensor/sensor",
          "thirdparty/mujoco/mjx/tendon/site_wrap", "thirdparty/mujoco/mjx/tendon/pulley_site",
          "thirdparty/mujoco/mjx/tendon/pulley_site_wrap",
          "thirdparty/mujoco/mjx/tendon/wrap_sidesite",
          "thirdparty/mujoco/mjx/tendon/fixed_site_wrap",
          "thirdparty/mujoco/mjx/tendon/pulley_fixed_site_wrap",
          "thirdparty/mujoco/mjx/tendon/armature"]
NSTATE = 12
# side sites all round two geoms: more states, so that the side rule's rarer cases occur
NSTATE_OF = {"spatial/sides": 24}
DURATION = 1.0  # seconds of each rollout
SEED = 23
INTEGRATORS = [mujoco.mjtIntegrator.mjINT_EULER, mujoco.mjtIntegrator.mjINT_RK4,
               mujoco.mjtIntegrator.mjINT_IMPLICIT, mujoco.mjtIntegrator.mjINT_IMPLICITFAST]


def dense(m, vals, rownnz, rowadr, colind, nrow):
    out = np.zeros((nrow, m.nv))
    for r in range(nrow):
        for k in range(rownnz[r]):
            out[r, colind[rowadr[r] + k]] = vals[rowadr[r] + k]
    return out


def random_state(m, d, rng, s):
    d.qpos[:] = m.qpos0 + rng.uniform(-s, s, m.nq)
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            d.qpos[a:a + 3] = m.qpos0[a:a + 3] + rng.uniform(-0.1, 0.1, 3)
            q = rng.normal(size=4)
            d.qpos[a + 3:a + 7] = q / np.linalg.norm(q)
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=4)
            d.qpos[a:a + 4] = q / np.linalg.norm(q)
    d.qvel[:] = rng.normal(size=m.nv)
    for u in range(m.nu):
        lo, hi = m.actuator_ctrlrange[u] if m.actuator_ctrllimited[u] else (-1.0, 1.0)
        d.ctrl[u] = rng.uniform(lo, hi)
    d.act[:] = rng.uniform(0, 1, m.na)


def record(m, d):
    nw = int(d.ten_wrapnum.sum())
    return {
        "qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(), "ctrl": d.ctrl.tolist(),
        "act": d.act.tolist(),
        "ten_length": d.ten_length.tolist(),
        "ten_J": dense(m, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind,
                       m.ntendon).ravel().tolist(),
        "ten_velocity": d.ten_velocity.tolist(),
        "ten_wrapadr": d.ten_wrapadr.tolist(), "ten_wrapnum": d.ten_wrapnum.tolist(),
        "wrap_obj": d.wrap_obj.ravel()[:nw].tolist(),
        "wrap_xpos": d.wrap_xpos.ravel()[:3 * nw].tolist(),
        "actuator_length": d.actuator_length.tolist(),
        "actuator_moment": dense(m, d.actuator_moment, d.moment_rownnz, d.moment_rowadr,
                                 d.moment_colind, m.nu).ravel().tolist(),
        "qfrc_passive": d.qfrc_passive.tolist(), "qfrc_actuator": d.qfrc_actuator.tolist(),
        "qfrc_bias": d.qfrc_bias.tolist(),
        "qfrc_constraint": d.qfrc_constraint.tolist(), "nefc": int(d.nefc),
        "qacc": d.qacc.tolist(), "sensordata": d.sensordata.tolist(),
    }


def main():
    out_dir = os.path.join(ROOT, "tests", "golden", "spatial")
    os.makedirs(out_dir, exist_ok=True)
    for name in MODELS:
        xml = f"models/{name}.xml"
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, xml))
        m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
        m.opt.tolerance = 1e-12
        m.opt.iterations = 1000
        m.opt.ls_iterations = 100
        d = mujoco.MjData(m)
        rng = np.random.default_rng(SEED)
        states = []
        for i in range(NSTATE_OF.get(name, NSTATE)):
            mujoco.mj_resetData(m, d)
            random_state(m, d, rng, 0.3 if i % 2 == 0 else 1.2)
            mujoco.mj_forward(m, d)
            rec = record(m, d)
            # inverse dynamics at the forward's qacc
            e = mujoco.MjData(m)
            mujoco.mj_copyData(e, m, d)
            mujoco.mj_inverse(m, e)
            rec["qfrc_inverse"] = e.qfrc_inverse.tolist()
            states.append(rec)
        # rollouts from state 0, with the model's integrator and with each of the others
        nstep = round(DURATION / m.opt.timestep)
        rollouts = []
        integ0 = m.opt.integrator
        for integ in [integ0] + [i for i in INTEGRATORS if i != integ0]:
            m.opt.integrator = integ
            mujoco.mj_resetData(m, d)
            s0 = states[0]
            d.qpos[:] = s0["qpos"]
            d.qvel[:] = s0["qvel"]
            d.ctrl[:] = s0["ctrl"]
            d.act[:] = s0["act"]
            for _ in range(nstep):
                mujoco.mj_step(m, d)
                assert not any(w.number for w in d.warning), f"{name}: MuJoCo warning"
            rollouts.append({"integrator": int(integ), "nstep": nstep, "qpos": d.qpos.tolist(),
                             "qvel": d.qvel.tolist(), "act": d.act.tolist(),
                             "sensordata": d.sensordata.tolist()})
        m.opt.integrator = integ0
        doc = {"model": name, "xml": xml, "mujoco_version": mujoco.__version__,
               "option": {"solver": int(m.opt.solver), "tolerance": m.opt.tolerance,
                          "iterations": m.opt.iterations, "ls_iterations": m.opt.ls_iterations},
               "actuator_lengthrange": m.actuator_lengthrange.ravel().tolist(),
               "tendon_length0": m.tendon_length0.tolist(),
               "tendon_invweight0": m.tendon_invweight0.tolist(),
               "states": states,
               "rollouts": rollouts}
        path = os.path.join(out_dir, name.replace("/", "_") + ".json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=None)
        wraps = sum(sum(1 for o in s["wrap_obj"] if o >= 0) for s in states) // 2
        print(f"{path}: {m.ntendon} tendons, {len(states)} states ({wraps} wrapped pieces), "
              f"{nstep} steps")


if __name__ == "__main__":
    main()
