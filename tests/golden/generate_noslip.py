#!/usr/bin/env python3
"""Generate golden noslip data for diffmj from MuJoCo 4.0.

Usage:  python3 tests/golden/generate_noslip.py

For every tests/golden/constraints/<name>.json (the disable variants dsbl_* excepted) this
writes tests/golden/noslip/<name>.json: at each recorded state of that file (its "input"), the
model of the file under the file's own option overrides (cone, Newton, iterations,
ls_iterations, everything else as in the XML) with

  tolerance = 0           the main Newton solve runs to its exact minimum (MuJoCo's own
                          tolerance-1e-12 answer can stop short on elliptic cones, and noslip,
                          which drops the regularizer, amplifies such differences),
  noslip_iterations = 200, noslip_tolerance = 1e-12,

mj_forward is called and recorded: qacc, qfrc_constraint, efc_force, nisland and solver_niter
per island (main iterations plus noslip sweeps). Noslip runs per island in MuJoCo 4.0, each
island stopping on its own improvement, scaled by 1/trace(M) of its dofs.
"""
import json
import os
import sys

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from generate_contacts import flat  # noqa: E402

NOSLIP_ITERATIONS = 200
NOSLIP_TOLERANCE = 1e-12


def set_input(m, d, inp):
    d.time = inp["time"]
    for k in ["qpos", "qvel", "act", "ctrl", "qacc_warmstart", "qfrc_applied", "eq_active"]:
        if len(inp[k]):
            getattr(d, k)[:] = inp[k]
    d.xfrc_applied[:] = np.array(inp["xfrc_applied"]).reshape(-1, 6)
    if m.nmocap:
        d.mocap_pos[:] = np.array(inp["mocap_pos"]).reshape(-1, 3)
        d.mocap_quat[:] = np.array(inp["mocap_quat"]).reshape(-1, 4)


def main():
    src = os.path.join(HERE, "constraints")
    dst = os.path.join(HERE, "noslip")
    os.makedirs(dst, exist_ok=True)
    for fn in sorted(os.listdir(src)):
        if not fn.endswith(".json") or fn.startswith("dsbl_"):
            continue
        g = json.load(open(os.path.join(src, fn)))
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, g["xml"]))
        o = g["option"]
        m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
        m.opt.cone = o["cone"]
        m.opt.iterations = o["iterations"]
        m.opt.ls_iterations = o["ls_iterations"]
        m.opt.tolerance = 0
        m.opt.noslip_iterations = NOSLIP_ITERATIONS
        m.opt.noslip_tolerance = NOSLIP_TOLERANCE
        states = []
        for st in g["states"]:
            d = mujoco.MjData(m)
            set_input(m, d, st["input"])
            mujoco.mj_forward(m, d)
            nis = max(1, int(d.nisland))
            states.append({
                "step": st["step"],
                "qacc": flat(d.qacc),
                "qfrc_constraint": flat(d.qfrc_constraint),
                "efc_force": flat(d.efc_force[:d.nefc]),
                "nisland": int(d.nisland),
                "solver_niter": [int(x) for x in d.solver_niter[:nis]],
            })
        out = {
            "source": "constraints/" + fn,
            "mujoco_version": mujoco.__version__,
            "tolerance": 0.0,
            "noslip_iterations": NOSLIP_ITERATIONS,
            "noslip_tolerance": NOSLIP_TOLERANCE,
            "states": states,
        }
        with open(os.path.join(dst, fn), "w") as f:
            json.dump(out, f, separators=(",", ":"))
        print(fn, len(states), "states")


if __name__ == "__main__":
    main()
