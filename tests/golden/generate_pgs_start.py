#!/usr/bin/env python3
"""Generate golden data for where MuJoCo's PGS starts: the forces after zero iterations
(m.opt.iterations = 0), for several warm starts, with islands and without.

Usage:  python3 tests/golden/generate_pgs_start.py

Writes tests/golden/pgs_start/<model>.json (model: the XML's path under models/ with "/" ->
"_"). Setup: keyframe 0 if the model has one, else qpos0; SETTLE mj_step calls with the model's
own options except solver = PGS; then at the reached state (qpos, qvel, act, ctrl, time
recorded as "state") one case per warm start:
  "stepped":  the qacc_warmstart the steps left (a good warm start),
  "smooth":   qacc_smooth (the forces there cost more than zero forces),
  "noise_S":  qacc_smooth + S·N(0, 1) per dof (seeded), S in NOISE,
  "half":     the stepped warm start with the first nv/2 dofs perturbed by 300·N(0, 1): on models
              with several islands some islands' forces help and others' do not,
  "disabled": the stepped warm start with mjDSBL_WARMSTART set.
For each case: qacc_warmstart (the input), disable_warmstart (bool), efc_force and qacc after
mj_forward with iterations = 0, and nisland.

File format (json, floats with repr): model, xml, mujoco_version, settle, state {time, qpos,
qvel, act, ctrl}, cases: [{name, qacc_warmstart, disable_warmstart, nefc, nisland, efc_force,
qacc}].
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {"thirdparty/gymnasium/humanoid": 700, "constraints/drops": 300,
          "constraints/mixed": 300, "constraints/frictionloss": 300}
NOISE = [1.0, 300.0]


def main():
    out_dir = os.path.join(ROOT, "tests", "golden", "pgs_start")
    os.makedirs(out_dir, exist_ok=True)
    for name, settle in MODELS.items():
        xml = f"models/{name}.xml"
        m = mujoco.MjModel.from_xml_path(os.path.join(ROOT, xml))
        m.opt.solver = mujoco.mjtSolver.mjSOL_PGS
        d = mujoco.MjData(m)
        if m.nkey > 0:
            mujoco.mj_resetDataKeyframe(m, d, 0)
        for _ in range(settle):
            mujoco.mj_step(m, d)
        e = mujoco.MjData(m)
        mujoco.mj_copyData(e, m, d)
        mujoco.mj_forward(m, e)
        rng = np.random.default_rng(7)
        starts = [("stepped", d.qacc_warmstart.copy(), False),
                  ("smooth", e.qacc_smooth.copy(), False)]
        for s in NOISE:
            starts.append((f"noise_{s:g}", e.qacc_smooth + s * rng.standard_normal(m.nv), False))
        half = d.qacc_warmstart.copy()
        half[:m.nv // 2] += 300.0 * rng.standard_normal(m.nv // 2)
        starts.append(("half", half, False))
        starts.append(("disabled", d.qacc_warmstart.copy(), True))
        cases = []
        iterations, disable = m.opt.iterations, m.opt.disableflags
        for cname, ws, off in starts:
            m.opt.iterations = 0
            if off:
                m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_WARMSTART
            f = mujoco.MjData(m)
            mujoco.mj_copyData(f, m, d)
            f.qacc_warmstart[:] = ws
            mujoco.mj_forward(m, f)
            m.opt.iterations, m.opt.disableflags = iterations, disable
            cases.append({"name": cname, "qacc_warmstart": ws.tolist(), "disable_warmstart": off,
                          "nefc": int(f.nefc), "nisland": int(f.nisland),
                          "efc_force": f.efc_force.tolist(), "qacc": f.qacc.tolist()})
        doc = {"model": name, "xml": xml, "mujoco_version": mujoco.__version__, "settle": settle,
               "state": {"time": d.time, "qpos": d.qpos.tolist(), "qvel": d.qvel.tolist(),
                         "act": d.act.tolist(), "ctrl": d.ctrl.tolist()},
               "cases": cases}
        path = os.path.join(out_dir, name.replace("/", "_") + ".json")
        with open(path, "w") as fh:
            json.dump(doc, fh)
        print(f"{path}: nefc {cases[0]['nefc']}, nisland {cases[0]['nisland']}, "
              f"zero starts {[c['name'] for c in cases if not any(c['efc_force'])]}")


if __name__ == "__main__":
    main()
