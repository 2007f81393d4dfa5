#!/usr/bin/env python3
"""Golden data for Newton's stopping rules in MuJoCo 4.0 (tests/suite/constraints.rs,
`newton_iterations_as_mujoco`): states of MuJoCo's own trajectories, warm start included, with
the iteration count of every island and the solution.

MuJoCo 4.0 stops Newton before its first iteration in two ways: when the start's scaled
gradient and ½ gᵀM⁻¹g are below the tolerance (the certificate), and, after the first
factorization, when the scaled gradient and the Newton decrement ½ gᵀH⁻¹g are. The models here
(their own solver settings) reach both often.

Usage:  python3 tests/golden/generate_newton_exits.py
Writes tests/golden/solver/newton_exits.json: {mujoco_version, models: [{model, states:
[{step, time, qpos, qvel, act, ctrl, qacc_warmstart, nisland, solver_niter, qacc}]}]}, floats
written exactly (repr).
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["models/sensors/contact.xml", "models/constraints/drops.xml", "models/constraints/stacks.xml"]
STEPS = 3000
EVERY = 20


def main():
    out = {"mujoco_version": mujoco.__version__, "models": []}
    for path in MODELS:
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, path))
        d = mujoco.MjData(m)
        states = []
        for step in range(1, STEPS + 1):
            if step % EVERY == 0:
                rec = {"step": step, "time": d.time}
                for k in ["qpos", "qvel", "act", "ctrl", "qacc_warmstart"]:
                    rec[k] = getattr(d, k).tolist()
                probe = mujoco.MjData(m)
                mujoco.mj_copyData(probe, m, d)
                mujoco.mj_forward(m, probe)
                rec["nisland"] = int(probe.nisland)
                rec["solver_niter"] = probe.solver_niter[:max(probe.nisland, 1)].tolist()
                rec["qacc"] = probe.qacc.tolist()
                states.append(rec)
            mujoco.mj_step(m, d)
        zero = sum(1 for s in states if s["nisland"] > 0 and 0 in s["solver_niter"])
        print(f"{path}: {len(states)} states, {zero} with an island solved in 0 iterations")
        out["models"].append({"model": path, "states": states})
    dst = os.path.join(ROOT, "tests", "golden", "solver", "newton_exits.json")
    with open(dst, "w") as f:
        json.dump(out, f)
    print("wrote", dst)


if __name__ == "__main__":
    main()
