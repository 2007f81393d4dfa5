#!/usr/bin/env python3
"""Generate golden inverse-dynamics data (mj_inverse) for diffmj from MuJoCo 4.0.

Usage:  python3 tests/golden/generate_inverse.py

Reads the golden constraint files tests/golden/constraints/<name>_<cone>.json (the project's
own models and the third-party ones, written by generate_constraints.py) and, at each of their
recorded states, with the same solver settings (Newton, tolerance 1e-12, the file's cone,
jacobian and iteration limits):
  - mj_forward, then mj_inverse at the forward's qacc ("forward" case: the round trip),
  - mj_inverse at that qacc plus a seeded perturbation N(0, 1)·(1 + |qacc|)·PERTURB per entry
    ("perturbed" case: the rows land in every state, elliptic cones in all three zones).
Writes tests/golden/inverse/<name>_<cone>.json:
  model, xml, cone, mujoco_version, source (the constraint file),
  states: list of {step, cases: [{kind, qacc, qfrc_inverse, qfrc_constraint, efc_force,
    efc_state, nefc, qfrc_applied_total}]}
where qfrc_applied_total = qfrc_applied + qfrc_actuator + Σ J_bᵀ xfrc_applied (from the
forward; what the round trip must give back). The state itself is the constraint file's
"input" of the same step (read from there by the test). Floats are written exactly (repr).

Discrete-time inverse (the invdiscrete enable flag), tests/golden/inverse_discrete/
<name>_<cone>_<integrator>.json for DISCRETE (models whose dofs are damped, with free rigid
bodies, with contacts): at the first DISCRETE_STATES states of the constraint file, with the
integrator set to Euler, implicit or implicitfast, one mj_step from the state gives the discrete
acceleration a_d = (v' − v)/h; then mj_inverse with invdiscrete at a_d ("step" case) and at a
perturbed a_d ("perturbed"), recorded as above (qacc is a_d).

The smooth models (every forward golden file tests/golden/<name>.json): tests/golden/
inverse_smooth/<name>.json, mj_inverse at each recorded state's forward qacc and a perturbation.

The fwdinv enable flag: tests/golden/inverse_fwdinv/fwdinv.json, solver_fwdinv after one
mj_step from each state of FWDINV with PGS, CG and Newton stopped by small iteration limits.
"""
import glob
import json
import os
import zlib

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SRC = os.path.join(HERE, "constraints")
OUT = os.path.join(HERE, "inverse")
PERTURB = 0.3


def set_state(m, d, inp):
    mujoco.mj_resetData(m, d)
    d.time = inp["time"]
    d.qpos[:] = inp["qpos"]
    d.qvel[:] = inp["qvel"]
    d.act[:] = inp["act"]
    if inp.get("ctrl") is not None:
        d.ctrl[:] = inp["ctrl"]
    if inp.get("qacc_warmstart") is not None:
        d.qacc_warmstart[:] = inp["qacc_warmstart"]
    if inp.get("eq_active") is not None:
        d.eq_active[:] = inp["eq_active"]
    for k in ("qfrc_applied", "xfrc_applied", "mocap_pos", "mocap_quat"):
        if inp.get(k) is not None:
            getattr(d, k).flat[:] = inp[k]


def applied_total(m, d):
    """qfrc_applied + qfrc_actuator + Σ_b J_bᵀ xfrc_applied[b] (at the body's COM)."""
    tot = d.qfrc_applied + d.qfrc_actuator
    for b in range(1, m.nbody):
        x = d.xfrc_applied[b]
        if np.any(x != 0):
            q = np.zeros(m.nv)
            mujoco.mj_applyFT(m, d, x[:3].copy(), x[3:].copy(), d.xipos[b].copy(), b, q)
            tot = tot + q
    return tot


def case(m, d, kind, qacc, total):
    d.qacc[:] = qacc
    mujoco.mj_inverse(m, d)
    n = d.nefc
    return {
        "kind": kind,
        "qacc": [float(x) for x in qacc],
        "qfrc_inverse": [float(x) for x in d.qfrc_inverse],
        "qfrc_constraint": [float(x) for x in d.qfrc_constraint],
        "efc_force": [float(x) for x in d.efc_force[:n]],
        "efc_state": [int(x) for x in d.efc_state[:n]],
        "nefc": int(n),
        "qfrc_applied_total": [float(x) for x in total],
    }


DISCRETE = ["humanoid_pyramidal", "stacks_elliptic", "frictionloss_pyramidal"]
DISCRETE_STATES = 3
INTEGRATORS = [("euler", mujoco.mjtIntegrator.mjINT_EULER),
               ("implicit", mujoco.mjtIntegrator.mjINT_IMPLICIT),
               ("implicitfast", mujoco.mjtIntegrator.mjINT_IMPLICITFAST)]


def load(g):
    """The constraint file's model with its solver settings (Newton, its tolerance, cone, ...)."""
    m = mujoco.MjModel.from_xml_path(os.path.join(REPO, g["xml"]))
    o = g["option"]
    m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    m.opt.tolerance = o["tolerance"]
    m.opt.iterations = o["iterations"]
    m.opt.ls_iterations = o["ls_iterations"]
    m.opt.cone = o["cone"]
    m.opt.jacobian = o["jacobian"]
    return m


def discrete():
    out_dir = os.path.join(HERE, "inverse_discrete")
    os.makedirs(out_dir, exist_ok=True)
    for name in DISCRETE:
        g = json.load(open(os.path.join(SRC, name + ".json")))
        for iname, integ in INTEGRATORS:
            m = load(g)
            m.opt.integrator = integ
            d = mujoco.MjData(m)
            rng = np.random.default_rng(zlib.crc32(f"{name}_{iname}".encode()))
            states = []
            for st in g["states"][:DISCRETE_STATES]:
                set_state(m, d, st["input"])
                v0 = d.qvel.copy()
                mujoco.mj_step(m, d)
                a_d = (d.qvel - v0) / m.opt.timestep
                set_state(m, d, st["input"])
                mujoco.mj_forward(m, d)
                total = applied_total(m, d)
                m.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
                pert = a_d + rng.normal(0.0, 1.0, m.nv) * (1.0 + np.abs(a_d)) * PERTURB
                cases = [case(m, d, "step", a_d, total), case(m, d, "perturbed", pert, total)]
                m.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_INVDISCRETE)
                states.append({"step": st["step"], "cases": cases})
            out = {"model": g["model"], "xml": g["xml"], "cone": g["cone"], "integrator": iname,
                   "mujoco_version": mujoco.__version__, "source": "constraints/" + name + ".json",
                   "states": states}
            fname = f"{name}_{iname}.json"
            with open(os.path.join(out_dir, fname), "w") as fh:
                json.dump(out, fh, separators=(",", ":"))
            print(f"{fname}: {len(states)} states")


FWDINV = ["humanoid_pyramidal", "stacks_elliptic", "equality_pyramidal"]
FWDINV_SOLVERS = [("PGS", mujoco.mjtSolver.mjSOL_PGS, 3), ("CG", mujoco.mjtSolver.mjSOL_CG, 5),
                  ("Newton", mujoco.mjtSolver.mjSOL_NEWTON, 100)]


def fwdinv():
    """The fwdinv flag: solver_fwdinv after one mj_step from each state of the constraint files
    FWDINV, with PGS (3 iterations), CG (5) and Newton (100), tolerance 0 (so the iteration
    limit stops them), into tests/golden/inverse_fwdinv.json."""
    out = {"mujoco_version": mujoco.__version__, "runs": []}
    for name in FWDINV:
        g = json.load(open(os.path.join(SRC, name + ".json")))
        for sname, solver, iters in FWDINV_SOLVERS:
            m = load(g)
            m.opt.solver = solver
            m.opt.iterations = iters
            m.opt.tolerance = 0.0
            m.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_FWDINV)
            d = mujoco.MjData(m)
            for st in g["states"]:
                set_state(m, d, st["input"])
                mujoco.mj_step(m, d)
                out["runs"].append({"source": "constraints/" + name + ".json", "step": st["step"],
                                    "solver": sname, "iterations": iters,
                                    "solver_fwdinv": [float(x) for x in d.solver_fwdinv]})
    with open(os.path.join(HERE, "inverse_fwdinv", "fwdinv.json"), "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
    print(f"fwdinv.json: {len(out['runs'])} runs")


def smooth():
    """Every forward golden file tests/golden/<name>.json (the smooth models of the engine-core
    data, constraints disabled where that file says so): at each recorded state, mj_inverse at the
    mj_forward qacc and at a perturbation of it, into tests/golden/inverse_smooth/<name>.json."""
    out_dir = os.path.join(HERE, "inverse_smooth")
    os.makedirs(out_dir, exist_ok=True)
    skip = {"compile_fields.json", "eig3.json"}
    for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        name = os.path.basename(path)
        if name in skip:
            continue
        g = json.load(open(path))
        m = mujoco.MjModel.from_xml_path(os.path.join(REPO, g["xml"]))
        if g.get("disable_constraint"):
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        d = mujoco.MjData(m)
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        states = []
        for k, st in enumerate(g["states"]):
            set_state(m, d, st["input"])
            mujoco.mj_forward(m, d)
            qacc = d.qacc.copy()
            total = applied_total(m, d)
            pert = qacc + rng.normal(0.0, 1.0, m.nv) * (1.0 + np.abs(qacc)) * PERTURB
            states.append({"index": k, "cases": [case(m, d, "forward", qacc, total),
                                                 case(m, d, "perturbed", pert, total)]})
        with open(os.path.join(out_dir, name), "w") as fh:
            json.dump({"model": g["model"], "xml": g["xml"], "mujoco_version": mujoco.__version__,
                       "source": name, "states": states}, fh, separators=(",", ":"))
    print(f"inverse_smooth: {len(glob.glob(os.path.join(out_dir, '*.json')))} files")


def main():
    os.makedirs(OUT, exist_ok=True)
    files = sorted(glob.glob(os.path.join(SRC, "*.json")))
    for path in files:
        g = json.load(open(path))
        m = load(g)
        d = mujoco.MjData(m)
        rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()))
        states = []
        for st in g["states"]:
            set_state(m, d, st["input"])
            mujoco.mj_forward(m, d)
            qacc = d.qacc.copy()
            total = applied_total(m, d)
            pert = qacc + rng.normal(0.0, 1.0, m.nv) * (1.0 + np.abs(qacc)) * PERTURB
            cases = [case(m, d, "forward", qacc, total), case(m, d, "perturbed", pert, total)]
            states.append({"step": st["step"], "cases": cases})
        name = os.path.basename(path)
        out = {
            "model": g["model"],
            "xml": g["xml"],
            "cone": g["cone"],
            "mujoco_version": mujoco.__version__,
            "source": "constraints/" + name,
            "states": states,
        }
        with open(os.path.join(OUT, name), "w") as fh:
            json.dump(out, fh, separators=(",", ":"))
        print(f"{name}: {len(states)} states")


if __name__ == "__main__":
    main()
    discrete()
    os.makedirs(os.path.join(HERE, "inverse_fwdinv"), exist_ok=True)
    fwdinv()
    smooth()
