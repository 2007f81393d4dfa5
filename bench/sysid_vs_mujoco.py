#!/usr/bin/env python3
"""diffmj's system identification against MuJoCo 4.0's mujoco.sysid, side by side.

Usage:  python3 bench/sysid_vs_mujoco.py [--diffmj PATH] [scene ...]

Needs `pip install "mujoco[sysid]==4.0.0"` and a release build of the command line
(`cargo build --release -p diffmj-cli`; the binary is looked for in $CARGO_TARGET_DIR/release,
then target/release, or given by --diffmj).

For every scene of SCENES (models/sysid/*.xml, data tests/golden/sysid/*.csv written by
MuJoCo with tests/golden/generate_sysid.py, noise-free), both tools start from the same
values with the same bounds and fit the same parameters:

- mujoco.sysid as its documentation and tests use it: a ModelSequences of the recorded
  initial state, controls and all sensors, build_residual_fn (the sensor error of a whole
  rollout), optimize(optimizer="mujoco") (mujoco.minimize's bounded LM, finite-difference
  Jacobians that recompile the model per column), calculate_intervals at the result;
- diffmj sysid (the command line, so process start, model load and CSV parsing are in its
  time) with the equation error through inverse dynamics (`--method inverse`) and with the
  residual mujoco.sysid fits, the sensor error of the whole rollout (`--method shooting
  --target sensors --segment-steps <all>`).

Printed per scene and tool: worst relative error of the estimates against the true values
(those of the XML), wall time (mujoco.sysid: its optimize() call; diffmj: the whole process,
with the fit's own time in the note), iterations, and the reported 95% half-width of the
worst parameter. The data is noise-free, so a reported interval should be tiny and hold
the truth only when the estimate does, except in the scenes of NOISY (noise on every
position, velocity and sensor column), where diffmj also fits by multiple shooting on the
states from estimated segment starts (`--estimate-starts`).
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import mujoco

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))


def geom_field(name, field, index):
    def modify(spec, p):
        arr = getattr(spec.geom(name), field)
        arr[index] = p.value[0]
    return modify


def pair_field(name, field, index):
    def modify(spec, p):
        pair = next(x for x in spec.pairs if x.name == name)
        arr = getattr(pair, field)
        arr[index] = p.value[0]
    return modify


def joint_scalar(name, field):
    def modify(spec, p):
        j = spec.joint(name)
        v = getattr(j, field)
        if np.ndim(v):  # MuJoCo 4.0 keeps damping and frictionloss per dof axis: a hinge's is [0]
            v[0] = p.value[0]
        else:
            setattr(j, field, p.value[0])
    return modify


def geom_scalar(name, field):
    def modify(spec, p):
        setattr(spec.geom(name), field, p.value[0])
    return modify


# scene: list of (diffmj parameter text, mujoco.sysid modifier, true, start, lo, hi, log)
SCENES = {
    "box": [
        ("geom floor friction[0]", geom_field("floor", "friction", 0), 0.6, 0.3, 0.01, 3.0, True),
        ("geom floor solref[0]", geom_field("floor", "solref", 0), 0.02, 0.03, 0.003, 0.5, True),
        ("geom floor solref[1]", geom_field("floor", "solref", 1), 0.9, 0.5, 0.1, 5.0, True),
        ("geom floor solimp[2]", geom_field("floor", "solimp", 2), 0.002, 0.004, 1e-4, 0.05, True),
    ],
    "ball": [
        ("geom floor solref[0]", geom_field("floor", "solref", 0), -4000.0, -2000.0, -1e5, -10.0, False),
        ("geom floor solref[1]", geom_field("floor", "solref", 1), -8.0, -3.0, -100.0, -0.1, False),
    ],
    "pendulum": [
        ("joint hinge frictionloss", joint_scalar("hinge", "frictionloss"), 0.08, 0.0, 0.0, 5.0, False),
        ("joint hinge damping", joint_scalar("hinge", "damping"), 0.03, 0.01, 0.0, 5.0, False),
    ],
    "push": [
        ("pair push friction[0]", pair_field("push", "friction", 0), 0.7, 0.4, 0.01, 3.0, True),
        ("pair push solref[0]", pair_field("push", "solref", 0), 0.01, 0.02, 0.003, 0.5, True),
    ],
    # the geom carries the mass (inertia inferred from it); on a slide joint only the mass acts
    "spring_mass": [
        ("body mass mass", geom_scalar("mass", "mass"), 1.3, 3.0, 0.01, 100.0, False),
    ],
    # arm5 and the spring-mass in mujoco.sysid's own parametrization (linear: it has no log
    # scaling), where the inverse residual is linear in the parameters
    "arm5": [
        (f"joint j{i} {f}", joint_scalar(f"j{i}", f), t, s, 1e-4, 10.0, False)
        for i, (a, d) in enumerate(zip([0.05, 0.02, 0.08, 0.03, 0.01], [0.6, 0.4, 0.3, 0.2, 0.1]))
        for (f, t, s) in [("armature", a, 2 * a), ("damping", d, 0.5 * d)]
    ],
    # the same from a start 10% off, where a whole-rollout fit has a chance
    "arm5_near": [
        (f"joint j{i} {f}", joint_scalar(f"j{i}", f), t, s, 1e-4, 10.0, False)
        for i, (a, d) in enumerate(zip([0.05, 0.02, 0.08, 0.03, 0.01], [0.6, 0.4, 0.3, 0.2, 0.1]))
        for (f, t, s) in [("armature", a, 1.1 * a), ("damping", d, 0.9 * d)]
    ],
}

# scenes that reuse another's model and data
DATA = {"arm5_near": "arm5", "pendulum_noisy": "pendulum"}

# scenes whose data is the golden data with Gaussian noise of this standard deviation on every
# position, velocity and sensor column (fixed seed), written to a temporary CSV both tools read
NOISY = {"pendulum_noisy": 1e-3}
SCENES["pendulum_noisy"] = SCENES["pendulum"]


def data_path(scene):
    """The CSV of a scene: the golden file, or for a noisy scene a noisy copy of it."""
    base = os.path.join(REPO, "tests", "golden", "sysid", DATA.get(scene, scene) + ".csv")
    if scene not in NOISY:
        return base
    with open(base) as f:
        header = f.readline().strip().split(",")
    a = np.loadtxt(base, delimiter=",", skiprows=1, ndmin=2)
    rng = np.random.default_rng(2024)
    for i, n in enumerate(header):
        if any(n.startswith(p) and n[len(p):].isdigit() for p in ("qpos", "qvel", "sensor")):
            a[:, i] += NOISY[scene] * rng.standard_normal(a.shape[0])
    out = os.path.join("/tmp", f"diffmj_sysid_{scene}.csv")
    np.savetxt(out, a, delimiter=",", header=",".join(header), comments="", fmt="%.17g")
    return out


def load_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
    a = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    cols = {n: a[:, i] for i, n in enumerate(header)}
    pick = lambda p: np.column_stack([cols[n] for n in header if n.startswith(p) and n[len(p):].isdigit()]) \
        if any(n.startswith(p) and n[len(p):].isdigit() for n in header) else np.zeros((a.shape[0], 0))
    return cols["time"], pick("qpos"), pick("qvel"), pick("act"), pick("ctrl"), pick("sensor")


def run_mujoco(scene, params_def):
    data = data_path(scene)
    scene = DATA.get(scene, scene)
    from mujoco import sysid
    from mujoco.sysid._src import optimize as sysid_optimize
    spec = mujoco.MjSpec.from_file(os.path.join(REPO, "models", "sysid", scene + ".xml"))
    model = spec.compile()
    t, qpos, qvel, act, ctrl, sensor = load_csv(data)
    x0 = sysid.create_initial_state(model, qpos[0], qvel[0], act[0] if act.shape[1] else None)
    # mujoco.rollout's convention, which mujoco.sysid follows: the sensors of step k are
    # stamped with the time after it; the control of step k with the time before it
    # The control times are exact multiples of the timestep, as in mujoco.sysid's own tests:
    # TimeSeries.resample(target_dt=h) makes ceil((t_N - t_0)/h) + 1 samples, so a last time
    # stamp that accumulated rounding above N h (MuJoCo's d.time: 1.0000000000000007 after
    # 500 steps of 0.002) gets an extra sample and every control is interpolated off its step
    # (|r| at the truth 1.2e-3 on the spring-mass instead of 0).
    tc = np.arange(len(t)) * model.opt.timestep
    control_ts = sysid.TimeSeries(tc, ctrl if ctrl.shape[1] else np.zeros((len(t), 0)))
    sensor_ts = sysid.TimeSeries.from_names(t[1:], sensor[:-1], model)
    params = sysid.ParameterDict()
    for text, modifier, true, start, lo, hi, log in params_def:
        name = text.replace(" ", "_").replace("[", "").replace("]", "")
        params.add(sysid.Parameter(name, nominal=true, min_value=lo, max_value=hi, modifier=modifier))
        params[name].value[:] = start
    ms = sysid.ModelSequences(scene, spec, "golden", x0, control_ts, sensor_ts)
    residual_fn = sysid.build_residual_fn(models_sequences=[ms])
    t0 = time.perf_counter()
    opt_params, result = sysid.optimize(initial_params=params, residual_fn=residual_fn,
                                        optimizer="mujoco", verbose=False)
    x = opt_params.as_vector().copy()
    wall = time.perf_counter() - t0
    r = np.concatenate(residual_fn(x, opt_params)[0])
    try:
        _, half = sysid_optimize.calculate_intervals([r], result.jac)
    except Exception as e:  # noqa: BLE001 - report whatever it raises
        half = np.full(len(x), np.nan)
        print(f"  mujoco.sysid intervals failed: {e}", file=sys.stderr)
    iters = len(result.extras.get("objective", [])) or None
    # the residual at the truth (after the fit: evaluating it writes the values into params):
    # the data and the conventions are consistent when it is ~0
    r_true = np.concatenate(residual_fn(opt_params.as_nominal_vector(), opt_params)[0])
    return x, wall, iters, half, float(np.abs(r_true).max())


def run_diffmj(exe, scene, params_def, method):
    data = data_path(scene)
    noise = NOISY.get(scene)
    scene = DATA.get(scene, scene)
    model = os.path.join(REPO, "models", "sysid", scene + ".xml")
    nrow = sum(1 for _ in open(data)) - 1
    out = os.path.join("/tmp", f"diffmj_sysid_{scene}_{method}.json")
    args = [exe, "sysid", model, "--data", data, "--out", out]
    for text, _, true, start, lo, hi, log in params_def:
        args += ["--param", f"{text}={start!r}", "--bounds", f"{lo!r},{hi!r}" + (",log" if log else "")]
    if method == "inverse":
        args += ["--method", "inverse"]
    elif method == "estimated":
        args += ["--method", "shooting", "--target", "states", "--segment-steps", "25", "--estimate-starts",
                 "--noise-std", repr(noise)]
    else:
        args += ["--method", "shooting", "--target", "sensors", "--segment-steps", str(nrow - 1)]
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, RAYON_NUM_THREADS="2"))
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return None, wall, None, None, p.stderr.strip()
    r = json.load(open(out))
    x = np.array([q["estimate"] for q in r["parameters"]])
    half = np.array([np.nan if q["interval95"] is None else (q["interval95"][1] - q["interval95"][0]) / 2
                     for q in r["parameters"]])
    status = "converged" if r["converged"] else r["termination"]
    return x, wall, r["iterations"], half, f"{status}; fit {r['wall_time_s']:.3f} s of it"


def find_exe(given):
    if given:
        return given
    for d in [os.environ.get("CARGO_TARGET_DIR"), os.path.join(REPO, "target")]:
        if d and os.path.exists(os.path.join(d, "release", "diffmj")):
            return os.path.join(d, "release", "diffmj")
    raise SystemExit("no release build of diffmj: cargo build --release -p diffmj-cli, or --diffmj PATH")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diffmj")
    ap.add_argument("scenes", nargs="*")
    a = ap.parse_args()
    exe = find_exe(a.diffmj)
    scenes = a.scenes or list(SCENES)
    print(f"{'scene':12} {'tool':28} {'worst rel err':>13} {'time s':>8} {'iters':>6} {'95% half-width (worst param)':>30}  note")
    for scene in scenes:
        pdef = SCENES[scene]
        true = np.array([p[2] for p in pdef])
        rows = []
        try:
            x, wall, iters, half, r_true = run_mujoco(scene, pdef)
            rows.append(("mujoco.sysid (rollout, FD)", x, wall, iters, half, f"|r| at truth {r_true:.1e}"))
        except Exception as e:  # noqa: BLE001
            rows.append(("mujoco.sysid (rollout, FD)", None, float("nan"), None, None, f"failed: {e}"))
        methods = [("inverse", "diffmj inverse (exact J)"), ("shooting", "diffmj rollout (exact J)")]
        if scene in NOISY:
            methods.append(("estimated", "diffmj shooting, est. starts"))
        for method, label in methods:
            x, wall, iters, half, note = run_diffmj(exe, scene, pdef, method)
            if x is None:
                note = f"failed: {note}"
            rows.append((label, x, wall, iters, half, note))
        for label, x, wall, iters, half, note in rows:
            if x is None:
                print(f"{scene:12} {label:28} {'-':>13} {wall:8.3f} {'-':>6} {'-':>30}  {note}")
                continue
            rel = np.abs((x - true) / true)
            j = int(np.argmax(rel))
            hw = "-" if half is None or not np.isfinite(half[j]) else f"{half[j]:.2e} (true err {abs(x[j] - true[j]):.1e})"
            print(f"{scene:12} {label:28} {rel[j]:13.2e} {wall:8.3f} {str(iters or '-'):>6} {hw:>30}  {note}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
