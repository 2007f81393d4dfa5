#!/usr/bin/env python3
"""Golden data for geom distances (MuJoCo's mj_geomDistance, what the distance, normal and
fromto sensors read) from MuJoCo 4.0: tests/collision.rs, `geom_distance_as_mujoco`.

Six free geoms (two boxes, a capsule, a sphere, a cylinder, an ellipsoid) at random poses in a
0.3 m cube, so that pairs are apart, touching or overlapping; every tenth pose puts the two
boxes face-parallel (their nearest points are then not unique). For each pose one pair of
PAIRS is queried in both orders with a cutoff of 1: box-box goes through MuJoCo's native CCD
(GJK/EPA witnesses), the others through their collision functions with the cutoff as margin
(box-capsule, box-sphere) or through CCD (cylinder-box, ellipsoid-box).

Usage:  python3 tests/golden/generate_geom_distance.py
Writes tests/golden/collision/geom_distance.json: {mujoco_version, xml, cases: [{qpos, g1, g2,
cutoff, aligned, dist, fromto}]}, floats exact (repr).
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
XML = """<mujoco><option ccd_tolerance="1e-12"/><worldbody>
<body><freejoint/><geom type="box" size="0.1 0.08 0.05"/></body>
<body><freejoint/><geom type="box" size="0.04 0.06 0.07"/></body>
<body><freejoint/><geom type="capsule" size="0.05 0.15"/></body>
<body><freejoint/><geom type="sphere" size="0.06"/></body>
<body><freejoint/><geom type="cylinder" size="0.05 0.08"/></body>
<body><freejoint/><geom type="ellipsoid" size="0.05 0.07 0.04"/></body>
</worldbody></mujoco>"""
PAIRS = [(0, 1), (0, 2), (0, 3), (4, 1), (5, 0)]
COUNT = 600


def main():
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(20261127)
    cases = []
    for k in range(COUNT):
        q = np.zeros(m.nq)
        for b in range(m.nbody - 1):
            q[7 * b:7 * b + 3] = rng.uniform(-0.15, 0.15, 3)
            r = rng.normal(size=4)
            q[7 * b + 3:7 * b + 7] = r / np.linalg.norm(r)
        pair = PAIRS[(k // 2) % len(PAIRS)]
        aligned = k % 10 == 0 and pair == (0, 1)
        if aligned:
            q[3:7] = [1, 0, 0, 0]
            q[10:14] = [1, 0, 0, 0]
        g1, g2 = pair if k % 2 == 0 else pair[::-1]
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        fromto = np.zeros(6)
        dist = mujoco.mj_geomDistance(m, d, g1, g2, 1.0, fromto)
        cases.append({"qpos": q.tolist(), "g1": g1, "g2": g2, "cutoff": 1.0,
                      "aligned": bool(aligned), "dist": float(dist), "fromto": fromto.tolist()})
    dst = os.path.join(ROOT, "tests", "golden", "collision", "geom_distance.json")
    with open(dst, "w") as f:
        json.dump({"mujoco_version": mujoco.__version__, "xml": XML, "cases": cases}, f)
    print(f"wrote {dst}: {len(cases)} cases, {sum(c['aligned'] for c in cases)} aligned, "
          f"{sum(c['dist'] < 0 for c in cases)} overlapping")


if __name__ == "__main__":
    main()
