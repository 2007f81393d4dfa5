#!/usr/bin/env python3
"""Generate golden narrow-phase collision data for diffmj from MuJoCo 4.0.

Usage:  python3 tests/golden/generate_collision.py [substring]

For every unordered pair of the geom types plane, sphere, capsule, ellipsoid, cylinder, box this
writes tests/golden/collision/collision_<type1>_<type2>.json.  Each file holds several small models (two
geoms, the first on a mocap body, the second on a free body; a plane is always the first) and, for
each model, many poses: mocap_pos/mocap_quat of body 1, qpos of body 2, MuJoCo's geom_xpos and
geom_xmat after mj_kinematics, and the contacts of mj_collision (geom ids, dist, pos, frame).

Poses: random orientations with the free body placed along a random direction at a distance
found by bisection on MuJoCo's own contact count (the touching distance s* within the margin),
then scaled to s*·f for factors from deep penetration to just separated; plus degenerate poses
(coincident centres, parallel and perpendicular axes, faces aligned with the world axes).
A degenerate pose whose contacts jump under a 1e-9 perturbation is flagged "tie": true (its
branch is decided by rounding, so only its existence is recorded, not a comparable answer).

Models of pairs that MuJoCo routes to its general convex routine set ccd_tolerance to 1e-15 (and
more ccd_iterations) so that MuJoCo's answer is close to the exact one: at 1e-12 its EPA normal
is only accurate to ~1e-5 (and the side line a cylinder contributes to a multi-contact to a few
1e-6 rad), at 1e-15 MuJoCo's answers stop changing.  Deterministic: fixed seeds.  The output
folder can be redirected with COLLISION_GOLDEN_OUT.  Format: see the "models" list written at
the end of this script.
"""

import json
import math
import os
import sys

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# a folder of its own: tests/common's golden_files() treats every tests/golden/*.json as a
# forward-dynamics golden file
OUT = os.environ.get("COLLISION_GOLDEN_OUT", os.path.join(HERE, "collision"))
TYPES = ["plane", "sphere", "capsule", "ellipsoid", "cylinder", "box"]

# sizes per type: (size attribute, ...) several per type
SIZES = {
    "plane": ["0 0 1", "2 3 1"],
    "sphere": ["0.1", "0.27"],
    "capsule": ["0.1 0.2", "0.05 0.4"],
    "ellipsoid": ["0.1 0.2 0.15", "0.3 0.1 0.05"],
    "cylinder": ["0.1 0.2", "0.25 0.05"],
    "box": ["0.1 0.2 0.15", "0.3 0.05 0.2"],
}

# pairs MuJoCo 4.0 collides with mjc_Convex (the general convex routine)
CONVEX = {
    ("sphere", "ellipsoid"), ("capsule", "ellipsoid"), ("capsule", "cylinder"),
    ("ellipsoid", "ellipsoid"), ("ellipsoid", "cylinder"), ("ellipsoid", "box"),
    ("cylinder", "cylinder"), ("cylinder", "box"),
}
# plane-ellipsoid: MuJoCo's plane-vs-convex routine (support point along -normal)

FACTORS = [0.2, 0.6, 0.9, 0.99, 0.999999, 1.000001, 1.05]


def model_xml(t1, s1, t2, s2, margin, convex):
    opt = '<option ccd_tolerance="1e-15" ccd_iterations="1000"/>' if convex else ""
    return f"""<mujoco model="pair">
  {opt}
  <worldbody>
    <body name="b1" mocap="true">
      <geom name="g1" type="{t1}" size="{s1}" margin="{margin}"/>
    </body>
    <body name="b2">
      <freejoint/>
      <geom name="g2" type="{t2}" size="{s2}" margin="{margin}"/>
    </body>
  </worldbody>
</mujoco>
"""


def rand_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def axis_quat(axis, angle):
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def set_pose(m, d, p1, q1, p2, q2):
    d.mocap_pos[0] = p1
    d.mocap_quat[0] = q1
    d.qpos[:3] = p2
    d.qpos[3:7] = q2
    mujoco.mj_kinematics(m, d)
    mujoco.mj_collision(m, d)
    return d.ncon


def record(m, d):
    cons = []
    for c in d.contact[: d.ncon]:
        cons.append({
            "geom": [int(c.geom[0]), int(c.geom[1])],
            "dist": float(c.dist),
            "pos": [float(x) for x in c.pos],
            "frame": [float(x) for x in c.frame],
        })
    return {
        "mocap_pos": [float(x) for x in d.mocap_pos[0]],
        "mocap_quat": [float(x) for x in d.mocap_quat[0]],
        "qpos": [float(x) for x in d.qpos[:7]],
        "geom_xpos": [[float(x) for x in d.geom_xpos[g]] for g in range(2)],
        "geom_xmat": [[float(x) for x in d.geom_xmat[g]] for g in range(2)],
        "contacts": cons,
    }


def contact_summary(d):
    return [(c.dist, np.array(c.pos), np.array(c.frame[:3])) for c in d.contact[: d.ncon]]


def is_tie(m, d, p1, q1, p2, q2):
    """True when MuJoCo's contacts jump under a 1e-9 perturbation of the second pose: the pose
    sits on a branch decided by rounding (e.g. a sphere centre exactly between two faces)."""
    set_pose(m, d, p1, q1, p2, q2)
    base = contact_summary(d)
    for k in range(6):
        dp = np.zeros(3)
        dq = np.zeros(4)
        if k < 3:
            dp[k] = 1e-9
        else:
            dq[k - 2] = 1e-9
        for sgn in (1, -1):
            q = np.asarray(q2, float) + sgn * dq
            set_pose(m, d, p1, q1, np.asarray(p2, float) + sgn * dp, q / np.linalg.norm(q))
            other = contact_summary(d)
            if len(other) != len(base):
                return True
            for (d0, x0, n0), (d1, x1, n1) in zip(base, other):
                if abs(d0 - d1) > 1e-6 or np.abs(x0 - x1).max() > 1e-6 or np.abs(n0 - n1).max() > 1e-6:
                    return True
    return False


def touching_distance(m, d, p1, q1, q2, u):
    """Largest s with contacts at p1 + s u, by bisection (s* of the margin surface)."""
    hi = 0.1
    while set_pose(m, d, p1, q1, p1 + hi * u, q2) > 0:
        hi *= 2
        if hi > 100:
            return None
    lo = 0.0
    if set_pose(m, d, p1, q1, p1 + lo * u, q2) == 0:
        return None
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if set_pose(m, d, p1, q1, p1 + mid * u, q2) > 0:
            lo = mid
        else:
            hi = mid
    return lo


def special_poses(rng, t1, t2):
    """Degenerate and aligned configurations: (p1, q1, p2, q2)."""
    out = []
    ident = np.array([1.0, 0, 0, 0])
    p1 = np.array([0.1, -0.2, 0.3])
    rots = [ident, axis_quat([1, 0, 0], math.pi / 2), axis_quat([0, 1, 0], math.pi / 2),
            axis_quat([0, 0, 1], math.pi / 4), axis_quat([1, 1, 0], math.pi)]
    # coincident centres
    for q2 in rots[:3]:
        out.append((p1, ident, p1.copy(), q2))
    # offsets along world axes with aligned / rotated frames
    for off in ([0, 0, 0.12], [0, 0, 0.25], [0.15, 0, 0], [0, 0.2, 0.05], [0.05, 0.05, 0.3],
                [0.0, 0.0, -0.2], [0.3, 0.0, 0.0]):
        for q2 in rots:
            out.append((p1, ident, p1 + np.array(off), q2))
    # rotated first geom (a tilted plane for plane pairs)
    q1 = axis_quat([1, 2, 0.5], 0.7)
    R1 = np.zeros(9)
    mujoco.mju_quat2Mat(R1, q1)
    R1 = R1.reshape(3, 3)
    for k in range(3):
        for sgn in (1, -1):
            off = sgn * 0.18 * R1[:, k]
            out.append((p1, q1, p1 + off, q1.copy()))
    return out


def gen_pair(t1, t2, rng):
    key = tuple(sorted((t1, t2), key=TYPES.index))
    convex = key in CONVEX
    models = []
    for i1, s1 in enumerate(SIZES[t1]):
        for i2, s2 in enumerate(SIZES[t2]):
            for margin in (0.0, 0.03):
                if (i1 + i2) % 2 == 1 and margin > 0 and t1 != "plane":
                    continue
                xml = model_xml(t1, s1, t2, s2, margin, convex)
                m = mujoco.MjModel.from_xml_string(xml)
                d = mujoco.MjData(m)
                poses = []
                for (p1, q1, p2, q2) in special_poses(rng, t1, t2):
                    tie = is_tie(m, d, p1, q1, p2, q2)
                    set_pose(m, d, p1, q1, p2, q2)
                    rec = record(m, d)
                    rec["kind"] = "special"
                    rec["tie"] = tie
                    poses.append(rec)
                for _ in range(6):
                    p1 = rng.uniform(-0.5, 0.5, size=3)
                    q1 = rand_quat(rng) if t1 != "plane" or rng.uniform() < 0.7 else np.array([1.0, 0, 0, 0])
                    q2 = rand_quat(rng)
                    u = rng.normal(size=3)
                    u /= np.linalg.norm(u)
                    if t1 == "plane":
                        # move along the plane normal (tangential offsets are irrelevant)
                        R = np.zeros(9)
                        mujoco.mju_quat2Mat(R, q1)
                        n = R.reshape(3, 3)[:, 2]
                        u = n
                        p1 = p1 + 0.0
                    s = touching_distance(m, d, p1, q1, q2, u)
                    if s is None:
                        continue
                    for f in FACTORS:
                        set_pose(m, d, p1, q1, p1 + f * s * u, q2)
                        rec = record(m, d)
                        rec["kind"] = f"scaled {f}"
                        rec["tie"] = False
                        poses.append(rec)
                models.append({"xml": xml, "convex": convex, "poses": poses})
    return models


def main():
    sel = sys.argv[1] if len(sys.argv) > 1 else ""
    for a in range(6):
        for b in range(a, 6):
            t1, t2 = TYPES[a], TYPES[b]
            if t1 == "plane" and t2 == "plane":
                continue
            name = f"collision_{t1}_{t2}"
            if sel not in name:
                continue
            rng = np.random.default_rng(1000 + 10 * a + b)
            models = gen_pair(t1, t2, rng)
            out = {"mujoco_version": mujoco.__version__, "pair": [t1, t2], "models": models}
            # also the reversed order in the model (higher type on the mocap body), so that the
            # geom-order convention is exercised; not possible for planes
            if t1 != t2 and t1 != "plane":
                rng = np.random.default_rng(2000 + 10 * a + b)
                out["models"] += gen_pair(t2, t1, rng)
            os.makedirs(OUT, exist_ok=True)
            path = os.path.join(OUT, name + ".json")
            with open(path, "w") as f:
                json.dump(out, f, separators=(",", ":"))
            n = sum(len(mm["poses"]) for mm in out["models"])
            nc = sum(len(p["contacts"]) for mm in out["models"] for p in mm["poses"])
            print(f"{name}: {len(out['models'])} models, {n} poses, {nc} contacts")


if __name__ == "__main__":
    main()
