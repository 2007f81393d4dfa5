#!/usr/bin/env python3
"""Side-by-side speed of diffmj and MuJoCo on the same models and states, in one run.

For each model: the state is the first keyframe (or qpos0) with a fixed velocity pattern, written
to a JSON file that `diffmj bench` reads and a binary file that `bench/mjbench.c` reads. That C
program, compiled here against the libmujoco of the installed `mujoco` wheel, times MuJoCo's own
mj_forward and mj_step from the same state in the same way as `diffmj bench` (median over batches
of 10 calls, restart every 1000 steps like testspeed), so no Python overhead is measured. Prints
one line per model and the ratios diffmj / MuJoCo (below 1.0 means diffmj is faster).
Both engines compute the full dynamics with constraints and contacts (each model's own solver
options); --smooth disables constraints in both (the smooth-dynamics comparison of earlier
sessions).

Each pair of measurements is repeated (--repeat, default 5) alternating the engines; the ratios
are medians of the per-round ratios.

With --stages, each forward stage's time is printed too: diffmj's from `diffmj bench` (each stage
repeated alone), MuJoCo's from its own stage timers.

With --interleaved, both engines run in one process instead (bench/interleaved, a small Rust
program linked against the wheel's libmujoco): each round times a batch of --batch calls of each
engine back to back, so a slow phase of the machine hits both alike, and the ratios are medians
of the per-round ratios over --rounds rounds. This is the steadier measurement on a noisy
machine; the state and the restart every 1000 steps are as above. It also times diffmj's
inverse against mj_inverse (each at its own forward's acceleration) and prints both engines'
forward/inverse time ratio.

Usage: python3 bench/compare.py [--steps N] [--repeat R] [--stages] [--interleaved [--rounds K]
       [--batch B]] [models...]   (builds diffmj in release mode first)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ["pendulum", "hinge_chain", "ball_chain", "humanoid_like", "actuators",
           "thirdparty/dm_control/humanoid", "thirdparty/gymnasium/ant",
           "constraints/humanoid", "constraints/drops", "constraints/stacks", "constraints/equality",
           "constraints/mixed", "thirdparty/gymnasium/humanoid", "thirdparty/dm_control/walker"]


JACOBIAN_MODELS = ["cartpole", "thirdparty/dm_control/cheetah", "thirdparty/gymnasium/ant",
                   "thirdparty/dm_control/humanoid", "thirdparty/dm_control/humanoid_CMU",
                   "constraints/stacks"]


def euler_copy(path):
    """The model at `path` with the Euler integrator, written beside it (so that includes and
    asset paths resolve) when it uses RK4; returns the path to load and whether it is a copy."""
    if mujoco.MjModel.from_xml_path(path).opt.integrator != mujoco.mjtIntegrator.mjINT_RK4:
        return path, False
    with open(path) as f:
        text = f.read()
    text = text.replace('integrator="RK4"', 'integrator="Euler"')
    out = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".euler.xml")
    with open(out, "w") as f:
        f.write(text)
    if mujoco.MjModel.from_xml_path(out).opt.integrator != mujoco.mjtIntegrator.mjINT_EULER:
        os.unlink(out)
        raise SystemExit(f"{path}: could not switch its RK4 integrator to Euler")
    return out, True


def state_for(m, settle):
    """Keyframe 0 (or qpos0) with a fixed velocity pattern, then `settle` MuJoCo steps so that
    contacts and limits are established."""
    d = mujoco.MjData(m)
    if m.nkey > 0:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qvel[:] = [0.5 * math.sin(i) for i in range(m.nv)]
    for _ in range(settle):
        mujoco.mj_step(m, d)
    return d


def build_mjbench():
    pkg = os.path.dirname(mujoco.__file__)
    lib = [f for f in os.listdir(pkg) if f.startswith("libmujoco.so")][0]
    exe = os.path.join(tempfile.gettempdir(), "diffmj_mjbench")
    subprocess.run(["gcc", "-O2", os.path.join(ROOT, "bench", "mjbench.c"), "-I", os.path.join(pkg, "include"),
                    os.path.join(pkg, lib), "-Wl,-rpath," + pkg, "-o", exe], check=True)
    return exe


def build_interleaved():
    """bench/interleaved against the wheel's libmujoco, in the main target directory."""
    pkg = os.path.dirname(mujoco.__file__)
    env = dict(os.environ, MUJOCO_LIB_DIR=pkg)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                    os.path.join(ROOT, "bench", "interleaved", "Cargo.toml"), "--target-dir",
                    os.path.join(ROOT, "target")], cwd=ROOT, env=env, check=True)
    return os.path.join(ROOT, "target", "release", "diffmj-interleaved")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5,
                    help="alternate the two engines this many times; report medians")
    ap.add_argument("--settle", type=int, default=300,
                    help="MuJoCo steps from the initial state before timing (contacts form)")
    ap.add_argument("--smooth", action="store_true",
                    help="disable constraints in both engines (smooth dynamics only)")
    ap.add_argument("--stages", action="store_true",
                    help="also print each forward stage's time in both engines (medians of the "
                         "rounds; MuJoCo's from its own timers, so slightly inflated)")
    ap.add_argument("--interleaved", action="store_true",
                    help="time both engines in one process, batch against batch (steadier)")
    ap.add_argument("--rounds", type=int, default=1000, help="rounds of --interleaved")
    ap.add_argument("--batch", type=int, default=20, help="calls per batch of --interleaved")
    ap.add_argument("--jacobians", action="store_true",
                    help="with --interleaved: time the transition Jacobians instead (diffmj's "
                         "finite differences and exact Jacobians against mjd_transitionFD, the "
                         "exact inverse Jacobians against mjd_inverseFD); RK4 models run with "
                         "Euler, which mjd_transitionFD needs")
    ap.add_argument("models", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    if a.jacobians:
        a.interleaved = True
        if a.models == DEFAULT:
            a.models = JACOBIAN_MODELS
        if a.rounds == 1000:
            a.rounds = 30
        if a.batch == 20:
            a.batch = 2
    if a.interleaved and (a.smooth or a.stages):
        ap.error("--interleaved times the full dynamics, without stages")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "diffmj"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "diffmj")
    mjexe = build_mjbench()
    inter = build_interleaved() if a.interleaved else None
    print(f"{'model':36} {'nv':>4} {'ncon':>4} {'nefc':>4} {'fwd us':>9} {'mj fwd':>9} {'ratio':>6} {'step us':>9} {'mj step':>9} {'ratio':>6}")
    if a.jacobians:
        print(f"{'model':36} {'nv':>3} {'nu':>3} {'nefc':>4} | {'FD us':>8} {'mj FD':>8} {'ratio':>5} | "
              f"{'FDc us':>8} {'mj FDc':>8} {'ratio':>5} | {'exact us':>8} {'/mjFD':>5} {'/mjFDc':>6} | "
              f"{'steps: exact':>12} {'mjFD':>5} | {'inv exact':>9} {'mj invFD':>8} {'ratio':>5}")
    for name in a.models:
        path = os.path.join(ROOT, "models", name + ".xml")
        copy = False
        if a.jacobians:
            path, copy = euler_copy(path)
        m = mujoco.MjModel.from_xml_path(path)
        d0 = state_for(m, 0 if a.smooth else a.settle)
        mujoco.mj_forward(m, d0)
        st = {"qpos": d0.qpos.tolist(), "qvel": d0.qvel.tolist(), "act": d0.act.tolist(), "ctrl": d0.ctrl.tolist()}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(st, f)
        with tempfile.NamedTemporaryFile("wb", suffix=".bin", delete=False) as fb:
            fb.write(np.concatenate([d0.qpos, d0.qvel, d0.act, d0.ctrl]).astype(np.float64).tobytes())
        if inter:
            out = subprocess.run([inter, path, f.name, str(a.rounds), str(a.batch)]
                                 + (["jacobians"] if a.jacobians else []),
                                 capture_output=True, text=True)
            os.unlink(f.name)
            os.unlink(fb.name)
            if copy:
                os.unlink(path)
            if out.returncode != 0:
                print(f"{name:36} failed: {out.stderr.strip()}")
                continue
            r = json.loads(out.stdout)
            if a.jacobians:
                sp, fd, fc, ad = r["step"], r["jac_fd"], r["jac_fd_centered"], r["jac_ad"]
                ac, iv = r["jac_ad_vs_centered"], r["jac_inverse"]
                print(f"{name:36} {m.nv:3d} {m.nu:3d} {d0.nefc:4d} | {fd['ours_us']:8.1f} {fd['mujoco_us']:8.1f} "
                      f"{fd['ratio']:5.2f} | {fc['ours_us']:8.1f} {fc['mujoco_us']:8.1f} {fc['ratio']:5.2f} | "
                      f"{ad['ours_us']:8.1f} {ad['ratio']:5.2f} {ac['ratio']:6.2f} | "
                      f"{ad['ours_us'] / sp['ours_us']:12.1f} {fd['mujoco_us'] / sp['mujoco_us']:5.1f} | "
                      f"{iv['ours_us']:9.1f} {iv['mujoco_us']:8.1f} {iv['ratio']:5.2f}")
                continue
            fw, sp, iv = r["forward"], r["step"], r["inverse"]
            print(f"{name:36} {m.nv:4d} {d0.ncon:4d} {d0.nefc:4d} {fw['ours_us']:9.2f} {fw['mujoco_us']:9.2f} "
                  f"{fw['ratio']:6.2f} {sp['ours_us']:9.2f} {sp['mujoco_us']:9.2f} {sp['ratio']:6.2f}")
            # the inverse at each engine's forward acceleration, against mj_inverse, and each
            # engine's forward / inverse time (how much cheaper the inverse is)
            print(f"{'':36} inverse us {iv['ours_us']:.2f}, mj_inverse {iv['mujoco_us']:.2f}, ratio "
                  f"{iv['ratio']:.2f}; forward/inverse: diffmj {fw['ours_us'] / iv['ours_us']:.2f}, "
                  f"MuJoCo {fw['mujoco_us'] / iv['mujoco_us']:.2f}")
            continue
        ours_f, ours_s, mj_f, mj_s = [], [], [], []
        ours_st, mj_st = [], []
        failed = None
        # alternate the engines so slow phases of a noisy machine hit both alike
        for _ in range(a.repeat):
            extra = ["--option", "disable=constraint"] if a.smooth else []
            out = subprocess.run([exe, "bench", path, "--state", f.name, "--steps", str(a.steps)] + extra,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                failed = out.stderr.strip()
                break
            ours = json.loads(out.stdout)
            ours_f.append(ours["forward_us"])
            ours_s.append(ours["step_us"])
            ours_st.append(ours["stages_us"])
            # last argument: 1 disables MuJoCo's constraints (with --smooth)
            mj = subprocess.run([mjexe, path, fb.name, str(a.steps), "1" if a.smooth else "0"],
                                capture_output=True, text=True, check=True)
            mjt = json.loads(mj.stdout)
            mj_f.append(mjt["forward_us"])
            mj_s.append(mjt["step_us"])
            mj_st.append(mjt["stages_us"])
        os.unlink(f.name)
        os.unlink(fb.name)
        if failed:
            print(f"{name:36} diffmj failed: {failed}")
            continue
        of, os_, mf, ms = (float(np.median(x)) for x in (ours_f, ours_s, mj_f, mj_s))
        rf = float(np.median(np.array(ours_f) / np.array(mj_f)))
        rs = float(np.median(np.array(ours_s) / np.array(mj_s)))
        print(f"{name:36} {m.nv:4d} {d0.ncon:4d} {d0.nefc:4d} {of:9.2f} {mf:9.2f} {rf:6.2f} {os_:9.2f} {ms:9.2f} {rs:6.2f}")
        if a.stages:
            parts = []
            for k in mj_st[0]:
                o = float(np.median([x[k] for x in ours_st]))
                j = float(np.median([x[k] for x in mj_st]))
                parts.append(f"{k} {o:.2f}/{j:.2f}")
            print("    stages us (diffmj/MuJoCo): " + ", ".join(parts))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
