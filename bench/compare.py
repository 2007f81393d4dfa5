#!/usr/bin/env python3
"""Side-by-side speed of diffmj and MuJoCo on the same models and states, in one run.

For each model: the state is the first keyframe (or qpos0) with a fixed velocity pattern, written
to a JSON file that `diffmj bench` reads; MuJoCo's mj_forward and mj_step are timed from the same
state in the same way (median over batches, restart every 1000 steps like testspeed). Prints one
line per model and the ratios diffmj / MuJoCo (below 1.0 means diffmj is faster).

Usage: python3 bench/compare.py [--steps N] [models...]   (builds diffmj in release mode first)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["pendulum", "hinge_chain", "ball_chain", "humanoid_like", "actuators",
           "thirdparty/dm_control/humanoid", "thirdparty/gymnasium/ant"]


def state_for(m):
    d = mujoco.MjData(m)
    if m.nkey > 0:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qvel[:] = [0.5 * math.sin(i) for i in range(m.nv)]
    return d


def median_us(fn, n, batch=10):
    v = []
    for _ in range(max(1, n // batch)):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        v.append((time.perf_counter() - t) * 1e6 / batch)
    v.sort()
    return v[len(v) // 2]


def mujoco_times(m, d0, n):
    d = mujoco.MjData(m)
    mujoco.mj_copyData(d, m, d0)
    fwd = median_us(lambda: mujoco.mj_forward(m, d), n)
    d = mujoco.MjData(m)
    mujoco.mj_copyData(d, m, d0)
    k = [0]

    def st():
        if k[0] % 1000 == 0:
            mujoco.mj_copyData(d, m, d0)
        k[0] += 1
        mujoco.mj_step(m, d)
    return fwd, median_us(st, n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("models", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "diffmj"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "diffmj")
    print(f"{'model':36} {'nv':>4} {'fwd us':>9} {'mj fwd':>9} {'ratio':>6} {'step us':>9} {'mj step':>9} {'ratio':>6}")
    for name in a.models:
        path = os.path.join(ROOT, "models", name + ".xml")
        m = mujoco.MjModel.from_xml_path(path)
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT  # smooth dynamics only, for now
        d0 = state_for(m)
        st = {"qpos": d0.qpos.tolist(), "qvel": d0.qvel.tolist(), "act": d0.act.tolist(), "ctrl": d0.ctrl.tolist()}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(st, f)
        out = subprocess.run([exe, "bench", path, "--state", f.name, "--steps", str(a.steps)],
                             capture_output=True, text=True)
        os.unlink(f.name)
        if out.returncode != 0:
            print(f"{name:36} diffmj failed: {out.stderr.strip()}")
            continue
        ours = json.loads(out.stdout)
        mf, ms = mujoco_times(m, d0, a.steps)
        print(f"{name:36} {m.nv:4d} {ours['forward_us']:9.2f} {mf:9.2f} {ours['forward_us']/mf:6.2f} "
              f"{ours['step_us']:9.2f} {ms:9.2f} {ours['step_us']/ms:6.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
