#!/usr/bin/env python3
"""Run diffmj and MuJoCo 4.0 side by side on every published model they can both load.

Usage:
    python3 bench/corpus.py [ROOT ...] [--diffmj PATH] [--steps N] [--timeout S]
                            [--csv OUT.csv] [--only SUBSTRING] [--diagnose MODEL.xml]

ROOTs are directories searched for `*.xml` (default: /tmp/mjcorpus, an export of MuJoCo's
`model/` and `test/` trees made by
`git -C <mujoco> archive HEAD model test | tar -x -C /tmp/mjcorpus`, and the repository's
`models/thirdparty`). For every file:

* MuJoCo (the `mujoco` wheel, the oracle) loads it with `MjModel.from_xml_path`; what it
  refuses (include-only fragments, the test suite's deliberately invalid models, features
  newer than 4.0) is counted as `mujoco-refuses` and goes no further.
* Models with meshes, height fields, plugins or flexes are skipped (`skipped: mesh`, ...):
  diffmj refuses them by design.
* From the default state (`mj_resetData`: qpos0, zero velocity, activation and controls,
  which is also where `diffmj rollout` starts without `--state`) and, when the model has
  keyframes, from keyframe 0 with zero controls, both simulate `--steps` steps
  (`diffmj rollout`, the release command line, one process per model with a timeout).

The comparison measures `err = |a - b| / max(1, |b|)` per entry of (time, qpos, qvel, act),
b being MuJoCo's, maximised over entries:

* `err1`, `err10`: after the first step and over the first 10 steps of the free rollouts.
* `local`: the largest one-step error along diffmj's own trajectory: MuJoCo is put in
  diffmj's state at step t (its warm start the acceleration of its own step from diffmj's
  state t-1) and steps once; the result is compared with diffmj's step t+1. A chaotic
  contact model lets the two free rollouts drift apart from rounding alone, but a one-step
  error stays at the level of one step's rounding and solver tolerance wherever the physics
  are the same, so this is the test over the whole horizon that chaos cannot excuse.
* `free`: the free rollouts' largest difference over the horizon (information only).

A model agrees when local <= TOL_LOCAL (1e-7) and err10 <= TOL10 (1e-8), with three
exceptions, each named in the reason column:
* chaotic: every step agrees (local) but the free rollouts drift apart within 10 steps, and
  MuJoCo's own rollout drifts as far from a 1e-14 perturbation of its start;
* knife edge: a step that differs is one where MuJoCo's own step moves by a tenth of the
  difference or more when diffmj's state is perturbed by 1e-14 (a contact or constraint
  switching at rounding level, boxes exactly touching);
* solver stop: with the same state and warm start (`diffmj forward` against `mj_forward`),
  the solvers run the same iterations except that in some island one stops an iteration apart
  on an improvement or gradient within 1% of the tolerance.
diffmj's stages
agree with MuJoCo's to 1e-11..1e-14 on the golden models and Newton's iterations match, so
one step errs by ~1e-12 or less; the bounds leave room for solvers stopping one iteration
apart on a tolerance of 1e-8 (a step's velocity then differs by up to ~h * tolerance * |qacc|)
while a missing force, a wrong parameter or a wrong contact shows up at 1e-4 or more. A
MuJoCo step that warns of a bad qpos/qvel/qacc (and resets) ends the comparison there; diffmj
must then have stopped (diverged) at the same step.

Statuses: agreed, refused (diffmj's error, its first line is the reason), warned (the
numbers differ and diffmj said at load time, in a positioned warning, which feature it does
not reproduce), wrong (diffmj accepts the model without a word and the numbers differ:
"silently wrong"), crash (diffmj exits with an
error after loading, panics or writes no trajectory), timeout, skipped: <feature>,
mujoco-refuses. The last line printed is a one-line summary of the key figures.

`--diagnose MODEL.xml` prints, at the first state where diffmj's one step differs, the
fields of `diffmj forward` that differ from MuJoCo's mjData at that state, in diffmj's
pipeline order, to locate the first stage that differs.
"""

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections import Counter, defaultdict

import mujoco
import numpy as np

TOL10 = 1e-8
TOL_LOCAL = 1e-7
# diffmj's load warnings (what it accepts but does not reproduce) of the last run
LAST_WARNINGS = []
# at most this many failing steps are tested for a knife edge per start
MAX_KNIFE = 20
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BAD = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
       mujoco.mjtWarning.mjWARN_BADQACC)


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def skip_reason(m):
    for field, name in (("nmesh", "mesh"), ("nhfield", "hfield"), ("nplugin", "plugin"),
                        ("nflex", "flex")):
        if getattr(m, field) > 0:
            return "skipped: " + name
    return None


def mj_state(d):
    return np.concatenate([[d.time], d.qpos, d.qvel, d.act])


def set_state(m, d, row):
    d.time = row[0]
    d.qpos[:] = row[1:1 + m.nq]
    d.qvel[:] = row[1 + m.nq:1 + m.nq + m.nv]
    d.act[:] = row[1 + m.nq + m.nv:1 + m.nq + m.nv + m.na]


def start(m, d, key):
    """MuJoCo's data at a start: mj_resetData, or keyframe `key` with zero controls."""
    if key is None:
        mujoco.mj_resetData(m, d)
    else:
        mujoco.mj_resetDataKeyframe(m, d, key)
        d.ctrl[:] = 0


def bad_count(d):
    return sum(d.warning[w].number for w in BAD)


def mj_rollout(m, key, steps):
    """MuJoCo's free rollout: rows of (time, qpos, qvel, act), stopping at a bad-state reset."""
    d = mujoco.MjData(m)
    start(m, d, key)
    rows = [mj_state(d)]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        if bad_count(d):
            return np.array(rows), True
        rows.append(mj_state(d))
    return np.array(rows), False


def chaos_drift(m, key, steps):
    """How far MuJoCo's own rollout moves in `steps` steps when its start position and
    velocity are perturbed by 1e-14 (relative): the drift rounding alone can cause (a model
    resting exactly on contact thresholds moves a lot)."""
    a, _ = mj_rollout(m, key, steps)
    d = mujoco.MjData(m)
    start(m, d, key)
    rng = np.random.default_rng(0)
    d.qpos[:] += 1e-14 * np.maximum(1.0, np.abs(d.qpos)) * rng.choice([-1.0, 1.0], size=m.nq)
    d.qvel[:] += 1e-14 * rng.choice([-1.0, 1.0], size=m.nv)
    rows = [mj_state(d)]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        rows.append(mj_state(d))
    n = min(len(a), len(rows))
    return max(rel_err(np.array(rows[t]), a[t]) for t in range(n))


def local_errors(m, key, rows, knife=None):
    """One MuJoCo step from each of diffmj's states (rows[t]) against diffmj's rows[t+1].
    With a list `knife`, each step whose error exceeds TOL_LOCAL is tested for a knife edge
    (see `spread`) and `(t, error, spread)` appended to it."""
    d = mujoco.MjData(m)
    start(m, d, key)
    errs = []
    for t in range(len(rows) - 1):
        set_state(m, d, rows[t])
        warm = d.qacc_warmstart.copy()
        mujoco.mj_step(m, d)  # leaves qacc_warmstart = its acceleration from diffmj's state t
        if bad_count(d):
            break
        e = rel_err(rows[t + 1], mj_state(d))
        errs.append(e)
        if knife is not None and e > TOL_LOCAL and len(knife) < MAX_KNIFE:
            knife.append((t, e, spread(m, rows[t], warm, mj_state(d)), warm))
    return np.array(errs)


def forward_json(m, exe, path, row, warm, state, timeout, fields=None):
    """`diffmj forward` at diffmj's state `row` with the warm start `warm` (and the start's
    mocap poses), as JSON, or None."""
    sj = {"time": row[0], "qpos": row[1:1 + m.nq].tolist(),
          "qvel": row[1 + m.nq:1 + m.nq + m.nv].tolist(), "qacc_warmstart": list(warm)}
    if m.na:
        sj["act"] = row[1 + m.nq + m.nv:1 + m.nq + m.nv + m.na].tolist()
    for k in ("mocap_pos", "mocap_quat"):
        if state and k in state:
            sj[k] = state[k]
    with tempfile.TemporaryDirectory() as tmp:
        sp = os.path.join(tmp, "s.json")
        with open(sp, "w") as f:
            json.dump(sj, f)
        cmd = [exe, "forward", path, "--state", sp]
        if fields:
            cmd += ["--fields", ",".join(fields)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return json.loads(p.stdout) if p.returncode == 0 else None


def solver_edge(m, key, exe, path, row, warm, timeout):
    """Whether a step that differs does so because the constraint solver's stopping test sits
    at its tolerance: with the same state and warm start, diffmj and MuJoCo run the same
    iterations (their statistics agree) except that in some island one stops an iteration
    before the other, on an improvement or gradient within 1% of the tolerance (a difference
    of costs or a norm whose last digits round differently). Returns the reason, or None."""
    d = mujoco.MjData(m)
    start(m, d, key)
    set_state(m, d, row)
    d.qacc_warmstart[:] = warm
    mujoco.mj_forward(m, d)
    state = None if key is None else key_state_json(m, key)
    out = forward_json(m, exe, path, row, warm, state, timeout)
    if out is None or "solver" not in out:
        return None
    ours = out["solver"].get("niter", [])
    theirs = d.solver_niter[:max(1, d.nisland)].tolist()
    if len(ours) != len(theirs) or ours == theirs:
        return None
    ns = len(d.solver) // mujoco.mjNISLAND
    tol = m.opt.tolerance
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a == b:
            continue
        if abs(a - b) != 1:
            return None
        k = min(a, b) - 1  # the iteration where one stopped and the other did not
        if k < 0 or k >= ns or k >= len(out["solver"]["iterations"][i]):
            return None
        st = out["solver"]["iterations"][i][k]
        mj = d.solver[i * ns + k]
        near = any(abs(x - tol) <= 0.01 * tol for x in
                   (st["improvement"], st["gradient"], mj.improvement, mj.gradient))
        if not near:
            return None
    return f"iterations {ours} vs MuJoCo {theirs}"


def spread(m, row, warm, ref):
    """How far MuJoCo's own step moves when diffmj's state `row` is perturbed by 1e-14
    (relative) in qpos and qvel: a step at a knife edge (a contact or a constraint switching
    on at rounding level, boxes exactly touching) differs by much more than that between any
    two implementations that round differently, and is not evidence of different physics."""
    rng = np.random.default_rng(1)
    d = mujoco.MjData(m)
    worst = 0.0
    for _ in range(4):
        r = row.copy()
        nx = m.nq + m.nv
        r[1:1 + nx] += 1e-14 * np.maximum(1.0, np.abs(r[1:1 + nx])) * rng.choice([-1.0, 1.0], nx)
        mujoco.mj_resetData(m, d)
        set_state(m, d, r)
        d.qacc_warmstart[:] = warm
        mujoco.mj_step(m, d)
        worst = max(worst, rel_err(mj_state(d), ref))
    return worst


def rel_err(a, b):
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def key_state_json(m, key):
    """The state JSON of keyframe `key` for `diffmj rollout --state` (zero controls)."""
    s = {"time": float(m.key_time[key]), "qpos": m.key_qpos[key].tolist(),
         "qvel": m.key_qvel[key].tolist()}
    if m.na:
        s["act"] = m.key_act[key].tolist()
    if m.nmocap:
        s["mocap_pos"] = m.key_mpos[key].tolist()
        s["mocap_quat"] = m.key_mquat[key].tolist()
    return s


def run_diffmj(exe, path, steps, timeout, state=None):
    """(status, reason, rows): rows of diffmj's CSV, or None."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.csv")
        cmd = [exe, "rollout", path, "--steps", str(steps), "--out", out]
        if state is not None:
            sp = os.path.join(tmp, "state.json")
            with open(sp, "w") as f:
                json.dump(state, f)
            cmd += ["--state", sp]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", f"over {timeout} s", None
        err_lines = [ln for ln in p.stderr.splitlines()
                     if ln.strip() and not ln.startswith("diffmj: warning")]
        LAST_WARNINGS[:] = [ln for ln in p.stderr.splitlines()
                            if ln.startswith("diffmj: warning") and "ccurred" not in ln]
        first = err_lines[0] if err_lines else ""
        rows = None
        if os.path.exists(out):
            with open(out) as f:
                r = list(csv.reader(f))
            if len(r) > 1:
                rows = np.array([[float(x) for x in row] for row in r[1:]])
        if p.returncode != 0:
            if "panicked" in p.stderr or p.returncode < 0 or p.returncode == 101:
                return "crash", first, rows
            if rows is None:
                return "refused", first, None
            return "diverged", first, rows
        if rows is None:
            return "crash", "no trajectory written", None
        return "ok", "", rows


def compare(m, key, exe, path, steps, timeout):
    """Compare one start; returns a dict of results."""
    res = {"status": None, "reason": "", "err1": float("nan"), "err10": float("nan"),
           "local": float("nan"), "free": float("nan"), "steps": 0}
    state = None if key is None else key_state_json(m, key)
    st, reason, rows = run_diffmj(exe, path, steps, timeout, state)
    if st in ("refused", "timeout") or (st == "crash" and rows is None):
        res["status"], res["reason"] = ("crash" if st == "crash" else st), reason
        return res
    ref, mj_bad = mj_rollout(m, key, steps)
    n = min(len(ref), len(rows))
    res["steps"] = n - 1
    if rows.shape[1] != ref.shape[1]:
        res["status"] = "wrong"
        res["reason"] = f"state width {rows.shape[1]} vs MuJoCo's {ref.shape[1]}"
        return res
    errs = [rel_err(rows[t], ref[t]) for t in range(n)]
    res["err1"] = errs[1] if n > 1 else errs[0]
    res["err10"] = max(errs[:11])
    res["free"] = max(errs)
    knife = []
    loc = local_errors(m, key, rows, knife)
    res["local"] = float(loc.max()) if loc.size else 0.0
    res["first_bad_step"] = int(np.argmax(loc > TOL_LOCAL)) if (loc > TOL_LOCAL).any() else None
    nbad = int((loc > TOL_LOCAL).sum())
    # every failing step a knife edge: MuJoCo's own step moves by a tenth of the difference
    # or more under a 1e-14 perturbation
    edges = []
    for t, e, sp, warm in knife:
        if sp >= 0.1 * e:
            edges.append(t)
        else:
            why = solver_edge(m, key, exe, path, rows[t], warm, timeout)
            if why:
                edges.append(t)
                res.setdefault("solver_edges", []).append(f"{t}: {why}")
            else:
                break
    all_edges = nbad > 0 and len(knife) == nbad and len(edges) == nbad
    if st == "crash":
        res["status"], res["reason"] = "crash", reason
    elif st == "diverged" and len(rows) == 1 and not mj_bad:
        res["status"], res["reason"] = "refused", "at run time: " + reason
    elif all_edges:
        res["status"] = "agreed"
        res["reason"] = (f"knife edge: one-step errors up to {res['local']:.1e} at steps "
                         f"{edges[:6]}, where MuJoCo's own step moves as much under a 1e-14 "
                         "perturbation or the solver's stopping test is within 1% of its "
                         "tolerance" + (f" ({'; '.join(res['solver_edges'][:3])})"
                                        if res.get("solver_edges") else ""))
    elif res["local"] <= TOL_LOCAL and res["err10"] > TOL10:
        # every step agrees, the free rollouts drift: is MuJoCo itself that sensitive?
        drift = chaos_drift(m, key, min(10, n - 1))
        if drift >= 1e-3 * res["err10"]:
            res["status"] = "agreed"
            res["reason"] = (f"chaotic: free rollouts drift to {res['err10']:.1e} in 10 steps, "
                             f"MuJoCo from a 1e-14 perturbation to {drift:.1e}; every step agrees")
        else:
            res["status"] = "wrong"
            res["reason"] = f"err10 {res['err10']:.1e}, MuJoCo's own drift only {drift:.1e}"
    elif res["err10"] > TOL10 or res["local"] > TOL_LOCAL:
        res["status"] = "wrong"
        where = res["first_bad_step"]
        real = [t for t, *_ in knife if t not in edges]
        res["reason"] = (f"err10 {res['err10']:.1e}, one-step {res['local']:.1e}"
                         + (f" first at step {where}" if where is not None else "")
                         + (f", not a knife edge at step {real[0]}" if real else ""))
    elif (st == "diverged") != mj_bad or (mj_bad and len(rows) != len(ref)):
        res["status"] = "wrong"
        res["reason"] = (f"diffmj {'diverged' if st == 'diverged' else 'ran'} to step "
                         f"{len(rows) - 1}, MuJoCo {'reset at' if mj_bad else 'ran to'} step "
                         f"{len(ref) - (0 if mj_bad else 1)}")
    else:
        res["status"] = "agreed"
        if mj_bad:
            res["reason"] = f"both diverge at step {len(ref)}"
    if res["status"] == "wrong" and LAST_WARNINGS:
        # diffmj said at load time what it does not reproduce: not silent
        res["status"] = "warned"
        res["reason"] += "; diffmj warned: " + LAST_WARNINGS[0].split(": ", 2)[-1][:160]
    return res


# mjData fields diffmj writes in another layout (dense/sparse), or that mj_forward does not
# compute (cacc, cfrc_*: rnePost runs only for sensors that need it; cameras)
LAYOUT_DIFFERS = {"M", "qLD", "qM", "actuator_moment", "ten_J", "cacc", "cfrc_int", "cfrc_ext",
                  "cam_xpos", "cam_xmat", "efc_J"}

RANK = {"agreed": 0, "refused": 1, "warned": 2, "timeout": 3, "crash": 4, "wrong": 5}


def find_models(roots):
    out = []
    for root in roots:
        for dp, _, fs in os.walk(root):
            out += [os.path.join(dp, f) for f in fs if f.endswith(".xml")]
    return sorted(out)


def default_roots():
    roots = []
    if os.path.isdir("/tmp/mjcorpus"):
        roots.append("/tmp/mjcorpus")
    roots.append(os.path.join(REPO, "models", "thirdparty"))
    return roots


def default_exe():
    for p in ("/work/wt-corpus-bin/diffmj", os.path.join(REPO, "target", "release", "diffmj"),
              "/work/target-main/release/diffmj"):
        if os.path.exists(p):
            return p
    return "diffmj"


def load_mj(path, timeout):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return mujoco.MjModel.from_xml_path(path), None
    except Timeout:
        return None, "mujoco load timeout"
    except Exception as e:  # noqa: BLE001 - MuJoCo raises ValueError, keep any reason
        return None, str(e).splitlines()[0] if str(e) else type(e).__name__
    finally:
        signal.alarm(0)


def run(args):
    paths = find_models(args.roots or default_roots())
    if args.only:
        paths = [p for p in paths if args.only in p]
    results = []
    t0 = time.time()
    for i, path in enumerate(paths):
        m, why = load_mj(path, args.timeout)
        row = {"path": path, "nq": "", "nv": "", "nu": "", "nkey": "", "status": "",
               "reason": "", "err1": "", "err10": "", "local": "", "free": ""}
        if m is None:
            row["status"], row["reason"] = "mujoco-refuses", why
        elif skip_reason(m):
            row.update(nq=m.nq, nv=m.nv, nu=m.nu, nkey=m.nkey, status=skip_reason(m))
        else:
            row.update(nq=m.nq, nv=m.nv, nu=m.nu, nkey=m.nkey)
            starts = [None] + ([0] if m.nkey > 0 else [])
            worst = None
            for key in starts:
                signal.signal(signal.SIGALRM, _alarm)
                signal.alarm(10 * args.timeout)
                try:
                    r = compare(m, key, args.diffmj, path, args.steps, args.timeout)
                except Timeout:
                    r = {"status": "timeout", "reason": "MuJoCo side over time"}
                finally:
                    signal.alarm(0)
                r["start"] = "reset" if key is None else "key0"
                if worst is None or RANK[r["status"]] > RANK[worst["status"]]:
                    worst = r
                if r["status"] in ("refused", "timeout"):
                    break
            row["status"] = worst["status"]
            row["reason"] = worst.get("reason", "")
            if worst["status"] in ("wrong", "warned"):
                row["reason"] = f"[{worst['start']}] " + row["reason"]
            for k in ("err1", "err10", "local", "free"):
                v = worst.get(k, float("nan"))
                row[k] = "" if v != v else f"{v:.2e}"
        results.append(row)
        rel = os.path.relpath(path)
        print(f"[{i + 1}/{len(paths)} {time.time() - t0:6.0f}s] {row['status']:<15} {rel}"
              + (f"  ({row['reason']})" if row["reason"] else ""), flush=True)
    return results


def summarize(results, out_csv):
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0].keys()))
        w.writeheader()
        w.writerows(results)
    counts = Counter(r["status"] for r in results)
    tried = sum(counts[s] for s in RANK)
    print()
    print(f"{'status':<20} {'models':>6}")
    for s in ["agreed", "refused", "warned", "wrong", "crash", "timeout"] + sorted(
            k for k in counts if k not in RANK):
        print(f"{s:<20} {counts[s]:>6}")
    print(f"{'tried (diffmj ran)':<20} {tried:>6}")
    reasons = defaultdict(list)
    for r in results:
        if r["status"] in ("refused", "crash", "timeout", "wrong", "warned"):
            why = r["reason"].replace(r["path"], "MODEL")
            why = re.sub(r"MODEL:\d+:\d+: ", "MODEL:L:C: ", why)
            if r["status"] == "warned":
                # by what diffmj warned of
                w = why.split("diffmj warned: ", 1)[-1]
                why = "diffmj warned: " + re.sub(r"^.*?attribute '\w+': ", "", w).split(" (")[0]
            elif r["status"] == "wrong":
                why = re.sub(r"\d\.\de[-+]\d\d", "x", why)
                why = re.sub(r"step \d+", "step N", why)
            reasons[(r["status"], why)].append(os.path.basename(r["path"]))
    if reasons:
        print("\nnot agreed, by reason:")
        for (s, why), names in sorted(reasons.items()):
            print(f"  {s}: {why}\n      {len(names)}: {', '.join(names[:8])}"
                  + (" ..." if len(names) > 8 else ""))
    skipped = sum(v for k, v in counts.items() if k.startswith("skipped"))
    by_skip = ", ".join(f"{k[9:]} {v}" for k, v in sorted(counts.items())
                        if k.startswith("skipped"))
    print(f"\nKEY tried {tried}, agreed {counts['agreed']}, refused {counts['refused']}, "
          f"warned and wrong {counts['warned']}, silently wrong {counts['wrong']}, "
          f"crash {counts['crash']}, timeout {counts['timeout']}, skipped {skipped} ({by_skip}), "
          f"MuJoCo refuses {counts['mujoco-refuses']}; csv {out_csv}")


def diagnose(args, path):
    """Fields of `diffmj forward` that differ from MuJoCo's at the first state that steps
    differently (or the default state)."""
    m = mujoco.MjModel.from_xml_path(path)
    keys = [None] + ([0] if m.nkey else [])
    for key in keys:
        state = None if key is None else key_state_json(m, key)
        st, reason, rows = run_diffmj(args.diffmj, path, args.steps, args.timeout, state)
        if rows is None:
            print(f"[{key}] diffmj: {st}: {reason}")
            continue
        loc = local_errors(m, key, rows)
        t = int(np.argmax(loc > TOL_LOCAL)) if (loc > TOL_LOCAL).any() else 0
        print(f"[start {'reset' if key is None else 'key0'}] max one-step error "
              f"{loc.max() if loc.size else 0:.2e}; diagnosing at step {t}")
        d = mujoco.MjData(m)
        start(m, d, key)
        if t > 0:  # MuJoCo's warm start from diffmj's previous state
            set_state(m, d, rows[t - 1])
            mujoco.mj_step(m, d)
        set_state(m, d, rows[t])
        mujoco.mj_forward(m, d)
        sj = {"time": rows[t][0], "qpos": rows[t][1:1 + m.nq].tolist(),
              "qvel": rows[t][1 + m.nq:1 + m.nq + m.nv].tolist(),
              "qacc_warmstart": d.qacc_warmstart.tolist()}
        if m.na:
            sj["act"] = rows[t][1 + m.nq + m.nv:].tolist()
        if state:
            for k in ("mocap_pos", "mocap_quat"):
                if k in state:
                    sj[k] = state[k]
        with tempfile.TemporaryDirectory() as tmp:
            sp = os.path.join(tmp, "s.json")
            with open(sp, "w") as f:
                json.dump(sj, f)
            p = subprocess.run([args.diffmj, "forward", path, "--state", sp],
                               capture_output=True, text=True, timeout=args.timeout)
        if p.returncode != 0:
            print("diffmj forward:", p.stderr.strip().splitlines()[:3])
            continue
        out = json.loads(p.stdout)
        ours = out.get("solver", {}).get("niter", [])
        print(f"  solver iterations per island: diffmj {ours}, "
              f"MuJoCo {d.solver_niter[:max(1, d.nisland)].tolist()}")
        diagnose_contacts(m, d, out.get("contact", []))
        shown = 0
        for name, val in out.items():
            if not hasattr(d, name) or name in LAYOUT_DIFFERS:
                continue
            try:
                a = np.array(val, dtype=float).ravel()
                b = np.array(getattr(d, name), dtype=float).ravel()
            except (TypeError, ValueError):
                continue
            if a.size != b.size:
                if a.size and b.size:
                    print(f"  {name}: size {a.size} vs MuJoCo {b.size}")
                continue
            e = rel_err(a, b)
            if e > 1e-9:
                i = int(np.argmax(np.abs(a - b) / np.maximum(1, np.abs(b))))
                print(f"  {name}: err {e:.2e} at [{i}] diffmj {a[i]!r} MuJoCo {b[i]!r}")
                shown += 1
        if shown == 0:
            print("  no mjData field differs by more than 1e-9")


def diagnose_contacts(m, d, ours):
    """Contacts by geom pair: those only one side has, and the largest differences of
    dist and pos among the pairs both have."""
    theirs = defaultdict(list)
    for c in d.contact[:d.ncon]:
        theirs[(int(c.geom1), int(c.geom2))].append(c)
    mine = defaultdict(list)
    for c in ours:
        mine[(c["geom1"], c["geom2"])].append(c)
    name = lambda g: mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or str(g)
    gtype = lambda g: mujoco.mjtGeom(m.geom_type[g]).name[7:]
    print(f"  contacts: diffmj {len(ours)}, MuJoCo {d.ncon}")
    for pair in sorted(set(theirs) | set(mine)):
        a, b = mine.get(pair, []), theirs.get(pair, [])
        label = f"{name(pair[0])}({gtype(pair[0])})-{name(pair[1])}({gtype(pair[1])})"
        if len(a) != len(b):
            dists = lambda cs: [f"{float(c['dist'] if isinstance(c, dict) else c.dist):.3e}"
                                for c in cs]
            print(f"    {label}: diffmj {len(a)} {dists(a)}, MuJoCo {len(b)} {dists(b)}")
            continue
        for ca, cb in zip(sorted(a, key=lambda c: c["pos"]), sorted(b, key=lambda c: list(c.pos))):
            e = max(abs(ca["dist"] - cb.dist), float(np.max(np.abs(np.array(ca["pos"]) - cb.pos))))
            if e > 1e-9:
                print(f"    {label}: dist {ca['dist']:.6e} vs {cb.dist:.6e}, pos err {e:.1e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*")
    ap.add_argument("--diffmj", default=default_exe())
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--csv", default="corpus_results.csv")
    ap.add_argument("--only", default=None, help="only paths containing this substring")
    ap.add_argument("--diagnose", default=None, metavar="MODEL.xml")
    args = ap.parse_args()
    if args.diagnose:
        diagnose(args, args.diagnose)
        return
    results = run(args)
    if results:
        summarize(results, args.csv)


if __name__ == "__main__":
    main()
