#!/usr/bin/env python3
"""MuJoCo 4.0's simple bodies and sparse `M` layout (body_simple, dof_simplenum, nC, M_rownnz,
M_rowadr, M_colind) for every model of the repository MuJoCo loads, into layout/mlayout.json
(tests/suite/mjcf_golden.rs compares diffmj's compiled fields with them).

    python3 tests/golden/generate_mlayout.py
"""
import glob
import json
import os

import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "models", "**", "*.xml"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        try:
            m = mujoco.MjModel.from_xml_path(path)
        except Exception:
            continue  # parts of other models, or models MuJoCo refuses
        out[rel] = {
            "body_simple": m.body_simple.tolist(),
            "dof_simplenum": m.dof_simplenum.tolist(),
            "nC": int(m.nC),
            "M_rownnz": m.M_rownnz.tolist(),
            "M_rowadr": m.M_rowadr.tolist(),
            "M_colind": m.M_colind.tolist(),
        }
    doc = {"mujoco_version": mujoco.__version__, "models": out}
    with open(os.path.join(ROOT, "tests", "golden", "layout", "mlayout.json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"{len(out)} models")


if __name__ == "__main__":
    main()
