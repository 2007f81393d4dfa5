#!/usr/bin/env python3
"""Generate golden sensor data for diffmj from MuJoCo 4.0 (mj_forward and mj_inverse).

Usage:  python3 tests/golden/generate_sensors.py

Models: the sensor models of models/sensors/ (arm.xml: every sensor type diffmj computes on
a model without contacts, with the energy flag; contact.xml: sensors on bodies in contact,
with a pyramidal and an elliptic cone) and the dm_control models that carry sensors (touch,
force, torque, accelerometers, ... on walkers and hands in contact). Every model runs with
solver tolerance 1e-12 (and enough iterations to reach it), so that the constraint forces
the acceleration sensors read are MuJoCo's to rounding.

States: for arm.xml, random states (qpos in and beyond the joint ranges, normalized
quaternions, qvel, act, ctrl, qfrc_applied, xfrc_applied, time); for the contact models,
states reached by stepping from the first keyframe (or qpos0) with random controls, then
random qfrc_applied and xfrc_applied. At each state: mj_forward, recorded sensordata, qacc,
energy, ncon; then mj_inverse at the forward's qacc plus a perturbation, recorded sensordata
and qfrc_inverse.

Writes tests/golden/sensors/<name>.json:
  model (path from the repository root), cone, tolerance, iterations, ls_iterations,
  mujoco_version, seed, nsensordata, int_fields (sensor_type, sensor_datatype,
  sensor_needstage, sensor_objtype, sensor_objid, sensor_reftype, sensor_refid, sensor_dim,
  sensor_adr, sensor_intprm, site_type), sensor_cutoff, sensor_noise, sensor_interval,
  states: [{time, qpos, qvel, act, ctrl, qfrc_applied, xfrc_applied, qacc_warmstart,
            sensordata, qacc, energy, ncon, nefc, inverse: {qacc, sensordata, qfrc_inverse},
            step: {euler|rk4|implicitfast: {sensordata, energy}}}]
(step: one mj_step from the state, on a fresh MjData, with that integrator).
Floats are written exactly (repr). Deterministic: the seed is the crc32 of the name.
"""
import json
import os
import zlib

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(HERE, "sensors")

NSTATES = 6
# (name, model path, cone or None for the model's, kind)
MODELS = [
    ("arm", "models/sensors/arm.xml", None, "random"),
    ("contact_pyramidal", "models/sensors/contact.xml", "pyramidal", "settle"),
    ("contact_elliptic", "models/sensors/contact.xml", "elliptic", "settle"),
    ("dm_walker", "models/thirdparty/dm_control/walker.xml", None, "settle"),
    ("dm_hopper", "models/thirdparty/dm_control/hopper.xml", None, "settle"),
    ("dm_cheetah", "models/thirdparty/dm_control/cheetah.xml", None, "settle"),
    ("dm_finger", "models/thirdparty/dm_control/finger.xml", None, "settle"),
    ("dm_fish", "models/thirdparty/dm_control/fish.xml", None, "random"),
    ("dm_manipulator", "models/thirdparty/dm_control/manipulator.xml", None, "settle"),
    ("dm_humanoid", "models/thirdparty/dm_control/humanoid.xml", None, "settle"),
]
INT_FIELDS = ["sensor_type", "sensor_datatype", "sensor_needstage", "sensor_objtype",
              "sensor_objid", "sensor_reftype", "sensor_refid", "sensor_dim", "sensor_adr",
              "sensor_intprm", "site_type"]
CONES = {"pyramidal": int(mujoco.mjtCone.mjCONE_PYRAMIDAL),
         "elliptic": int(mujoco.mjtCone.mjCONE_ELLIPTIC)}
STEP_INTEGRATORS = [("euler", int(mujoco.mjtIntegrator.mjINT_EULER)),
                    ("rk4", int(mujoco.mjtIntegrator.mjINT_RK4)),
                    ("implicitfast", int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST))]
FREE = int(mujoco.mjtJoint.mjJNT_FREE)
BALL = int(mujoco.mjtJoint.mjJNT_BALL)


def lst(a):
    return [float(x) for x in np.asarray(a).ravel()]


def random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def random_state(m, d, rng):
    """qpos around qpos0, beyond the limits for some joints; quaternions random."""
    mujoco.mj_resetData(m, d)
    d.qpos[:] = m.qpos0
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        t = m.jnt_type[j]
        if t == FREE:
            d.qpos[a:a + 3] += rng.normal(scale=0.2, size=3)
            d.qpos[a + 3:a + 7] = random_quat(rng)
        elif t == BALL:
            d.qpos[a:a + 4] = random_quat(rng)
        elif m.jnt_limited[j]:
            lo, hi = m.jnt_range[j]
            w = hi - lo
            d.qpos[a] = rng.uniform(lo - 0.15 * w, hi + 0.15 * w)
        else:
            d.qpos[a] += rng.normal(scale=0.5)
    d.qvel[:] = rng.normal(scale=1.0, size=m.nv)
    d.act[:] = rng.normal(scale=0.5, size=m.na)
    d.time = float(rng.uniform(0, 2))


def random_inputs(m, d, rng, scale=1.0):
    d.ctrl[:] = rng.normal(scale=scale, size=m.nu)
    for u in range(m.nu):
        if m.actuator_ctrllimited[u]:
            lo, hi = m.actuator_ctrlrange[u]
            d.ctrl[u] = rng.uniform(lo, hi)
    d.qfrc_applied[:] = rng.normal(scale=0.3 * scale, size=m.nv)
    d.xfrc_applied[:] = 0
    for b in rng.choice(np.arange(1, m.nbody), size=min(2, m.nbody - 1), replace=False):
        d.xfrc_applied[b] = rng.normal(scale=0.5 * scale, size=6)


def settle(m, d, rng, nstep):
    mujoco.mj_resetData(m, d)
    if m.nkey > 0:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    for k in range(nstep):
        if k % 50 == 0:
            random_inputs(m, d, rng, 0.3)
            d.xfrc_applied[:] = 0
            d.qfrc_applied[:] = 0
        mujoco.mj_step(m, d)
    d.qvel[:] += rng.normal(scale=0.05, size=m.nv)
    random_inputs(m, d, rng, 0.5)


def set_inputs(d, inp):
    d.time = inp["time"]
    for k in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "qacc_warmstart"):
        getattr(d, k)[:] = inp[k]
    d.xfrc_applied.flat[:] = inp["xfrc_applied"]


def record(m, d, rng):
    inp = {
        "time": float(d.time),
        "qpos": lst(d.qpos),
        "qvel": lst(d.qvel),
        "act": lst(d.act),
        "ctrl": lst(d.ctrl),
        "qfrc_applied": lst(d.qfrc_applied),
        "xfrc_applied": lst(d.xfrc_applied),
        "qacc_warmstart": lst(d.qacc_warmstart),
    }
    mujoco.mj_forward(m, d)
    w = [int(d.warning[i].number) for i in range(len(d.warning))]
    if any(w):
        raise SystemExit(f"MuJoCo warnings {w}")
    out = dict(inp)
    out.update({
        "sensordata": lst(d.sensordata),
        "qacc": lst(d.qacc),
        "energy": lst(d.energy),
        "ncon": int(d.ncon),
        "nefc": int(d.nefc),
    })
    # one step with each integrator from the state: the sensors of the step's forward pass
    # (RK4's inner passes skip them) and the energy its last pass leaves
    out["step"] = {}
    saved = m.opt.integrator
    for name, integ in STEP_INTEGRATORS:
        m.opt.integrator = integ
        e = mujoco.MjData(m)
        set_inputs(e, inp)
        mujoco.mj_step(m, e)
        out["step"][name] = {"sensordata": lst(e.sensordata), "energy": lst(e.energy)}
    m.opt.integrator = saved
    qacc = d.qacc + rng.normal(size=m.nv) * (1 + np.abs(d.qacc)) * 0.1
    d.qacc[:] = qacc
    mujoco.mj_inverse(m, d)
    out["inverse"] = {
        "qacc": lst(qacc),
        "sensordata": lst(d.sensordata),
        "qfrc_inverse": lst(d.qfrc_inverse),
    }
    return out


def generate(name, path, cone, kind):
    m = mujoco.MjModel.from_xml_path(os.path.join(REPO, path))
    if cone is not None:
        m.opt.cone = CONES[cone]
    m.opt.tolerance = 1e-12
    m.opt.iterations = max(m.opt.iterations, 500)
    m.opt.ls_iterations = max(m.opt.ls_iterations, 100)
    d = mujoco.MjData(m)
    seed = zlib.crc32(name.encode())
    rng = np.random.default_rng(seed)
    states = []
    for s in range(NSTATES):
        if kind == "random":
            random_state(m, d, rng)
            random_inputs(m, d, rng)
        else:
            settle(m, d, rng, 100 + 80 * s)
        states.append(record(m, d, rng))
    doc = {
        "model": path,
        "cone": "elliptic" if m.opt.cone == CONES["elliptic"] else "pyramidal",
        "tolerance": float(m.opt.tolerance),
        "iterations": int(m.opt.iterations),
        "ls_iterations": int(m.opt.ls_iterations),
        "mujoco_version": mujoco.__version__,
        "seed": seed,
        "nsensordata": int(m.nsensordata),
        "int_fields": {k: [int(x) for x in getattr(m, k).ravel()] for k in INT_FIELDS},
        "sensor_cutoff": lst(m.sensor_cutoff),
        "sensor_noise": lst(m.sensor_noise),
        "sensor_interval": lst(m.sensor_interval),
        "states": states,
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    ncon = [st["ncon"] for st in states]
    print(f"{name:20s} nsensor={m.nsensor:3d} nsensordata={m.nsensordata:3d} ncon={ncon}")


def main():
    for name, path, cone, kind in MODELS:
        generate(name, path, cone, kind)


if __name__ == "__main__":
    main()
