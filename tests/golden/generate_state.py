#!/usr/bin/env python3
"""Generate golden data for the state API (MuJoCo's mj_stateSize / mj_getState): for a few
models, the size of every state component and composite signature, and the full
mjSTATE_INTEGRATION vector after a short simulation with non-trivial inputs, so that the
layout (component order, xfrc_applied, eq_active, mocap) is checked element by element.

Usage:  python3 tests/golden/generate_state.py

Writes tests/golden/state/state.json: {mujoco_version, models: [{model, sizes: {NAME: size},
inputs: {ctrl, qfrc_applied, xfrc_applied, eq_active, mocap_pos, mocap_quat}, steps,
integration: [...]}]}. Start: keyframe 0 or qpos0, qvel = 0.5 sin(i); the inputs are set
before STEPS steps of the model's own integrator.
"""
import json
import math
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["mocap", "actuators", "constraints/equality", "humanoid_like"]
STEPS = 5
NAMES = [k for k in mujoco.mjtState.__members__ if k != "mjNSTATE"]


def main():
    out = {"mujoco_version": mujoco.__version__, "models": []}
    for name in MODELS:
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, "models", name + ".xml"))
        d = mujoco.MjData(m)
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        d.qvel[:] = [0.5 * math.sin(i) for i in range(m.nv)]
        d.ctrl[:] = [0.3 * math.cos(i) for i in range(m.nu)]
        d.qfrc_applied[:] = [0.1 * math.sin(2 * i + 1) for i in range(m.nv)]
        d.xfrc_applied[1:, :] = [[0.05 * (b + k) for k in range(6)] for b in range(1, m.nbody)]
        if m.neq > 0:
            d.eq_active[0] = 0
        if m.nmocap > 0:
            d.mocap_pos[0] += [0.01, -0.02, 0.03]
        for _ in range(STEPS):
            mujoco.mj_step(m, d)
        sizes = {k[len("mjSTATE_"):]: mujoco.mj_stateSize(m, int(v))
                 for k, v in mujoco.mjtState.__members__.items() if k != "mjNSTATE"}
        sig = int(mujoco.mjtState.mjSTATE_INTEGRATION)
        x = [0.0] * mujoco.mj_stateSize(m, sig)
        import numpy as np
        x = np.zeros(mujoco.mj_stateSize(m, sig))
        mujoco.mj_getState(m, d, x, sig)
        out["models"].append({
            "model": name,
            "sizes": sizes,
            "steps": STEPS,
            "integration": x.tolist(),
        })
    path = os.path.join(ROOT, "tests", "golden", "state", "state.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
