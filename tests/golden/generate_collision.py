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
1e-6 rad), at 1e-15 MuJoCo's answers stop changing.  Where MuJoCo's convex answer is still
demonstrably off, a pose also holds "reference": the exact contacts and MuJoCo's error (see
"True contacts" below).  Deterministic: fixed seeds.  The output
folder can be redirected with COLLISION_GOLDEN_OUT.  Format: see the "models" list written at
the end of this script.
"""

import json
import math
import os
import sys

import mpmath
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


# poses found by fuzzing (many more random poses than the golden files hold) that exposed a
# difference once; kept as regression poses, appended to their model's poses (kind
# "regression"): (t1, s1, t2, s2, margin) -> [(what it exposed, mocap pos, mocap quat, free-body
# pos, free-body quat)]
REGRESSION = {
    ("capsule", "0.05 0.4", "cylinder", "0.25 0.05", 0.03): [
        ("segment on a cap, inexact GJK witness shifts the surface line",
         [-0.17212009702109476, -0.42785525209406117, 0.09883304189694953],
         [-0.3727915169735688, -0.4652156303660163, -0.49304407850527976, 0.633646935435322],
         [-0.2343796517219626, -0.4279793455268741, 0.17990070309478323],
         [-0.03982912194791549, 0.8551912701774581, -0.45343144135265445, 0.24791421994306503]),
        ("same, separated within the margin",
         [-0.17212009702109476, -0.42785525209406117, 0.09883304189694953],
         [-0.3727915169735688, -0.4652156303660163, -0.49304407850527976, 0.633646935435322],
         [-0.27484836227752674, -0.4280600062582025, 0.23259468287337517],
         [-0.03982912194791549, 0.8551912701774581, -0.45343144135265445, 0.24791421994306503]),
    ],
    ("cylinder", "0.1 0.2", "box", "0.3 0.05 0.2", 0.0): [
        ("cap inside a box face: the quad is decided by the last bit of the poses",
         [-0.36868912273410026, 0.1539191175880834, 0.11666067672054625],
         [-0.20704460896345, -0.7016459544804304, -0.5344849302444543, -0.4232627361367858],
         [-0.362780048363132, 0.15622617323816665, 0.03754352379044387],
         [-0.3936546230695784, -0.7437330003172865, 0.5402723537352305, -0.0017452118465250074]),
    ],
    ("cylinder", "0.25 0.05", "box", "0.1 0.2 0.15", 0.0): [
        ("side line along a support ridge (reference)",
         [-0.12584401257992617, 0.035585853116011146, -0.36193716677074894],
         [-0.12480768688986588, 0.3425316780657096, 0.8791605444116286, 0.3068742869067706],
         [-0.3719802117171009, 0.0575296187607839, -0.49084624638798074],
         [0.08734655671641955, 0.7702915689328984, 0.4304965683504353, 0.4622706809859113]),
    ],
    ("cylinder", "0.1 0.2", "cylinder", "0.25 0.05", 0.0): [
        ("MuJoCo's clipped side line off the exact contact (known gap)",
         [-0.36868912273410026, 0.1539191175880834, 0.11666067672054625],
         [-0.20704460896345, -0.7016459544804304, -0.5344849302444543, -0.4232627361367858],
         [-0.35090676501525275, 0.16086181051620546, -0.12142898449813874],
         [-0.3936546230695784, -0.7437330003172865, 0.5402723537352305, -0.0017452118465250074]),
    ],
}


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


# ----------------------------------------------------------------------------------------------
# True contacts where MuJoCo's convex routine is demonstrably inaccurate.
#
# MuJoCo's EPA stops when the depth is within ccd_tolerance: the depth is then exact to
# rounding, but the normal can be off by up to ~1e-4 (mostly at tiny depths), and the side line
# of a cylinder that its multi-contact clips against a face goes through a vertex of the EPA
# polytope, off the exact azimuth by up to a few 1e-6 rad.  For such poses the generator records,
# next to MuJoCo's contacts, those of the exact geometry ("reference"), computed without GJK/EPA:
# the signed distance of two convex shapes is -min over unit n of h_A(n) + h_B(-n) (their
# support functions), minimised here by a global sample of directions and a pattern search.
# A reference is recorded only when MuJoCo's normal is demonstrably worse (its support gap
# exceeds the minimum beyond rounding) and its contacts differ from the exact ones by more than
# the test's tolerances; the test compares against the reference and reports MuJoCo's error.

TOL_DIST, TOL_DIR = 1e-9, 1e-5
# MuJoCo's cylinder cap polygon (cos and sin of k*pi/8, 15 significant digits)
CAP_COS = [1.0, 0.923879532511287, 0.707106781186548, 0.38268343236509, 0.0, -0.38268343236509,
           -0.707106781186547, -0.923879532511287, -1.0, -0.923879532511287, -0.707106781186548,
           -0.38268343236509, 0.0, 0.38268343236509, 0.707106781186547, 0.923879532511287]
CAP_SIN = [0.0, 0.38268343236509, 0.707106781186547, 0.923879532511287, 1.0, 0.923879532511287,
           0.707106781186548, 0.38268343236509, 0.0, -0.38268343236509, -0.707106781186547,
           -0.923879532511287, -1.0, -0.923879532511287, -0.707106781186548, -0.38268343236509]


def geom_shapes(m, d):
    """The two geoms in MuJoCo's order (lower type first): (type name, size, rotation, pos)."""
    names = {0: "plane", 2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box"}
    t = [int(m.geom_type[g]) for g in range(2)]
    order = (0, 1) if t[0] <= t[1] else (1, 0)
    return [(names[t[g]], np.array(m.geom_size[g]), d.geom_xmat[g].reshape(3, 3).copy(),
             d.geom_xpos[g].copy()) for g in order]


def support(shape, dirs):
    """Support points of a shape along unit directions dirs (k, 3)."""
    typ, size, R, pos = shape
    loc = dirs @ R
    if typ == "sphere":
        p = loc * size[0]
    elif typ == "ellipsoid":
        w = loc * size
        p = w * size / np.linalg.norm(w, axis=1, keepdims=True)
    elif typ == "capsule":
        p = loc * size[0]
        p[:, 2] += np.where(loc[:, 2] >= 0, size[1], -size[1])
    elif typ == "cylinder":
        r = np.linalg.norm(loc[:, :2], axis=1, keepdims=True)
        xy = np.where(r > 1e-15, loc[:, :2] * size[0] / np.where(r > 1e-15, r, 1), 0)
        p = np.concatenate([xy, np.where(loc[:, 2:3] >= 0, size[1], -size[1])], axis=1)
    else:  # box
        p = np.where(loc >= 0, size, -size)
    return p @ R.T + pos


def gap(a, b, dirs):
    """h_A(n) + h_B(-n) for each direction n (minus the signed distance bound along n)."""
    return np.sum((support(a, dirs) - support(b, -dirs)) * dirs, axis=1)


def fibonacci(n):
    i = np.arange(n) + 0.5
    phi, th = np.arccos(1 - 2 * i / n), np.pi * (1 + 5 ** 0.5) * i
    return np.stack([np.cos(th) * np.sin(phi), np.sin(th) * np.sin(phi), np.cos(phi)], 1)


def pattern_search(a, b, n, rng):
    """Local minimum of gap(n) on the sphere: random and axis-aligned tangent steps (the minimum
    may lie on a ridge of the support, perpendicular to an edge or axis), step halving."""
    n = n / np.linalg.norm(n)
    f = gap(a, b, n[None])[0]
    axes = [g[2][:, k] for g in (a, b) for k in range(3)]
    step = 1e-2
    for _ in range(8000):
        if step < 1e-16:
            break
        e = np.array([1.0, 0, 0]) if abs(n[0]) < 0.6 else np.array([0, 1.0, 0])
        t1 = np.cross(n, e)
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(n, t1)
        ang = rng.uniform(0, 2 * np.pi, 12)
        dirs = list(np.cos(ang)[:, None] * t1 + np.sin(ang)[:, None] * t2)
        for ax in axes:
            for t in (np.cross(ax, n), ax - np.dot(ax, n) * n):
                nt = np.linalg.norm(t)
                if nt > 1e-12:
                    dirs += [t / nt, -t / nt]
        cand = n[None] + step * np.array(dirs)
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        fc = gap(a, b, cand)
        k = int(np.argmin(fc))
        if fc[k] < f:
            n, f = cand[k], fc[k]
            step *= 1.5
        else:
            step *= 0.5
    return n, f


def exact_contact(a, b, seeds):
    """Signed distance and normal (from a to b) of two convex shapes."""
    rng = np.random.default_rng(0)
    sample = fibonacci(4000)
    fs = gap(a, b, sample)
    starts = [np.asarray(x, float) for x in seeds] + list(sample[np.argsort(fs)[:3]])
    best = min((pattern_search(a, b, x, rng) for x in starts), key=lambda r: r[1])
    return -best[1], best[0]


def mp_support(shape, n):
    """Support point along n in 40-digit arithmetic (mpmath)."""
    typ, size, R, pos = shape
    R = [[mpmath.mpf(float(x)) for x in row] for row in R]
    size = [mpmath.mpf(float(x)) for x in size]
    loc = [sum(R[i][k] * n[i] for i in range(3)) for k in range(3)]
    if typ == "sphere":
        p = [x * size[0] for x in loc]
    elif typ == "ellipsoid":
        w = [loc[k] * size[k] for k in range(3)]
        nw = mpmath.sqrt(sum(x * x for x in w))
        p = [w[k] * size[k] / nw for k in range(3)]
    elif typ == "capsule":
        p = [x * size[0] for x in loc]
        p[2] += size[1] if loc[2] >= 0 else -size[1]
    elif typ == "cylinder":
        r = mpmath.sqrt(loc[0] ** 2 + loc[1] ** 2)
        p = [loc[0] * size[0] / r, loc[1] * size[0] / r, size[1] if loc[2] >= 0 else -size[1]]
    else:
        p = [size[k] if loc[k] >= 0 else -size[k] for k in range(3)]
    return [sum(R[i][k] * p[k] for k in range(3)) + mpmath.mpf(float(pos[i])) for i in range(3)]


def mp_gap(a, b, n):
    sa, sb = mp_support(a, n), mp_support(b, [-x for x in n])
    return sum((sa[i] - sb[i]) * n[i] for i in range(3))


def mp_refine(a, b, n):
    """The pattern search continued in 40-digit arithmetic from a double-precision minimum: the
    normal to ~1e-15 even where the minimum is flat (along a ridge of the support)."""
    with mpmath.workdps(40):
        n = [mpmath.mpf(float(x)) for x in n]
        f = mp_gap(a, b, n)
        axes = [[mpmath.mpf(float(x)) for x in g[2][:, k]] for g in (a, b) for k in range(3)]
        cross = lambda u, v: [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                              u[0] * v[1] - u[1] * v[0]]
        unit = lambda v: [x / mpmath.sqrt(sum(y * y for y in v)) for x in v]
        axes = [unit(x) for x in axes]
        def rotate(v, ax, ang):
            # Rodrigues: v turned by ang about the unit axis ax (exactly keeps v . ax)
            c, s_ = mpmath.cos(ang), mpmath.sin(ang)
            axv = cross(ax, v)
            d = sum(x * y for x, y in zip(ax, v))
            return [v[k] * c + axv[k] * s_ + ax[k] * d * (1 - c) for k in range(3)]

        step = mpmath.mpf("1e-6")
        while step > mpmath.mpf("1e-24"):
            e = [1, 0, 0] if abs(n[0]) < 0.6 else [0, 1, 0]
            t1 = unit(cross(n, e))
            t2 = cross(n, t1)
            # turns about two tangents, their diagonals, and about each geom axis (which follow
            # a ridge of the support, where the minimum is flat along and kinked across)
            rot_axes = [t1, t2, unit([x + y for x, y in zip(t1, t2)]),
                        unit([x - y for x, y in zip(t1, t2)])] + axes
            best = None
            for ax in rot_axes:
                for sg in (1, -1):
                    c = rotate(n, ax, sg * step)
                    fc = mp_gap(a, b, c)
                    if fc < f and (best is None or fc < best[1]):
                        best = (c, fc)
            if best is None:
                step /= 2
            else:
                n, f = best
                step *= 1.5
        return np.array([float(x) for x in n]), -float(f)


def unique_support(shape, n):
    """Whether the support point along n stays put under 1e-6 tilts (a curved point)."""
    e = np.array([1.0, 0, 0]) if abs(n[0]) < 0.6 else np.array([0, 1.0, 0])
    t1 = np.cross(n, e)
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    tilts = np.array([n + s * t for t in (t1, t2) for s in (1e-6, -1e-6)])
    tilts /= np.linalg.norm(tilts, axis=1, keepdims=True)
    return np.abs(support(shape, tilts) - support(shape, n[None])).max() < 1e-4


def make_frame(n):
    """mju_makeFrame of a normal: tangent (0,1,0), or (0,0,1) near +-y, made orthogonal."""
    t = np.array([0.0, 1, 0]) if abs(n[1]) < 0.5 else np.array([0.0, 0, 1])
    t = t - np.dot(n, t) * n
    t /= np.linalg.norm(t)
    return list(n) + list(t) + list(np.cross(n, t))


def contact_errors(ours, theirs):
    """Largest dist, pos and frame differences of two contact lists (same length), in order or,
    for two contacts, in the other order (whichever is smaller)."""
    def errs(order):
        e = [0.0, 0.0, 0.0]
        for c, r in zip(ours, [theirs[k] for k in order]):
            e = [max(e[0], abs(c["dist"] - r["dist"])),
                 max(e[1], float(np.abs(np.subtract(c["pos"], r["pos"])).max())),
                 max(e[2], float(np.abs(np.subtract(c["frame"], r["frame"])).max()))]
        return e
    cands = [errs(range(len(ours)))]
    if len(ours) == 2:
        cands.append(errs([1, 0]))
    return min(cands, key=lambda e: (e[0] > TOL_DIST or e[1] > TOL_DIR or e[2] > TOL_DIR, max(e)))


def within(e):
    return e[0] <= TOL_DIST and e[1] <= TOL_DIR and e[2] <= TOL_DIR


def single_reference(a, b, con, precise=False):
    """The exact single contact, if MuJoCo's is demonstrably off (see above); `precise` runs
    the 40-digit refinement of the normal."""
    n_mj = np.array(con["frame"][:3])
    dist, n = exact_contact(a, b, [n_mj])
    if dist <= -gap(a, b, n_mj[None])[0] + 1e-14:
        return None  # MuJoCo's normal is as good as any
    if precise:
        n, dist = mp_refine(a, b, n)
    pa, pb = support(a, n[None])[0], support(b, -n[None])[0]
    if unique_support(a, n):
        pos = pa + 0.5 * dist * n
    elif unique_support(b, -n):
        pos = pb - 0.5 * dist * n
    else:
        return None
    ref = {"geom": con["geom"], "dist": float(dist), "pos": [float(x) for x in pos],
           "frame": [float(x) for x in make_frame(n)]}
    return [ref]


def face_polygon(shape, n_out):
    """The face of a box or cylinder cap whose outward normal is n_out (MuJoCo's polygons)."""
    typ, size, R, pos = shape
    loc = R.T @ n_out
    if typ == "box":
        k = int(np.argmax(np.abs(loc)))
        if abs(loc[k]) < 1 - 1e-9:
            return None
        s = np.sign(loc[k])
        u, v = [i for i in range(3) if i != k]
        pts = []
        for cu, cv in ((1, 1), (1, -1), (-1, -1), (-1, 1)):
            c = np.zeros(3)
            c[k], c[u], c[v] = s * size[k], cu * size[u], cv * size[v]
            pts.append(R @ c + pos)
        return pts
    if typ == "cylinder" and abs(loc[2]) > 1 - 1e-9:
        s = np.sign(loc[2])
        return [R @ np.array([size[0] * c, -s * size[0] * sn, s * size[1]]) + pos
                for c, sn in zip(CAP_COS, CAP_SIN)]
    return None


def side_line_reference(a, b, margin, cons, precise=False):
    """Two contacts of a straight line clipped against a face (box face or cylinder cap) by
    MuJoCo's multi-contact: the side line of a cylinder (through the rim point at the contact's
    azimuth) or the surface line of a capsule (through the contact point, moved out by half the
    margin as MuJoCo's inflated witness is), both as long as the geom's straight part.  The
    reference builds the line from the exact contact normal, clips it against the face
    (parametric clipping), and applies MuJoCo's depths, margins and midpoints; recorded if
    MuJoCo's contacts are off but close (see above)."""
    if len(cons) != 2:
        return None
    N = np.array(cons[0]["frame"][:3])
    dist, n = exact_contact(a, b, [N])
    if precise:
        n, dist = mp_refine(a, b, n)
    half = 0.5 * margin
    for line, face, sgn in ((a, b, 1.0), (b, a, -1.0)):
        if line[0] not in ("cylinder", "capsule") or abs(np.dot(N, line[2][:, 2])) >= 0.0888:
            continue
        # the face's outward normal points to the line's geom
        nf = -sgn * N
        poly = face_polygon(face, nf)
        if poly is None:
            continue
        axis, c = line[2][:, 2], line[3]
        r, h = line[1][0], line[1][1]
        out = sgn * n  # the contact normal leaving the line's geom
        if line[0] == "cylinder":
            u = out - np.dot(out, axis) * axis
            p = c + r * u / np.linalg.norm(u)
        else:
            p = support(line, out[None])[0] + half * out
        t = np.dot(p - c, axis)
        p0, p1 = p - (t + h) * axis, p + (h - t) * axis
        # clip the segment by the side planes of the face (inward normals via the centroid)
        cen = np.mean(poly, axis=0)
        t0, t1 = 0.0, 1.0
        for i in range(len(poly)):
            e = poly[(i + 1) % len(poly)] - poly[i]
            m = np.cross(nf, e)
            if np.dot(cen - poly[i], m) < 0:
                m = -m
            d0, d1 = np.dot(p0 - poly[i], m), np.dot(p1 - poly[i], m)
            if d0 < 0 and d1 < 0:
                return None
            if (d0 < 0) != (d1 < 0):
                tt = d0 / (d0 - d1)
                if d0 < 0:
                    t0 = max(t0, tt)
                else:
                    t1 = min(t1, tt)
        # MuJoCo's half margins: none for a capsule, whose line is on its inflated surface
        m_line = 0.0 if line[0] == "capsule" else half
        m_face = 0.0 if face[0] == "capsule" else half
        refs = []
        for tt in (t0, t1):
            s_ = p0 + tt * (p1 - p0)
            depth = float(np.dot(s_ - poly[0], nf))
            if depth > m_line + m_face:
                continue
            on_face = s_ - depth * nf
            # inflated witnesses, geom 1 first; N is the normal from geom 1 to geom 2
            x_line = s_ + (m_line if sgn > 0 else -m_line) * N
            x_face = on_face + (-m_face if sgn > 0 else m_face) * N
            x1, x2 = (x_line, x_face) if sgn > 0 else (x_face, x_line)
            refs.append({"geom": cons[0]["geom"],
                         "dist": float(margin + depth - m_line - m_face),
                         "pos": [float(x) for x in 0.5 * (x1 + x2)],
                         "frame": cons[0]["frame"]})
        if len(refs) != 2:
            return None
        e = contact_errors(refs, cons)
        if max(e) > 1e-4:  # not the same construction: no claim
            return None
        return refs
    return None


def add_reference(m, d, rec):
    """Attach the exact contacts to a convex pose where MuJoCo's are demonstrably off."""
    if rec["tie"] or not rec["contacts"]:
        return
    a, b = geom_shapes(m, d)
    margin = float(m.geom_margin[0] + m.geom_margin[1])
    cons = rec["contacts"]
    for precise in (False, True):
        # a quick double-precision check first, the 40-digit normal only where it matters
        if len(cons) == 1:
            ref = single_reference(a, b, cons[0], precise)
        else:
            ref = side_line_reference(a, b, margin, cons, precise)
        if ref is None:
            return
        e = contact_errors(ref, cons)
        # the double-precision reference is itself good to ~1e-9 only: it clears MuJoCo when
        # well within the tolerances, the 40-digit one decides otherwise
        if within([x * (1.0 if precise else 10.0) for x in e]):
            return
    rec["reference"] = {"contacts": ref,
                        "mujoco_error": {"dist": e[0], "pos": e[1], "frame": e[2]}}


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
                    if convex:
                        add_reference(m, d, rec)
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
                        if convex:
                            add_reference(m, d, rec)
                        poses.append(rec)
                for (what, p1, q1, p2, q2) in REGRESSION.get((t1, s1, t2, s2, margin), []):
                    tie = is_tie(m, d, p1, q1, p2, q2)
                    set_pose(m, d, p1, q1, p2, q2)
                    rec = record(m, d)
                    rec["kind"] = f"regression: {what}"
                    rec["tie"] = tie
                    if convex:
                        add_reference(m, d, rec)
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
