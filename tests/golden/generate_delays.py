#!/usr/bin/env python3
"""Golden data for actuator and sensor delays (MuJoCo 4.0 histories): rollouts of models/delays.xml
with each integrator under random controls, and a mid-rollout state with its history.

Usage:  python3 tests/golden/generate_delays.py

Writes tests/golden/delays/rollouts.json: {mujoco_version, runs: [{integrator (mjtIntegrator code), ctrl
(steps x nu), qpos, qvel, act, actuator_force, history, sensordata (per step, after the step), state_mid
(the mjSTATE_INTEGRATION vector after half the steps), nhistory, history_reset}]}.
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS = 150


def main():
    path = os.path.join(ROOT, "models", "delays.xml")
    runs = []
    for integ in [mujoco.mjtIntegrator.mjINT_EULER, mujoco.mjtIntegrator.mjINT_RK4,
                  mujoco.mjtIntegrator.mjINT_IMPLICITFAST]:
        m = mujoco.MjModel.from_xml_path(path)
        m.opt.integrator = integ
        d = mujoco.MjData(m)
        rng = np.random.default_rng(int(integ))
        ctrl = rng.uniform(-1.0, 1.0, (STEPS, m.nu))
        rec = {k: [] for k in ["qpos", "qvel", "act", "actuator_force", "history", "sensordata"]}
        run = {"integrator": int(integ), "ctrl": ctrl.tolist(), "nhistory": int(m.nhistory),
               "history_reset": d.history.tolist()}
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        for k in range(STEPS):
            d.ctrl[:] = ctrl[k]
            mujoco.mj_step(m, d)
            for key in rec:
                rec[key].append(getattr(d, key).tolist())
            if k == STEPS // 2 - 1:
                st = np.zeros(mujoco.mj_stateSize(m, spec))
                mujoco.mj_getState(m, d, st, spec)
                run["state_mid"] = st.tolist()
        run.update(rec)
        runs.append(run)
    out = os.path.join(ROOT, "tests", "golden", "delays", "rollouts.json")
    with open(out, "w") as f:
        json.dump({"mujoco_version": mujoco.__version__, "steps": STEPS, "runs": runs}, f)
    print("wrote", out)


if __name__ == "__main__":
    main()
