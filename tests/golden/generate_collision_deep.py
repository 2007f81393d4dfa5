#!/usr/bin/env python3
"""Golden contacts of the general convex routine in deep overlap at MuJoCo's default iteration
limit, from MuJoCo 4.0: tests/golden/collision/collision_deep.json, replayed by
tests/collision.rs (`contacts_match_mujoco`, like every collision_*.json).

generate_collision.py runs the convex pairs at ccd_tolerance 1e-15 with 1000 ccd_iterations, so
that MuJoCo's EPA converges. Here the models keep MuJoCo's default ccd_iterations (35) at
ccd_tolerance 1e-12, where EPA often stops at its iteration limit in deep overlaps: MuJoCo then
reports the nearest face of its last polytope (here up to 9e-4 short of the depth, with a
normal off by up to 0.2). Every pair MuJoCo collides with its convex routine (ellipsoids
against anything, cylinder-cylinder, cylinder-box, capsule-cylinder), both geom orders, two
size combinations each; random orientations with the free body moved along a random direction
to a fraction (FACTORS) of the touching distance found by bisection.

Each pose records "ccd_limit": whether MuJoCo's contacts change when the same model gets 1000
iterations. If so, MuJoCo's contacts are its unconverged iterate and "mujoco_error" holds their
distance from the converged ones (largest dist, pos and frame differences); if not, where
MuJoCo's converged contacts are demonstrably off, the pose also holds the exact ones
("reference", computed without GJK/EPA by generate_collision.py), which the test compares
instead.

Usage:  python3 tests/golden/generate_collision_deep.py   (about a minute)
Format: that of generate_collision.py plus "ccd_limit" and "mujoco_error" per pose;
deterministic (fixed seed).
"""

import json
import os

import mujoco
import numpy as np

import generate_collision as gc

CCD = '<option ccd_tolerance="1e-12"/>'
CCD_FREE = '<option ccd_tolerance="1e-12" ccd_iterations="1000"/>'
FACTORS = [0.15, 0.4, 0.7]
POSES = 4


def model_xml(t1, s1, t2, s2):
    xml = gc.model_xml(t1, s1, t2, s2, 0.0, True)
    return xml.replace('<option ccd_tolerance="1e-15" ccd_iterations="1000"/>', CCD)


def own_error(cons, free):
    """How far MuJoCo's contacts at the iteration limit are from its converged ones (largest
    dist, pos and frame differences; infinite when their number differs)."""
    if len(cons) != len(free):
        return {"dist": float("inf"), "pos": float("inf"), "frame": float("inf")}
    e = gc.contact_errors(cons, free)
    return {"dist": e[0], "pos": e[1], "frame": e[2]}


def gen_models(t1, t2, rng):
    models = []
    for i1, s1 in enumerate(gc.SIZES[t1]):
        for i2, s2 in enumerate(gc.SIZES[t2]):
            if (i1 + i2) % 2 == 1:
                continue
            xml = model_xml(t1, s1, t2, s2)
            m = mujoco.MjModel.from_xml_string(xml)
            d = mujoco.MjData(m)
            # the same model with room to converge: tells whether the iteration limit stopped
            # MuJoCo's answer
            m_free = mujoco.MjModel.from_xml_string(xml.replace(CCD, CCD_FREE))
            d_free = mujoco.MjData(m_free)
            poses = []
            for _ in range(POSES):
                p1 = rng.uniform(-0.5, 0.5, size=3)
                q1, q2 = gc.rand_quat(rng), gc.rand_quat(rng)
                u = rng.normal(size=3)
                u /= np.linalg.norm(u)
                s = gc.touching_distance(m, d, p1, q1, q2, u)
                if s is None:
                    continue
                for f in FACTORS:
                    gc.set_pose(m, d, p1, q1, p1 + f * s * u, q2)
                    rec = gc.record(m, d)
                    rec["kind"] = f"deep {f}"
                    rec["tie"] = False
                    gc.set_pose(m_free, d_free, p1, q1, p1 + f * s * u, q2)
                    free = gc.record(m_free, d_free)["contacts"]
                    rec["ccd_limit"] = free != rec["contacts"]
                    if rec["ccd_limit"]:
                        rec["mujoco_error"] = own_error(rec["contacts"], free)
                    else:
                        gc.add_reference(m, d, rec)
                    poses.append(rec)
            models.append({"xml": xml, "convex": True, "poses": poses})
    return models


def main():
    rng = np.random.default_rng(20261128)
    models = []
    for a, b in sorted(gc.CONVEX, key=lambda p: (gc.TYPES.index(p[0]), gc.TYPES.index(p[1]))):
        models += gen_models(a, b, rng)
        if a != b:
            models += gen_models(b, a, rng)
    out = {"mujoco_version": mujoco.__version__, "pair": ["convex", "deep"], "models": models}
    path = os.path.join(gc.OUT, "collision_deep.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    n = sum(len(mm["poses"]) for mm in models)
    nc = sum(len(p["contacts"]) for mm in models for p in mm["poses"])
    nr = sum("reference" in p for mm in models for p in mm["poses"])
    nl = sum(p["ccd_limit"] for mm in models for p in mm["poses"])
    print(f"{path}: {len(models)} models, {n} poses, {nc} contacts, {nl} at the iteration "
          f"limit, {nr} references")


if __name__ == "__main__":
    main()
