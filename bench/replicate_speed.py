#!/usr/bin/env python3
"""Speed of models written with <replicate> or <attach> against the same models written out by hand.

For each model, MuJoCo 4.0 compiles it and writes it back with every replicate and attachment
expanded (`mj_saveLastXML`): the hand-written equivalent. `diffmj bench` then times `forward` and `step`
of both from the same initial state, alternating the two files for --rounds rounds, and the
script prints the median ratio replicated / expanded per model (1.0: the same speed) and one
line of key figures at the end. Both files describe the same compiled model, so a ratio away
from 1 would mean the way a model is written changes how diffmj simulates it.

Usage: python3 bench/replicate_speed.py [--rounds R] [--steps N] [models...]
       (builds diffmj in release mode first; default: the replicate and attach models of the
       repository that MuJoCo can write back)
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = sorted(glob.glob(os.path.join(ROOT, "models", "thirdparty", "mujoco", "replicate", "*.xml"))
                 + glob.glob(os.path.join(ROOT, "models", "mjcf29", "replicate_*.xml"))
                 + glob.glob(os.path.join(ROOT, "models", "thirdparty", "mujoco", "attach", "*.xml"))
                 + glob.glob(os.path.join(ROOT, "models", "mjcf29", "attach_*.xml")))


def bench(exe, path, steps):
    """`diffmj bench` of one file: (forward µs, step µs)."""
    out = subprocess.run([exe, "bench", path, "--steps", str(steps), "--no-jacobians"],
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    return r["forward_us"], r["step_us"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=500)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "diffmj"], cwd=ROOT, check=True)
    exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release",
                       "diffmj")
    fwd_ratios, step_ratios = [], []
    print(f"{'model':40s} {'nv':>4s} {'fwd us':>8s} {'expanded':>8s} {'ratio':>6s} {'step us':>8s} {'expanded':>8s} {'ratio':>6s}")
    for path in a.models:
        m = mujoco.MjModel.from_xml_path(path)
        # the expanded file beside the model, so that its asset paths resolve alike
        fd, flat = tempfile.mkstemp(suffix=".xml", prefix=".expanded_", dir=os.path.dirname(path))
        os.close(fd)
        try:
            mujoco.mj_saveLastXML(flat, m)
            times = {path: [], flat: []}
            for r in range(a.rounds):
                order = (path, flat) if r % 2 == 0 else (flat, path)
                for p in order:
                    times[p].append(bench(exe, p, a.steps))
            fr = statistics.median(x[0] / y[0] for x, y in zip(times[path], times[flat]))
            sr = statistics.median(x[1] / y[1] for x, y in zip(times[path], times[flat]))
        finally:
            os.unlink(flat)
        med = lambda p, k: statistics.median(t[k] for t in times[p])
        fwd_ratios.append(fr)
        step_ratios.append(sr)
        name = os.path.relpath(path, os.path.join(ROOT, "models"))
        print(f"{name:40s} {m.nv:4d} {med(path, 0):8.2f} {med(flat, 0):8.2f} {fr:6.3f} "
              f"{med(path, 1):8.2f} {med(flat, 1):8.2f} {sr:6.3f}")
    print(f"replicated / expanded over {len(a.models)} models: forward median "
          f"{statistics.median(fwd_ratios):.3f} (range {min(fwd_ratios):.3f}-{max(fwd_ratios):.3f}), "
          f"step median {statistics.median(step_ratios):.3f} "
          f"(range {min(step_ratios):.3f}-{max(step_ratios):.3f})")


if __name__ == "__main__":
    sys.exit(main())
