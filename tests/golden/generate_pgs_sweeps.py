#!/usr/bin/env python3
"""Generate golden data for MuJoCo's PGS iterates: the forces after a given number of sweeps
(m.opt.iterations = K), which depend on the order the rows are visited in, the momentum
schedule and its restarts, not only on the solution.

Usage:  python3 tests/golden/generate_pgs_sweeps.py

Writes tests/golden/pgs_sweeps/<case>.json. Setup per case: the model with solver = PGS (and the
cone override below), keyframe 0 if the model has one, else qpos0; SETTLE mj_step calls; then at
the reached state (qpos, qvel, act, ctrl, time and the qacc_warmstart the steps left, recorded as
"state") one mj_forward per K in SWEEPS with iterations = K and tolerance = 0 (every sweep runs),
and one with the model's own iterations and tolerance ("converged").

File format (json, floats with repr): case, model, xml, cone, mujoco_version, settle, state
{time, qpos, qvel, act, ctrl, qacc_warmstart}, runs: [{iterations, tolerance, nefc, nisland,
efc_force, efc_state, qacc, solver_niter (per island)}].
"""
import json
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# case name: (model, settle steps, cone override or None)
CASES = {
    "gymnasium_humanoid": ("thirdparty/gymnasium/humanoid", 700, None),
    "drops": ("constraints/drops", 300, None),
    "drops_elliptic": ("constraints/drops", 300, mujoco.mjtCone.mjCONE_ELLIPTIC),
    "mixed": ("constraints/mixed", 300, None),
    "frictionloss": ("constraints/frictionloss", 300, None),
    "equality": ("constraints/equality", 300, None),
    "humanoid": ("constraints/humanoid", 300, None),
}
SWEEPS = [1, 2, 3, 4, 5, 7, 10, 15, 25]


def main():
    out_dir = os.path.join(ROOT, "tests", "golden", "pgs_sweeps")
    os.makedirs(out_dir, exist_ok=True)
    for case, (name, settle, cone) in CASES.items():
        xml = f"models/{name}.xml"
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, xml))
        m.opt.solver = mujoco.mjtSolver.mjSOL_PGS
        if cone is not None:
            m.opt.cone = cone
        d = mujoco.MjData(m)
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        for _ in range(settle):
            mujoco.mj_step(m, d)
        iterations, tolerance = m.opt.iterations, m.opt.tolerance
        runs = []
        for k, tol in [(k, 0.0) for k in SWEEPS] + [(iterations, tolerance)]:
            m.opt.iterations, m.opt.tolerance = k, tol
            f = mujoco.MjData(m)
            mujoco.mj_copyData(f, m, d)
            mujoco.mj_forward(m, f)
            runs.append({"iterations": k, "tolerance": tol, "nefc": int(f.nefc),
                         "nisland": int(f.nisland), "efc_force": f.efc_force.tolist(),
                         "efc_state": [int(x) for x in f.efc_state],
                         "qacc": f.qacc.tolist(),
                         "solver_niter": [int(x) for x in f.solver_niter[:max(1, f.nisland)]]})
        m.opt.iterations, m.opt.tolerance = iterations, tolerance
        doc = {"case": case, "model": name, "xml": xml,
               "cone": int(m.opt.cone), "mujoco_version": mujoco.__version__, "settle": settle,
               "state": {"time": d.time, "qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(),
                         "act": d.act.tolist(), "ctrl": d.ctrl.tolist(),
                         "qacc_warmstart": d.qacc_warmstart.tolist()},
               "runs": runs}
        path = os.path.join(out_dir, case + ".json")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        print(f"{path}: nefc {runs[0]['nefc']}, nisland {runs[0]['nisland']}, "
              f"converged niter {runs[-1]['solver_niter']}")


if __name__ == "__main__":
    main()
