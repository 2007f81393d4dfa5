#!/usr/bin/env python3
"""Golden data for constraint islands of tendon rows in sparse models (MuJoCo 4.0): MuJoCo's
published models/thirdparty/mujoco/replicate/tendon.xml (nv 222, so sparse Jacobians; 18
limited spatial tendons, each wrapping a free bulb between two sites) stepped from its default
state, where MuJoCo joins every tendon row's structural trees (the bulb's included when the
wrap is inactive) into one island and its PGS solves them together.

Usage:  python3 tests/golden/generate_islands.py

Writes tests/golden/islands/tendon_replicate.json: {mujoco_version, model, steps, first, qpos,
qvel (after each step from `first` on), nisland (every step's constraint stage)}.
"""
import json
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "models/thirdparty/mujoco/replicate/tendon.xml"
STEPS = 45
# the state is recorded from this step on (the tendons come taut around step 37)
FIRST = 35


def main():
    m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, MODEL))
    d = mujoco.MjData(m)
    qpos, qvel, nisland = [], [], []
    for k in range(STEPS):
        mujoco.mj_step(m, d)
        if k >= FIRST:
            qpos.append(d.qpos.tolist())
            qvel.append(d.qvel.tolist())
        nisland.append(int(d.nisland))
    out = {"mujoco_version": mujoco.__version__, "model": MODEL, "steps": STEPS,
           "first": FIRST, "qpos": qpos, "qvel": qvel, "nisland": nisland}
    path = os.path.join(ROOT, "tests", "golden", "islands", "tendon_replicate.json")
    with open(path, "w") as f:
        json.dump(out, f)
        f.write("\n")
    print("wrote", path, "nisland", sorted(set(nisland)))


if __name__ == "__main__":
    main()
