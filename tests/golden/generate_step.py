#!/usr/bin/env python3
"""Generate golden data for what a step leaves behind: for models with contacts and constraints,
every integrator (Euler, RK4, implicit, implicitfast), a few consecutive mj_step calls from the
same state, recording after each step qpos, qvel, act, qacc and qacc_warmstart.

Usage:  python3 tests/golden/generate_step.py

Writes tests/golden/step/<model>.json (model: the XML's path under models/ with "/" -> "_").
Solver settings, applied after loading: Newton, tolerance 1e-12, iterations 1000,
ls_iterations 100, ccd_tolerance 1e-15 and ccd_iterations 1000 (MuJoCo's GJK/EPA stops on its
tolerance, so at the default 1e-6 its depths are off by ~1e-7; diffmj's are exact), so that the solution (and with it the warm start of the next step) is
defined to rounding. Start: keyframe 0 if the model has one, else qpos0; qvel = 0.5·sin(i)
for dof i; ctrl = 0 (its ctrl is not recorded). SETTLE steps with the model's own integrator
first, so that contacts are established, then the recorded state ("start") and NSTEP steps per
integrator from it.

File format (json, floats with repr): model, xml, mujoco_version, settle, option {timestep,
solver, tolerance, iterations, ls_iterations}, start {time, qpos, qvel, act,
qacc_warmstart}, runs: [{integrator (mjtIntegrator int), steps: [{qpos, qvel, act, qacc,
qacc_warmstart}]}].
"""
import json
import math
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["thirdparty/dm_control/humanoid", "thirdparty/gymnasium/humanoid",
          "thirdparty/gymnasium/ant", "thirdparty/dm_control/walker"]
SETTLE = 100
NSTEP = 4
INTEGRATORS = [mujoco.mjtIntegrator.mjINT_EULER, mujoco.mjtIntegrator.mjINT_RK4,
               mujoco.mjtIntegrator.mjINT_IMPLICIT, mujoco.mjtIntegrator.mjINT_IMPLICITFAST]


def state(d):
    return {"qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(), "act": d.act.tolist(),
            "qacc": d.qacc.tolist(), "qacc_warmstart": d.qacc_warmstart.tolist()}


def main():
    out_dir = os.path.join(ROOT, "tests", "golden", "step")
    os.makedirs(out_dir, exist_ok=True)
    for name in MODELS:
        xml = f"models/{name}.xml"
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, xml))
        m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
        m.opt.tolerance = 1e-12
        m.opt.iterations = 1000
        m.opt.ls_iterations = 100
        # the general convex collider (capsule-cylinder here) exact to rounding, as ours is
        m.opt.ccd_tolerance = 1e-15
        m.opt.ccd_iterations = 1000
        d = mujoco.MjData(m)
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        d.qvel[:] = [0.5 * math.sin(i) for i in range(m.nv)]
        for _ in range(SETTLE):
            mujoco.mj_step(m, d)
        start = {"time": d.time, "qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(),
                 "act": d.act.tolist(), "qacc_warmstart": d.qacc_warmstart.tolist()}
        runs = []
        integrator0 = m.opt.integrator
        for integ in INTEGRATORS:
            m.opt.integrator = integ
            e = mujoco.MjData(m)
            mujoco.mj_copyData(e, m, d)
            steps = []
            for _ in range(NSTEP):
                mujoco.mj_step(m, e)
                assert not any(w.number for w in e.warning), f"{name}: MuJoCo warning"
                steps.append(state(e))
            runs.append({"integrator": int(integ), "steps": steps})
        m.opt.integrator = integrator0
        doc = {"model": name, "xml": xml, "mujoco_version": mujoco.__version__,
               "settle": SETTLE,
               "option": {"timestep": m.opt.timestep, "solver": int(m.opt.solver),
                          "tolerance": m.opt.tolerance, "iterations": m.opt.iterations,
                          "ls_iterations": m.opt.ls_iterations,
                          "ccd_tolerance": m.opt.ccd_tolerance,
                          "ccd_iterations": m.opt.ccd_iterations},
               "ncon": int(d.ncon), "start": start, "runs": runs}
        path = os.path.join(out_dir, name.replace("/", "_") + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        print(f"{path}: ncon {d.ncon} at the start")


if __name__ == "__main__":
    main()
