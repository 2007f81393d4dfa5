#!/usr/bin/env python3
"""The same iLQR on the same tasks with three sources of transition Jacobians, side by side.

Usage:  python3 bench/ilqr_vs_mujoco.py [--diffmj PATH] [--threads N] [task ...]

Needs `pip install mujoco==4.0.0 numpy` and a release build of the command line
(`cargo build --release -p diffmj-cli`; the binary is looked for in $CARGO_TARGET_DIR/release,
then target/release, or given by --diffmj).

For every task of TASKS (a model and a task file of examples/tasks/, the format of
`diffmj ilqr`):

  (i)   `diffmj ilqr --jacobian ad`: exact Jacobians (dual numbers);
  (ii)  `diffmj ilqr --jacobian fd`: diffmj's forward differences (eps 1e-6);
  (iii) this file's iLQR, written to follow diffmj's step for step (the cost of the task file,
        Tassa et al. 2012's regularization schedule on V_xx, projected-Newton box QP for the
        control limits, the same line search and stopping rules), with its Jacobians from
        MuJoCo's `mjd_transitionFD` (forward differences, eps 1e-6) through the `mujoco`
        package, one call per step.

Printed per task and source: iterations, Jacobian passes along the horizon, derivative
seconds per pass, total seconds and the final cost. All three run their Jacobian passes on
--threads threads (default 1, so a pass is one core against one core; (iii) splits the horizon
into chunks, one MjData per thread); (iii)'s backward pass is numpy and its per-iteration
overhead is Python's, so compare its derivative time, not its total. The last line gives
the derivative-time ratios per Jacobian pass and per iteration (all derivative time over all
iterations, rejected ones included, which compute no Jacobians).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TASKS = {
    "cartpole": ("models/cartpole.xml", "examples/tasks/cartpole_swingup.json"),
    "acrobot": ("models/control/acrobot.xml", "examples/tasks/acrobot_swingup.json"),
    "push": ("models/control/push.xml", "examples/tasks/push_mpc.json"),
}


def find_diffmj(given):
    if given:
        return given
    dirs = [os.environ.get("CARGO_TARGET_DIR", ""), os.path.join(ROOT, "target")]
    for d in dirs:
        p = os.path.join(d, "release", "diffmj")
        if d and os.path.exists(p):
            return p
    sys.exit("no release build of diffmj found: cargo build --release -p diffmj-cli")


class TaskCost:
    """The cost `diffmj ilqr` reads from a task file (cli/src/task.rs): running terms have no
    time, terminal ones are at the horizon; effort weighs gain·ctrl on fixed-gain motors."""

    def __init__(self, m, task):
        self.m = m
        nq, nv, na, nu = m.nq, m.nv, m.na, m.nu
        self.horizon = task["horizon"]
        self.wrap = bool(task.get("wrap_hinges", False))
        self.qpos0 = np.array(task.get("qpos0", m.qpos0), float)
        self.qvel0 = np.array(task.get("qvel0", np.zeros(nv)), float)
        self.r = np.zeros(nu)
        blank = lambda: [np.concatenate([m.qpos0, np.zeros(nv + na)]), np.zeros(2 * nv + na)]
        self.run, self.term = None, None
        # position terms (site/body, as src/control/cost.rs's PositionCost): running, terminal
        self.pos_run, self.pos_term = [], []
        self.kin = mujoco.MjData(m)
        for t in task["terms"]:
            (kind, a), = t.items()
            if kind in ("site", "body"):
                terminal = a.get("time") is not None
                if terminal and a["time"] != self.horizon:
                    raise ValueError("only running and terminal terms")
                point = self.point(kind, a[kind])
                rel = a.get("relative_to")
                ref = self.point(*next(iter(rel.items()))) if rel else None
                norm = a.get("norm", "quadratic")
                p = None if norm == "quadratic" else float(norm["smooth_l2"])
                term = (point, ref, np.array(a["target"], float), float(a["weight"]), p)
                (self.pos_term if terminal else self.pos_run).append(term)
                continue
            if kind == "effort":
                gain = np.where(m.actuator_gaintype == 0, m.actuator_gainprm[:, 0], 1.0)
                self.r += a["weight"] * gain**2
            elif kind in ("qpos", "qvel"):
                terminal = a.get("time") is not None
                if terminal and a["time"] != self.horizon:
                    raise ValueError("only running and terminal terms")
                if terminal:
                    self.term = self.term or blank()
                    s = self.term
                else:
                    self.run = self.run or blank()
                    s = self.run
                if kind == "qpos":
                    s[0][:nq] = a["target"]
                    s[1][:nv] += a["weight"]
                else:
                    s[0][nq : nq + nv] = a["target"]
                    s[1][nv : 2 * nv] += a["weight"]
            elif kind != "unactuated":  # zero in a simulated rollout, as diffmj ilqr says
                raise ValueError(f"task term kind {kind} is not in this bench")
        # rotations of ball and free joints would need J_r^-1(e): none is weighted here
        rot = []
        for j in range(m.njnt):
            da = m.jnt_dofadr[j]
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                rot += [da + 3, da + 4, da + 5]
            elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
                rot += [da, da + 1, da + 2]
        for s in (self.run, self.term):
            if s is not None and np.any(s[1][rot] != 0):
                raise ValueError("weighted rotations are not supported by this bench")
        self.hinges = [m.jnt_dofadr[j] for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]

    def point(self, kind, name):
        """(kind, id) of a site or body named in a task term."""
        obj = mujoco.mjtObj.mjOBJ_SITE if kind == "site" else mujoco.mjtObj.mjOBJ_BODY
        i = mujoco.mj_name2id(self.m, obj, name)
        if i < 0:
            raise ValueError(f"no {kind} named {name}")
        return kind, i

    def pos_jac(self, pt):
        """World position and translational Jacobian (3 x nv) of a point at self.kin."""
        kind, i = pt
        jacp = np.zeros((3, self.m.nv))
        if kind == "site":
            mujoco.mj_jacSite(self.m, self.kin, jacp, None, i)
            return self.kin.site_xpos[i].copy(), jacp
        mujoco.mj_jacBody(self.m, self.kin, jacp, None, i)
        return self.kin.xpos[i].copy(), jacp

    def positions(self, x, terms, derivatives):
        """Value, gradient and Gauss-Newton Hessian (nv rows) of position terms at x."""
        nv = self.m.nv
        l, g, h = 0.0, np.zeros(nv), np.zeros((nv, nv))
        if not terms:
            return l, g, h
        self.kin.qpos[:] = x[: self.m.nq]
        mujoco.mj_kinematics(self.m, self.kin)
        mujoco.mj_comPos(self.m, self.kin)
        for point, ref, target, w, p in terms:
            pos, jac = self.pos_jac(point)
            if ref is not None:
                rpos, rjac = self.pos_jac(ref)
                pos, jac = pos - rpos, jac - rjac
            r = pos - target
            if p is None:
                n, dn, hn = 0.5 * r @ r, r, np.eye(3)
            else:
                sq = np.sqrt(r @ r + p * p)
                n, dn = sq - p, r / sq
                hn = (np.eye(3) - np.outer(dn, dn)) / sq
            l += w * n
            if derivatives:
                g += w * jac.T @ dn
                h += w * jac.T @ hn @ jac
        return l, g, h

    def error(self, x, goal):
        m = self.m
        nq, nv = m.nq, m.nv
        e = np.zeros(2 * nv + m.na)
        mujoco.mj_differentiatePos(m, e[:nv], 1.0, goal[:nq], x[:nq])
        e[nv:] = x[nq:] - goal[nq:]
        if self.wrap:
            for k in self.hinges:
                e[k] -= 2 * np.pi * np.round(e[k] / (2 * np.pi))
        return e

    def value(self, x, u):
        s = self.run if u is not None else self.term
        c = 0.0
        if s is not None:
            e = self.error(x, s[0])
            c += 0.5 * np.sum(s[1] * e * e)
        c += self.positions(x, self.pos_run if u is not None else self.pos_term, False)[0]
        if u is not None:
            c += 0.5 * np.sum(self.r * u * u)
        return c

    def derivatives(self, x, u):
        """l, l_x, l_u, l_xx, l_uu (Gauss-Newton; exact without weighted rotations)."""
        ndx, nu = 2 * self.m.nv + self.m.na, self.m.nu
        s = self.run if u is not None else self.term
        lx, lxx = np.zeros(ndx), np.zeros((ndx, ndx))
        if s is not None:
            e = self.error(x, s[0])
            lx = s[1] * e
            lxx = np.diag(s[1])
        terms = self.pos_run if u is not None else self.pos_term
        if terms:
            nv = self.m.nv
            _, g, h = self.positions(x, terms, True)
            lx = lx.copy()
            lxx = lxx.copy()
            lx[:nv] += g
            lxx[:nv, :nv] += h
        if u is None:
            return lx, lxx, None, None
        return lx, lxx, self.r * u, np.diag(self.r)


def box_qp(h, g, lo, hi, x0):
    """Projected Newton, as src/control/boxqp.rs: (x, free mask, Cholesky of H_ff or None)."""
    n = len(g)
    x = np.clip(x0, lo, hi)
    f = 0.5 * x @ h @ x + g @ x
    free = np.ones(n, bool)
    chol = None
    for _ in range(100):
        grad = g + h @ x
        free = ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))
        if not free.any():
            chol = None
            break
        try:
            chol = np.linalg.cholesky(h[np.ix_(free, free)])
        except np.linalg.LinAlgError:
            return None
        gf = grad[free]
        df = -np.linalg.solve(h[np.ix_(free, free)], gf)
        if np.linalg.norm(gf) < 1e-13 * (1 + abs(f)):
            break
        d = np.zeros(n)
        d[free] = df
        slope = grad @ d
        step, acc = 1.0, None
        while step > 1e-20:
            xn = np.clip(x + step * d, lo, hi)
            fn = 0.5 * xn @ h @ xn + g @ xn
            if fn <= f + 0.1 * step * slope:
                acc = (xn, fn)
                break
            step *= 0.6
        if acc is None:
            break
        imp = f - acc[1]
        x, f = acc
        if imp < 1e-14 * (1 + abs(f)):
            grad = g + h @ x
            free = ~(((x <= lo) & (grad > 0)) | ((x >= hi) & (grad < 0)))
            chol = np.linalg.cholesky(h[np.ix_(free, free)]) if free.any() else None
            break
    return x, free, chol


def mujoco_ilqr(m, cost, max_iterations, threads=1):
    """iLQR as src/control/ilqr.rs with mjd_transitionFD Jacobians. Returns stats."""
    nq, nv, na, nu, T = m.nq, m.nv, m.na, m.nu, cost.horizon
    ndx = 2 * nv + na
    lo = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 0], -np.inf)
    hi = np.where(m.actuator_ctrllimited, m.actuator_ctrlrange[:, 1], np.inf)
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    ns = mujoco.mj_stateSize(m, spec)

    def rollout(xs_nom, us_nom, k, K, alpha):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = cost.qpos0
        d.qvel[:] = cost.qvel0
        xs, us, ss = np.zeros((T + 1, nq + nv + na)), np.zeros((T, nu)), np.zeros((T, ns))
        c = 0.0
        for t in range(T):
            x = np.concatenate([d.qpos, d.qvel, d.act])
            xs[t] = x
            mujoco.mj_getState(m, d, ss[t], spec)
            u = us_nom[t].copy()
            if K is not None:
                dx = cost.error(x, xs_nom[t])
                u = us_nom[t] + K[t] @ dx + alpha * k[t]
            u = np.clip(u, lo, hi)
            us[t] = u
            c += cost.value(x, u)
            d.ctrl[:] = u
            mujoco.mj_step(m, d)
        xs[T] = np.concatenate([d.qpos, d.qvel, d.act])
        c += cost.value(xs[T], None)
        return xs, us, ss, c

    stats = {"iterations": 0, "jacobian_passes": 0, "derivative_seconds": 0.0}
    start = time.perf_counter()
    xs, us, ss, c = rollout(None, np.zeros((T, nu)), None, None, 0.0)
    costs = [c]
    K = np.zeros((T, nu, ndx))
    A, B = np.zeros((T, ndx, ndx)), np.zeros((T, ndx, nu))
    mu, delta, need = 1e-6, 1.0, True
    alphas = [10 ** (-3 * k / 10) for k in range(11)]
    # the horizon in `threads` contiguous chunks, each on its own MjData (the bindings release
    # the GIL inside mjd_transitionFD, so the chunks run in parallel as diffmj's do)
    djs = [mujoco.MjData(m) for _ in range(threads)]

    def jac_chunk(k):
        dj = djs[k]
        for t in range(k * T // threads, (k + 1) * T // threads):
            mujoco.mj_setState(m, dj, ss[t], spec)
            dj.ctrl[:] = us[t]
            mujoco.mjd_transitionFD(m, dj, 1e-6, 0, A[t], B[t], None, None)

    pool = ThreadPoolExecutor(threads)
    for _ in range(max_iterations):
        stats["iterations"] += 1
        if need:
            t0 = time.perf_counter()
            if threads == 1:
                jac_chunk(0)
            else:
                list(pool.map(jac_chunk, range(threads)))
            stats["derivative_seconds"] += time.perf_counter() - t0
            stats["jacobian_passes"] += 1
            need = False
        while True:
            bw = backward(cost, xs, us, A, B, mu, lo, hi)
            if bw is not None:
                break
            delta = max(1.6, delta * 1.6)
            mu = max(1e-8, mu * delta)
            if mu > 1e10:
                break
        if bw is None:
            break
        kff, Kn, dv = bw
        gnorm = np.mean(np.max(np.abs(kff) / (np.abs(us) + 1), axis=1))
        if gnorm < 1e-5 and mu < 1e-5:
            costs.append(c)
            break
        acc = None
        for a in alphas:
            try:
                xn, un, sn, cn = rollout(xs, us, kff, Kn, a)
            except Exception:
                continue
            if not np.isfinite(cn):
                continue
            exp = -(a * dv[0] + a * a * dv[1])
            ratio = (c - cn) / exp if exp > 0 else np.sign(c - cn)
            if ratio > 1e-4:
                acc = (xn, un, sn, cn)
                break
        if acc is not None:
            imp = (c - acc[3]) / max(abs(c), 1e-300)
            xs, us, ss, c = acc
            costs.append(c)
            need = True
            delta = min(1 / 1.6, delta / 1.6)
            mu = mu * delta if mu * delta > 1e-8 else 0.0
            if imp < 1e-7:
                break
        else:
            costs.append(c)
            delta = max(1.6, delta * 1.6)
            mu = max(1e-8, mu * delta)
            if mu > 1e10:
                break
    stats["seconds"] = time.perf_counter() - start
    stats["final_cost"] = c
    return stats


def backward(cost, xs, us, A, B, mu, lo, hi):
    T, nu = us.shape
    ndx = A.shape[1]
    vx, vxx, _, _ = cost.derivatives(xs[T], None)
    kff, K = np.zeros((T, nu)), np.zeros((T, nu, ndx))
    dv = [0.0, 0.0]
    for t in reversed(range(T)):
        lx, lxx, lu, luu = cost.derivatives(xs[t], us[t])
        a, b = A[t], B[t]
        qx = lx + a.T @ vx
        qu = lu + b.T @ vx
        qxx = lxx + a.T @ vxx @ a
        quu = luu + b.T @ vxx @ b
        qux = b.T @ vxx @ a
        quu_r = quu + mu * b.T @ b
        qux_r = qux + mu * b.T @ a
        start = kff[t + 1] if t + 1 < T else np.zeros(nu)
        r = box_qp(0.5 * (quu_r + quu_r.T), qu, lo - us[t], hi - us[t], start)
        if r is None:
            return None
        k, free, chol = r
        Kt = np.zeros((nu, ndx))
        if chol is not None:
            Kt[free] = -np.linalg.solve(quu_r[np.ix_(free, free)], qux_r[free])
        dv[0] += k @ qu
        dv[1] += 0.5 * k @ quu @ k
        vx = qx + Kt.T @ quu @ k + Kt.T @ qu + qux.T @ k
        vxx = qxx + Kt.T @ quu @ Kt + Kt.T @ qux + qux.T @ Kt
        vxx = 0.5 * (vxx + vxx.T)
        kff[t], K[t] = k, Kt
    return kff, K, dv


def run_diffmj(exe, model, task, jacobian, threads, integrator):
    with open(task) as f:
        t = json.load(f)
    t.setdefault("ilqr", {})["threads"] = threads
    with tempfile.TemporaryDirectory() as tmp:
        tp = os.path.join(tmp, "task.json")
        with open(tp, "w") as f:
            json.dump(t, f)
        out = subprocess.run(
            [exe, "ilqr", model, "--task", tp, "--jacobian", jacobian, "--out", os.path.join(tmp, "plan.csv"),
             "--option", f"integrator={integrator}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diffmj")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("tasks", nargs="*", default=list(TASKS))
    args = ap.parse_args()
    exe = find_diffmj(args.diffmj)
    print(f"mujoco {mujoco.__version__}; diffmj with {args.threads} thread(s)")
    head = f"{'task':<16} {'Jacobians':<22} {'iters':>5} {'passes':>6} {'ms/pass':>8} {'total s':>8} {'final cost':>11}"
    print(head)
    summary = []
    for name in args.tasks:
        model, task = (os.path.join(ROOT, p) for p in TASKS[name])
        with open(task) as f:
            tj = json.load(f)
        rows = []
        m = mujoco.MjModel.from_xml_path(model)
        # mjd_transitionFD refuses RK4: such models run with Euler in all three
        if m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
            m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        integrator = ["Euler", "RK4", "implicit", "implicitfast"][int(m.opt.integrator)]
        for label, jac in (("diffmj exact (i)", "ad"), ("diffmj FD (ii)", "fd")):
            s = run_diffmj(exe, model, task, jac, args.threads, integrator)
            rows.append((label, s["iterations"], s["jacobian_passes"], s["derivative_seconds"], s["seconds"], s["final_cost"]))
        cost = TaskCost(m, tj)
        s = mujoco_ilqr(m, cost, tj.get("ilqr", {}).get("max_iterations", 200), args.threads)
        rows.append(("mjd_transitionFD (iii)", s["iterations"], s["jacobian_passes"], s["derivative_seconds"], s["seconds"], s["final_cost"]))
        for label, it, passes, dsec, tot, fc in rows:
            print(f"{name + ' ' + integrator:<16} {label:<22} {it:>5} {passes:>6} {1e3 * dsec / max(passes, 1):>8.2f} {tot:>8.2f} {fc:>11.4g}")
        per = [r[3] / max(r[2], 1) for r in rows]
        # derivative time over all iterations (rejected ones compute no Jacobians)
        per_it = [r[3] / max(r[1], 1) for r in rows]
        summary.append(f"{name}: exact/mjFD {per[0] / per[2]:.2f} per pass, {per_it[0] / per_it[2]:.2f} "
                       f"per iteration; FD/mjFD {per[1] / per[2]:.2f} per pass, {per_it[1] / per_it[2]:.2f} per iteration")
    print("derivative time, ratio to MuJoCo's mjd_transitionFD: " + " | ".join(summary))


if __name__ == "__main__":
    main()
