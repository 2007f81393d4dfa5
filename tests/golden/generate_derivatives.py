#!/usr/bin/env python3
"""Generate golden data for the derivatives: MuJoCo's mjd_transitionFD (forward and centered)
and mjd_inverseFD (with and without flg_actuation) at a settled state of several models.

Usage:  python3 tests/golden/generate_derivatives.py [substring ...]  (only the models whose
name contains one of the substrings; every model without one)

Writes tests/golden/derivatives/<model>.json (model path under models/ with "/" -> "_"):
{model, mujoco_version, option {integrator, tolerance, iterations, ls_iterations}, eps,
state (the mjSTATE_INTEGRATION vector of mj_getState), A, B, A_centered, B_centered (row-major
lists of rows), qacc, DfDq, DfDv, DfDa, DmDq (columns in MuJoCo's sparse M layout, given by
M_rownnz and M_colind), DfDq_act... (flg_actuation=1), and for models with sensors C, D
(of the transition) and DsDq, DsDv, DsDa (nv x nsensordata, of the inverse)}.

Solver settings, applied after loading: tolerance 1e-12, iterations 1000, ls_iterations 100,
ccd_tolerance 1e-15, ccd_iterations 1000 (so each perturbed solve is defined to rounding).
RK4 models are switched to Euler (mjd_transitionFD does not support RK4). Start: keyframe 0 or
qpos0, qvel = 0.5 sin(i), ctrl = a pattern that puts limited controls at or near their bounds
(the one-sided differences), SETTLE steps, then the recorded state.
"""
import json
import math
import os
import sys

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = ["cartpole", "acrobot", "actuators", "humanoid_like", "constraints/stacks",
          "constraints/mixed", "constraints/frictionloss", "thirdparty/dm_control/cheetah",
          "thirdparty/gymnasium/ant", "thirdparty/dm_control/humanoid", "sensors/arm",
          "sensors/contact", "poly_passive", "mjcf29/pid_states", "mjcf29/pid_rotational",
          "mjcf29/dcmotor", "mjcf29/dcmotor_nested", "mjcf29/orientation",
          "mjcf29/orientation_nested"]
SETTLE = 200
EPS = 1e-6


def rows(a):
    return [list(map(float, r)) for r in a]


def main():
    out_dir = os.path.join(ROOT, "tests", "golden", "derivatives")
    os.makedirs(out_dir, exist_ok=True)
    only = sys.argv[1:]
    for name in MODELS:
        if only and not any(o in name for o in only):
            continue
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, "models", name + ".xml"))
        if m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4:
            m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
        m.opt.tolerance = 1e-12
        m.opt.iterations = 1000
        m.opt.ls_iterations = 100
        m.opt.ccd_tolerance = 1e-15
        m.opt.ccd_iterations = 1000
        d = mujoco.MjData(m)
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        d.qvel[:] = [0.5 * math.sin(i) for i in range(m.nv)]
        for i in range(m.nu):
            lo, hi = m.actuator_ctrlrange[i]
            if m.actuator_ctrllimited[i]:
                # first control at its upper bound, second at its lower, others inside
                d.ctrl[i] = hi if i == 0 else lo if i == 1 else lo + (hi - lo) * 0.3
            else:
                d.ctrl[i] = 0.3 * math.sin(i + 1)
        for _ in range(SETTLE):
            mujoco.mj_step(m, d)
        sig = int(mujoco.mjtState.mjSTATE_INTEGRATION)
        state = np.zeros(mujoco.mj_stateSize(m, sig))
        mujoco.mj_getState(m, d, state, sig)
        ndx, nu = 2 * m.nv + m.na, m.nu
        res = {"model": name, "mujoco_version": mujoco.__version__, "eps": EPS,
               "option": {"integrator": int(m.opt.integrator), "tolerance": m.opt.tolerance,
                          "iterations": m.opt.iterations,
                          "ls_iterations": m.opt.ls_iterations},
               "state": state.tolist()}
        for centered, suffix in [(False, ""), (True, "_centered")]:
            A = np.zeros((ndx, ndx))
            B = np.zeros((ndx, nu))
            ns = m.nsensordata
            C = np.zeros((ns, ndx)) if ns else None
            D = np.zeros((ns, nu)) if ns else None
            mujoco.mj_setState(m, d, state, sig)
            mujoco.mjd_transitionFD(m, d, EPS, centered, A, B, C, D)
            res["A" + suffix] = rows(A)
            res["B" + suffix] = rows(B)
            if ns:
                res["C" + suffix] = rows(C)
                res["D" + suffix] = rows(D)
        # inverse at the forward's acceleration
        mujoco.mj_setState(m, d, state, sig)
        mujoco.mj_forward(m, d)
        res["qacc"] = d.qacc.tolist()
        nv = m.nv
        for act, suffix in [(False, ""), (True, "_act")]:
            mujoco.mj_setState(m, d, state, sig)
            mujoco.mj_forward(m, d)
            DfDq, DfDv, DfDa = np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((nv, nv))
            DmDq = np.zeros((nv, m.nC))
            ns = m.nsensordata
            DsDq, DsDv, DsDa = [np.zeros((nv, ns)) if ns else None for _ in range(3)]
            mujoco.mjd_inverseFD(m, d, EPS, act, DfDq, DfDv, DfDa, DsDq, DsDv, DsDa, DmDq)
            res["DfDq" + suffix] = rows(DfDq)
            res["DfDv" + suffix] = rows(DfDv)
            res["DfDa" + suffix] = rows(DfDa)
            if ns and not act:
                res["DsDq"] = rows(DsDq)
                res["DsDv"] = rows(DsDv)
                res["DsDa"] = rows(DsDa)
            if not act:
                res["DmDq"] = rows(DmDq)
                res["M_rownnz"] = m.M_rownnz.tolist()
                res["M_colind"] = m.M_colind.tolist()
        path = os.path.join(out_dir, name.replace("/", "_") + ".json")
        with open(path, "w") as f:
            json.dump(res, f)
            f.write("\n")
        print("wrote", path, "ndx", ndx, "nu", nu, "ncon", d.ncon, "nefc", d.nefc)


if __name__ == "__main__":
    main()
