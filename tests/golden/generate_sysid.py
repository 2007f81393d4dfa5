#!/usr/bin/env python3
"""Generate the system-identification golden data for diffmj with MuJoCo 4.0.

Usage:  python3 tests/golden/generate_sysid.py

For every scene of SCENES (models in models/sysid/) this steps MuJoCo (mj_step) from a chosen
initial state under chosen controls and writes tests/golden/sysid/<scene>.csv in the format
diffmj's identification module reads (diffmj::identification::Trajectory): the columns of
`diffmj rollout` (time, qpos0.., qvel0.., act0..) followed by ctrl0.. and sensor0..
(the flat sensordata). Row k holds the state at step k, the control applied from step k to
step k+1, and the sensordata mj_step computed at that state (before its integration, as
mj_step leaves it); the last row's control is zero and its sensors come from mj_forward.
Values are written with 17 significant digits (round trip). The data is noise-free: the
true parameters are the ones in the XML files. Deterministic (no randomness).
"""

import math
import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(REPO, "models", "sysid")
OUT = os.path.join(HERE, "sysid")


def zero(t, nu):
    return np.zeros(nu)


def push_ctrl(t, nu):
    # push the box along +x, with a sideways sweep so the pair's tangential force changes
    return np.array([3.0 + 0.8 * math.sin(6 * t), 1.0 * math.sin(4 * t)])


def spring_ctrl(t, nu):
    return np.array([3.0 * math.sin(5 * t) + 1.5 * math.sin(13 * t)])


def arm_ctrl(t, nu):
    return np.array([0.8 * math.sin((2 + i) * t + 0.7 * i) for i in range(nu)])


# scene: (model file, steps, qpos overrides {index: value} or None, qvel, control function)
SCENES = [
    ("box", "box.xml", 600, None, [1.5, 0.4, 0.0, 2.0, -3.0, 6.0], zero),
    ("ball", "ball.xml", 500, None, [0.8, 0.0, 0.0, 0.0, 0.0, 0.0], zero),
    ("pendulum", "pendulum.xml", 600, {0: 1.3}, [0.0], zero),
    ("push", "push.xml", 500, None, None, push_ctrl),
    ("spring_mass", "spring_mass.xml", 500, {0: 0.1}, [0.0], spring_ctrl),
    ("arm5", "arm5.xml", 500, None, None, arm_ctrl),
]


def fmt(x):
    return repr(float(x))


def generate(name, xml, steps, qpos, qvel, ctrl):
    m = mujoco.MjModel.from_xml_path(os.path.join(MODELS, xml))
    d = mujoco.MjData(m)
    if qpos:
        for i, v in qpos.items():
            d.qpos[i] = v
    if qvel is not None:
        d.qvel[:] = qvel
    header = (["time"] + [f"qpos{i}" for i in range(m.nq)] + [f"qvel{i}" for i in range(m.nv)]
              + [f"act{i}" for i in range(m.na)] + [f"ctrl{i}" for i in range(m.nu)]
              + [f"sensor{i}" for i in range(m.nsensordata)])
    rows = []
    for k in range(steps + 1):
        state = [d.time, *d.qpos, *d.qvel, *d.act]
        if k < steps:
            d.ctrl[:] = ctrl(d.time, m.nu)
            mujoco.mj_step(m, d)
            u = list(d.ctrl) if m.nu else []
        else:
            d.ctrl[:] = 0
            mujoco.mj_forward(m, d)
            u = [0.0] * m.nu
        sens = list(d.sensordata)
        rows.append(state + u + sens)
        for w in range(len(d.warning)):
            if d.warning[w].number:
                raise SystemExit(f"{name}: MuJoCo warning {w}")
    with open(os.path.join(OUT, name + ".csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(fmt(x) for x in r) + "\n")
    return m, rows


def main():
    os.makedirs(OUT, exist_ok=True)
    for scene in SCENES:
        m, rows = generate(*scene)
        print(f"{scene[0]}: {len(rows)} rows, nq {m.nq} nv {m.nv} nu {m.nu} "
              f"nsensordata {m.nsensordata}")


if __name__ == "__main__":
    main()
