#!/usr/bin/env python3
"""Generate golden model-level collision data (mj_collision) for diffmj from MuJoCo 4.0.

Usage:  python3 tests/golden/generate_contacts.py [substring]

For every model in models/contacts/ (see MODELS below) this writes
tests/golden/contacts/<name>.json, and for the third-party models of THIRDPARTY
tests/golden/contacts/thirdparty_<pkg>_<name>.json, and for the models of CONSTRAINTS
tests/golden/contacts/constraints_<name>.json (their free run from the initial state, no
random velocities): the compiled contact fields of the model and, at several
states along a MuJoCo trajectory, MuJoCo's geom poses and its whole contact list (d.contact after
mj_forward): ncon and, per contact, geom, dist, pos, frame, dim, friction, solref,
solreffriction, solimp, includemargin, exclude.  tests/suite/contacts.rs replays them without Python.

The trajectory starts at qpos0 (third-party models: keyframe 0 if any) with small random
velocities on free joints (fixed seed per model: crc32 of its name) and is stepped with mj_step
under random controls held for CTRL_HOLD steps; at each sampled step mj_forward is called and the state and
contacts recorded (mj_collision's output: mj_forward, then mj_collision again, since the
constraint stage of mj_forward marks some contacts excluded for reasons other than collision).  models/contacts/pile.xml (a few hundred geoms) and models/contacts/random_mix.xml (randomized
parameters, masks, pairs, excludes) are written by this script (make_pile, make_random) before
they are used, deterministically.

The script exits non-zero if MuJoCo raises a warning, a file exceeds MAX_FILE_BYTES, or an XML
file in models/contacts/ is not listed in MODELS.  Output is deterministic.
"""

import json
import os
import sys
import zlib

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS_DIR = os.path.join(REPO, "models", "contacts")
# its own folder: tests/common's golden_files() reads every tests/golden/*.json as forward data
OUT = os.path.join(HERE, "contacts")
MAX_FILE_BYTES = 1_500_000

# (file, sampled steps): states at these step counts of the trajectory
MODELS = [
    ("drops.xml", [0, 100, 200, 400, 800]),
    ("stacks.xml", [0, 50, 200, 500, 1000]),
    ("pairs_excludes.xml", [0, 100, 300, 600, 1000]),
    ("override.xml", [0, 100, 300, 600]),
    ("nofilter.xml", [0, 100, 300, 600]),
    ("convex.xml", [0, 100, 300, 600]),
    ("pile.xml", [0, 400, 900]),
    ("random_mix.xml", [0, 50, 150, 300, 600]),
]

# third-party models (as users have them), driven by random controls from their keyframe 0 (or
# qpos0): (path under models/thirdparty/, sampled steps)
THIRDPARTY = [
    ("dm_control/humanoid.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/humanoid_CMU.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/walker.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/hopper.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/cheetah.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/finger.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("dm_control/manipulator.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("gymnasium/ant.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("gymnasium/humanoid.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("gymnasium/half_cheetah.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("gymnasium/walker2d.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
    ("gymnasium/pusher.xml", [0, 100, 200, 300, 500, 700, 1000, 1500]),
]
CTRL_HOLD = 25

# models of models/constraints/ in their free run from the initial state (no random velocities):
# (path under models/constraints/, sampled steps). stacks.xml's cylinder rests flat on a box: its
# four cap contacts are chosen among quadrilaterals of the cap's 16-gon that tie in exact
# arithmetic, so MuJoCo's choice follows the last bits of the geom poses (checked from diffmj's
# own kinematics by tests/suite/contacts.rs, `cylinder_cap_contacts_from_own_kinematics`)
CONSTRAINTS = [
    ("stacks.xml", list(range(3, 16)) + [50, 100, 200, 300, 500, 1000]),
]

COMPILED = ["ngeom", "nbody", "npair", "nexclude", "geom_contype", "geom_conaffinity",
            "geom_condim", "geom_priority", "geom_margin", "geom_gap", "geom_solmix",
            "geom_rbound", "body_weldid", "body_contype", "body_conaffinity", "pair_geom1",
            "pair_geom2", "pair_dim", "pair_signature", "pair_friction", "pair_solref",
            "pair_solreffriction", "pair_solimp", "pair_margin", "pair_gap",
            "exclude_signature"]


def make_pile(path):
    """A container (floor and four static walls of the world body) with free bodies of one or
    two geoms (spheres, capsules, boxes) dropped in layers: a few hundred geoms."""
    rng = np.random.default_rng(20240501)
    bodies = []
    n = 0
    for layer in range(6):
        for i in range(6):
            for j in range(6):
                x = -0.5 + 0.2 * i + rng.uniform(-0.02, 0.02)
                y = -0.5 + 0.2 * j + rng.uniform(-0.02, 0.02)
                z = 0.1 + 0.17 * layer
                e = rng.uniform(-180, 180, 3)
                kind = (i + j + layer) % 4
                r = rng.uniform(0.04, 0.06)
                if kind == 0:
                    g = f'<geom type="sphere" size="{r:.4f}"/>'
                elif kind == 1:
                    g = f'<geom type="capsule" size="{0.6 * r:.4f} {r:.4f}"/>'
                elif kind == 2:
                    s = rng.uniform(0.03, 0.055, 3)
                    g = f'<geom type="box" size="{s[0]:.4f} {s[1]:.4f} {s[2]:.4f}"/>'
                else:
                    g = (f'<geom type="box" size="{0.8 * r:.4f} {0.5 * r:.4f} {0.5 * r:.4f}"/>'
                         f'<geom type="sphere" size="{0.5 * r:.4f}" pos="{0.8 * r:.4f} 0 0"/>')
                bodies.append(f'    <body name="p{n}" pos="{x:.4f} {y:.4f} {z:.4f}" '
                              f'euler="{e[0]:.1f} {e[1]:.1f} {e[2]:.1f}"><freejoint/>{g}</body>')
                n += 1
    xml = f"""<!-- Generated by tests/golden/generate_contacts.py (make_pile): {n} free bodies of one or
     two geoms dropped into a box, a few hundred geoms for the broad phase. -->
<mujoco model="pile">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <geom name="wall_x0" type="box" size="0.05 0.7 0.6" pos="-0.72 0 0.6"/>
    <geom name="wall_x1" type="box" size="0.05 0.7 0.6" pos="0.72 0 0.6"/>
    <geom name="wall_y0" type="box" size="0.7 0.05 0.6" pos="0 -0.72 0.6"/>
    <geom name="wall_y1" type="box" size="0.7 0.05 0.6" pos="0 0.72 0.6"/>
{chr(10).join(bodies)}
  </worldbody>
</mujoco>
"""
    with open(path, "w") as fh:
        fh.write(xml)


def make_random(path):
    """Randomized contact parameters and filters in one cluttered scene: random
    contype/conaffinity bits, priorities, solmix (with zeros), condim, friction, solref (both
    formats), solimp, margins and gaps on one to three geoms per body; free bodies, hinge chains
    with welded attachments, static bodies; random explicit pairs (with class defaults, several
    per body pair) and excludes.  Checks the filters and MuJoCo's order on many combinations."""
    rng = np.random.default_rng(7)
    types = ["sphere", "capsule", "box"]

    def geom_attrs():
        t = rng.choice(types)
        r = rng.uniform(0.05, 0.09)
        size = {"sphere": f"{r:.4f}", "capsule": f"{0.6 * r:.4f} {r:.4f}",
                "box": " ".join(f"{x:.4f}" for x in rng.uniform(0.04, 0.08, 3))}[t]
        a = [f'type="{t}" size="{size}"']
        if rng.uniform() < 0.5:
            a.append(f'contype="{rng.integers(0, 4)}" conaffinity="{rng.integers(0, 4)}"')
        if rng.uniform() < 0.3:
            a.append(f'priority="{rng.integers(0, 3)}"')
        if rng.uniform() < 0.4:
            a.append(f'solmix="{rng.choice([0.0, 0.5, 1.0, 3.0])}"')
        if rng.uniform() < 0.5:
            a.append(f'condim="{rng.choice([1, 3, 4, 6])}"')
        if rng.uniform() < 0.5:
            f = rng.uniform([0.2, 0.001, 0.0001], [1.5, 0.05, 0.005])
            a.append(f'friction="{f[0]:.4f} {f[1]:.5f} {f[2]:.6f}"')
        if rng.uniform() < 0.3:
            a.append(f'solref="{rng.uniform(0.01, 0.05):.4f} {rng.uniform(0.5, 1.5):.3f}"')
        elif rng.uniform() < 0.15:
            a.append(f'solref="{-rng.uniform(500, 5000):.1f} {-rng.uniform(10, 100):.2f}"')
        if rng.uniform() < 0.3:
            i = rng.uniform([0.8, 0.9, 0.0005, 0.3, 1.5], [0.9, 0.99, 0.01, 0.7, 4])
            a.append('solimp="' + " ".join(f"{x:.4f}" for x in i) + '"')
        if rng.uniform() < 0.3:
            a.append(f'margin="{rng.choice([0.002, 0.005, 0.01])}"')
        if rng.uniform() < 0.2:
            a.append(f'gap="{rng.choice([0.002, 0.005])}"')
        return " ".join(a)

    names = []  # geom names
    bnames = []

    def geoms(prefix, n):
        out = []
        for k in range(n):
            nm = f"{prefix}g{k}"
            names.append(nm)
            p = rng.uniform(-0.06, 0.06, 3) if k else np.zeros(3)
            e = rng.uniform(-90, 90, 3)
            out.append(f'<geom name="{nm}" {geom_attrs()} pos="{p[0]:.3f} {p[1]:.3f} {p[2]:.3f}" '
                       f'euler="{e[0]:.1f} {e[1]:.1f} {e[2]:.1f}"/>')
        return "".join(out)

    bodies = []
    for i in range(36):
        x, y = rng.uniform(-0.45, 0.45, 2)
        z = rng.uniform(0.08, 0.9)
        kind = rng.choice(["free", "free", "free", "chain", "static"])
        nm = f"b{i}"
        bnames.append(nm)
        ng = rng.integers(1, 4)
        if kind == "free":
            bodies.append(f'<body name="{nm}" pos="{x:.3f} {y:.3f} {z:.3f}"><freejoint/>{geoms(nm, ng)}</body>')
        elif kind == "static":
            bodies.append(f'<body name="{nm}" pos="{x:.3f} {y:.3f} {0.5 * z:.3f}">{geoms(nm, ng)}</body>')
        else:
            bnames.extend([nm + "w", nm + "c"])
            bodies.append(
                f'<body name="{nm}" pos="{x:.3f} {y:.3f} {z:.3f}"><joint type="ball" damping="0.01"/>'
                f'<joint type="slide" axis="0 0 1" damping="1"/>{geoms(nm, ng)}'
                f'<body name="{nm}w" pos="0.1 0 0">{geoms(nm + "w", 1)}</body>'
                f'<body name="{nm}c" pos="0 0.1 0"><joint axis="1 0 0" damping="0.01"/>{geoms(nm + "c", 2)}</body></body>')
    # explicit pairs likely to touch: the floor with a geom (several geoms of one body give
    # pairs of equal signature), two geoms of one body, a chain link with its child, any two
    by_body = {}
    for nm in names:
        by_body.setdefault(nm[:nm.rindex("g")], []).append(nm)
    multi = [v for v in by_body.values() if len(v) > 1]
    chains = [b for b in bnames if b + "c" in by_body]
    pairs = []
    for k in range(24):
        kind = k % 4
        if kind == 0:
            body = multi[rng.integers(len(multi))] if k % 8 == 0 else None
            g1, g2 = "floor", (body[0] if body else names[rng.integers(len(names))])
            if body:
                pairs.append(f'<pair geom1="{body[1]}" geom2="floor" condim="1"/>')
        elif kind == 1:
            body = multi[rng.integers(len(multi))]
            g1, g2 = body[1], body[0]
        elif kind == 2:
            c = chains[rng.integers(len(chains))]
            g1, g2 = by_body[c + "c"][0], by_body[c][0]
        else:
            i, j = rng.choice(len(names), 2, replace=False)
            g1, g2 = names[i], names[j]
        a = [f'geom1="{g1}" geom2="{g2}"']
        if rng.uniform() < 0.4:
            a.append(f'class="{rng.choice(["pa", "pb"])}"')
        if rng.uniform() < 0.4:
            a.append(f'condim="{rng.choice([1, 3, 4, 6])}"')
        if rng.uniform() < 0.3:
            a.append(f'margin="{rng.choice([0.0, 0.01, 0.03])}" gap="{rng.choice([0.0, 0.01])}"')
        pairs.append("<pair " + " ".join(a) + "/>")
    excludes = []
    for k in range(10):
        b1, b2 = rng.choice(len(bnames), 2, replace=False)
        excludes.append(f'<exclude body1="{bnames[b1]}" body2="{bnames[b2]}"/>')
    xml = f"""<!-- Generated by tests/golden/generate_contacts.py (make_random): randomized contact
     parameters, masks, explicit pairs and excludes in a cluttered scene. -->
<mujoco model="random_mix">
  <option timestep="0.002"/>
  <default>
    <default class="pa"><pair condim="6" friction="0.7 0.5 0.02 0.003 0.001" solreffriction="0.04 0.8"/></default>
    <default class="pb"><pair solref="-2000 -50" solimp="0.8 0.9 0.002 0.5 3" margin="0.005" gap="0.005"/></default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" margin="0.001" gap="0.002"/>
    <geom name="w_box" type="box" size="0.1 0.1 0.05" pos="0.2 0.2 0.05"/>
    <geom name="w_cap" type="capsule" size="0.04 0.3" pos="-0.2 0 0.04" euler="0 90 0" contype="2" conaffinity="3"/>
    {chr(10).join("    " + b for b in bodies)}
  </worldbody>
  <contact>
    {chr(10).join("    " + p for p in pairs + excludes)}
  </contact>
</mujoco>
"""
    with open(path, "w") as fh:
        fh.write(xml)


def free_joint_velocities(m, d, rng):
    """Small random velocities on free joints (horizontal drift, spin), none elsewhere."""
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            a = m.jnt_dofadr[j]
            d.qvel[a:a + 2] = rng.normal(0, 0.3, 2)
            d.qvel[a + 3:a + 6] = rng.normal(0, 2.0, 3)


def flat(a):
    return np.asarray(a, dtype=float).ravel().tolist()


def contacts(d):
    cs = d.contact[:d.ncon]
    return {
        "geom": [[int(c.geom[0]), int(c.geom[1])] for c in cs],
        "dist": [float(c.dist) for c in cs],
        "pos": [flat(c.pos) for c in cs],
        "frame": [flat(c.frame) for c in cs],
        "dim": [int(c.dim) for c in cs],
        "friction": [flat(c.friction) for c in cs],
        "solref": [flat(c.solref) for c in cs],
        "solreffriction": [flat(c.solreffriction) for c in cs],
        "solimp": [flat(c.solimp) for c in cs],
        "includemargin": [float(c.includemargin) for c in cs],
        "exclude": [int(c.exclude) for c in cs],
    }


def random_ctrl(m, rng):
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    limited = m.actuator_ctrllimited.astype(bool)
    return np.where(limited, rng.uniform(lo, np.maximum(hi, lo)), rng.normal(0, 0.5, m.nu))


def generate(rel, steps, thirdparty=False, constraints=False):
    if thirdparty:
        name = "thirdparty_" + rel[:-4].replace("/", "_")
        xml = "models/thirdparty/" + rel
    elif constraints:
        name = "constraints_" + rel[:-4]
        xml = "models/constraints/" + rel
    else:
        name = rel[:-4]
        xml = "models/contacts/" + rel
    m = mujoco.MjModel.from_xml_path(os.path.join(REPO, xml))
    d = mujoco.MjData(m)
    seed = zlib.crc32(name.encode())
    rng = np.random.default_rng(seed)
    if thirdparty and m.nkey > 0:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    if not constraints:
        free_joint_velocities(m, d, rng)
    states = []
    k = 0
    warnings_seen = {}
    for target in steps:
        while k < target:
            if m.nu and k % CTRL_HOLD == 0:
                d.ctrl[:] = random_ctrl(m, rng)
            mujoco.mj_step(m, d)
            k += 1
        mujoco.mj_forward(m, d)
        # the contact list as mj_collision leaves it: the constraint stage of mj_forward later
        # marks some contacts excluded (exclude 2 "fused", 3 "no dofs"), which is not collision
        mujoco.mj_collision(m, d)
        states.append({
            "step": k,
            "time": float(d.time),
            "qpos": flat(d.qpos),
            "mocap_pos": flat(d.mocap_pos),
            "mocap_quat": flat(d.mocap_quat),
            "geom_xpos": flat(d.geom_xpos),
            "geom_xmat": flat(d.geom_xmat),
            "ncon": int(d.ncon),
            "contacts": contacts(d),
        })
    for i in range(int(mujoco.mjtWarning.mjNWARNING)):
        if d.warning[i].number:
            warnings_seen[mujoco.mjtWarning(i).name] = int(d.warning[i].number)
    compiled = {f: flat(getattr(m, f)) for f in COMPILED}
    out = {
        "model": name,
        "xml": xml,
        "mujoco_version": mujoco.__version__,
        "seed": seed,
        "option": {
            "disableflags": int(m.opt.disableflags),
            "enableflags": int(m.opt.enableflags),
        },
        "compiled": compiled,
        "states": states,
        "warnings": warnings_seen,
    }
    os.makedirs(OUT, exist_ok=True)
    dst = os.path.join(OUT, name + ".json")
    with open(dst, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
    size = os.path.getsize(dst)
    print(f"{name}: ngeom {m.ngeom}, ncon {[s['ncon'] for s in states]}, {size} bytes"
          + (f"  WARNINGS {warnings_seen}" if warnings_seen else ""))
    return warnings_seen, size


def main(argv):
    make_pile(os.path.join(MODELS_DIR, "pile.xml"))
    make_random(os.path.join(MODELS_DIR, "random_mix.xml"))
    listed = {f for f, _ in MODELS}
    found = {f for f in os.listdir(MODELS_DIR) if f.endswith(".xml")}
    if listed != found:
        raise SystemExit(f"model list out of date: unlisted={sorted(found - listed)} "
                         f"missing={sorted(listed - found)}")
    bad = 0
    jobs = ([(f, st, "") for f, st in MODELS] + [(f, st, "thirdparty/") for f, st in THIRDPARTY]
            + [(f, st, "constraints/") for f, st in CONSTRAINTS])
    for rel, steps, kind in jobs:
        label = kind + rel
        if argv[1:] and not any(s in label for s in argv[1:]):
            continue
        w, size = generate(rel, steps, kind == "thirdparty/", kind == "constraints/")
        if w or size > MAX_FILE_BYTES:
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
