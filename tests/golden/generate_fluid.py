#!/usr/bin/env python3
"""Golden data for the ellipsoid fluid model under the implicit integrators, where the fluid's
velocity derivative enters the step: models/fluid/leaves_small.xml falls from rest (qpos0,
qvel 0) for NSTEP steps under implicitfast and implicit; qpos and qvel after each of the first
10 steps and then every 10th are recorded.

Usage:  python3 tests/golden/generate_fluid.py

Writes tests/golden/fluid/leaves_small.json: model, mujoco_version, runs: [{integrator
(mjtIntegrator int), steps: [{step, qpos, qvel}]}] (floats with repr).
"""
import json
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "fluid/leaves_small"
NSTEP = 300
INTEGRATORS = [mujoco.mjtIntegrator.mjINT_IMPLICITFAST, mujoco.mjtIntegrator.mjINT_IMPLICIT]


def main():
    m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, "models", MODEL + ".xml"))
    d = mujoco.MjData(m)
    runs = []
    for integ in INTEGRATORS:
        m.opt.integrator = integ
        mujoco.mj_resetData(m, d)
        steps = []
        for k in range(1, NSTEP + 1):
            mujoco.mj_step(m, d)
            if k <= 10 or k % 10 == 0:
                steps.append({"step": k, "qpos": d.qpos.tolist(), "qvel": d.qvel.tolist()})
        runs.append({"integrator": int(integ), "steps": steps})
    out = os.path.join(ROOT, "tests", "golden", "fluid")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, MODEL.split("/")[-1] + ".json"), "w") as f:
        json.dump({"model": MODEL, "mujoco_version": mujoco.__version__, "runs": runs}, f)


if __name__ == "__main__":
    main()
