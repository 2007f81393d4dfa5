#!/usr/bin/env python3
"""Golden data for geom distances (MuJoCo's mj_geomDistance, what the distance, normal and
fromto sensors read) from MuJoCo 4.0: tests/collision.rs, `geom_distance_as_mujoco`.

Six free geoms (two boxes, a capsule, a sphere, a cylinder, an ellipsoid) at random poses in a
0.3 m cube, so that pairs are apart, touching or overlapping; every tenth pose puts the two
boxes face-parallel (their nearest points are then not unique). For each pose one pair of
PAIRS is queried in both orders with a cutoff of 1: box-box goes through MuJoCo's native CCD
(GJK/EPA witnesses), the others through their collision functions with the cutoff as margin
(box-capsule, box-sphere) or through CCD (cylinder-box, ellipsoid-box).

For the convex pairs (cylinder-box, ellipsoid-box) in overlap, MuJoCo's EPA often stops at its
iteration limit (the default ccd_iterations, 35) before ccd_tolerance is met: each such case
records whether it did ("ccd_limit": the answer changes with 1000 iterations) and the exact
answer ("true_dist": the depth minimised over directions without GJK/EPA, by the pattern search
and 40-digit refinement of generate_collision.py; "true_fromto": the witnesses from the support
point along the exact normal of the geom whose support is unique, null where neither is).

Usage:  python3 tests/golden/generate_geom_distance.py   (about 5 minutes)
Writes tests/golden/collision/geom_distance.json: {mujoco_version, xml, cases: [{qpos, g1, g2,
cutoff, aligned, dist, fromto}]} (overlapping convex cases also {ccd_limit, true_dist,
true_fromto}), floats exact (repr).
"""
import json
import os

import mujoco
import numpy as np

import generate_collision as gc

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
NAMES = {2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box"}


def exact_answer(m, d, g1, g2, dist, fromto):
    """The exact signed distance (negative) and witnesses, from g1 to g2, of two overlapping
    geoms; the witnesses None where neither support point along the normal is unique."""
    shape = lambda g: (NAMES[int(m.geom_type[g])], np.array(m.geom_size[g]),
                       d.geom_xmat[g].reshape(3, 3).copy(), d.geom_xpos[g].copy())
    a, b = shape(g1), shape(g2)
    # MuJoCo's normal (from g1 to g2) as a seed of the search
    seg = np.subtract(fromto[3:], fromto[:3])
    seeds = [seg / np.linalg.norm(seg) * np.sign(dist)] if np.linalg.norm(seg) > 0 else []
    _, n = gc.exact_contact(a, b, seeds)
    n, true = gc.mp_refine(a, b, n)
    pa, pb = gc.support(a, n[None])[0], gc.support(b, -n[None])[0]
    if gc.unique_support(a, n):
        ft = list(pa) + list(pa + true * n)
    elif gc.unique_support(b, -n):
        ft = list(pb - true * n) + list(pb)
    else:
        ft = None
    return true, None if ft is None else [float(x) for x in ft]


def main():
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    # the same model with room for EPA to converge
    m_free = mujoco.MjModel.from_xml_string(XML.replace('ccd_tolerance="1e-12"',
                                                        'ccd_tolerance="1e-12" ccd_iterations="1000"'))
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
        case = {"qpos": q.tolist(), "g1": g1, "g2": g2, "cutoff": 1.0,
                "aligned": bool(aligned), "dist": float(dist), "fromto": fromto.tolist()}
        convex = {int(m.geom_type[g1]), int(m.geom_type[g2])} & {4, 5}
        if convex and dist < 0:
            ft_free = np.zeros(6)
            dist_free = mujoco.mj_geomDistance(m_free, d, g1, g2, 1.0, ft_free)
            case["ccd_limit"] = bool(dist_free != dist or (ft_free != fromto).any())
            case["true_dist"], case["true_fromto"] = exact_answer(m, d, g1, g2, dist, fromto)
        cases.append(case)
    dst = os.path.join(ROOT, "tests", "golden", "collision", "geom_distance.json")
    with open(dst, "w") as f:
        json.dump({"mujoco_version": mujoco.__version__, "xml": XML, "cases": cases}, f)
    print(f"wrote {dst}: {len(cases)} cases, {sum(c['aligned'] for c in cases)} aligned, "
          f"{sum(c['dist'] < 0 for c in cases)} overlapping, "
          f"{sum(c.get('ccd_limit', False) for c in cases)} convex ones at the iteration limit")


if __name__ == "__main__":
    main()
