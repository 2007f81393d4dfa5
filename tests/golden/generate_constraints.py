#!/usr/bin/env python3
"""Generate golden constraint-stage data (equality, friction loss, limits, contacts; the soft
constraint model; the Newton, CG and PGS solvers) for diffmj from MuJoCo 4.0.

Usage:  python3 tests/golden/generate_constraints.py [substring ...]

For every model of models/constraints/ (MODELS below) and each friction cone this writes
tests/golden/constraints/<name>_<cone>.json (cone: "pyramidal" or "elliptic"), and for the
third-party models of THIRDPARTY tests/golden/constraints/thirdparty_<pkg>_<name>_<cone>.json.
tests/common's golden_files() reads every tests/golden/*.json as forward data, hence the
subfolder.

Solver settings (applied to the compiled model after loading, recorded in "option"):
  own models:   solver = Newton, tolerance = 1e-12, iterations = 1000, ls_iterations = 100,
                cone = the file's, jacobian = dense (all own models have nv < 60, where
                MuJoCo's "auto" picks dense anyway), everything else as in the XML.
  third-party:  solver = Newton, tolerance = 1e-12, cone = the file's; iterations,
                ls_iterations, jacobian, impratio, ... as in the XML.

Trajectory: from qpos0 (third-party: keyframe 0 if the model has keyframes), small random
velocities on free joints (linear ~N(0, 0.3) in x, y; angular ~N(0, 2)), random controls
(ctrlrange-uniform if ctrllimited, else N(0, 0.5)) drawn every CTRL_HOLD steps, seeded with
crc32 of the model name (the same for both cones; the trajectories still differ, since the cone
changes the dynamics).  Stepped with mj_step under the settings above.  EQ_TOGGLES switches
equality constraints on/off at given steps through d.eq_active.  At each sampled step the state
is recorded ("input"), mj_forward is called and its constraint-stage results recorded.  Then,
on copies of the same input state (mj_copyData, so warm start included), mj_forward is repeated
with PGS, CG (same tolerance; iterations 1000 for own models, the model's own for third-party
ones) and Newton with islands disabled ("alt").  The extra mj_forward calls do not change the
trajectory (mj_forward does not touch qacc_warmstart).

File format (json, floats written with repr, i.e. exactly; flat row-major lists):
  model, xml, cone ("pyramidal"/"elliptic"), mujoco_version, seed, thirdparty (bool),
  efc_J_dropped (bool: third-party files too large with efc_J leave it out),
  sizes: nq, nv, nu, na, nbody, njnt, ngeom, ntendon, neq, npair, nexclude, ntree,
  option: timestep, impratio, tolerance, iterations, ls_iterations, ls_tolerance,
    noslip_iterations, solver (mjtSolver int, as used: always 2 = Newton), cone (mjtCone int),
    jacobian (mjtJacobian int), disableflags, enableflags, o_margin, o_solref, o_solimp,
    o_friction, gravity, integrator,
  stat_meaninertia: m.stat.meaninertia (scales Newton/CG's stopping tests),
  compiled: mjModel arrays (COMPILED below), flat:
    eq_type (mjtEq), eq_obj1id, eq_obj2id, eq_objtype, eq_data (neq*12 in 4.0: connect
    anchors / weld anchor, relpose (pos, quat) and torquescale at [10] / polycoef), eq_solref,
    eq_solimp, eq_active0, jnt_type, jnt_limited, jnt_range, jnt_margin, jnt_solref (= the
    XML's solreflimit), jnt_solimp, jnt_dofadr, jnt_qposadr, jnt_bodyid, dof_solref
    (solreffriction), dof_solimp, dof_frictionloss, dof_invweight0, dof_bodyid, dof_jntid,
    dof_treeid, body_invweight0 (nbody*2: translation, rotation), body_weldid, body_treeid,
    body_parentid, body_rootid, tendon_limited, tendon_range, tendon_margin,
    tendon_solref_lim, tendon_solimp_lim, tendon_solref_fri, tendon_solimp_fri,
    tendon_frictionloss, tendon_invweight0, tendon_num, tendon_adr, wrap_type, wrap_objid,
    wrap_prm, geom_*, pair_*, exclude_signature (as in generate_contacts.py), geom_adhesion,
    geom_surfacevel (ngeom*6), pair_adhesion.
  Fields added after the first files were written (contact adhesion/surfacevel, qfrc_adhesion,
  qfrc_passive, qfrc_actuator, actuator_length, actuator_moment, geom/pair adhesion and
  surfacevel) are absent from files not regenerated since; readers treat them as optional.
  names: body, joint, geom, tendon, equality, actuator names ("" if unnamed).
  eq_toggles: [{step, eq, active}] applied before the step of that number (see EQ_TOGGLES).
  warnings: MuJoCo warnings seen (always empty in committed data).
  states: list of {step, input, output, alt}:
    input: time, qpos, qvel, act, ctrl, qacc_warmstart, eq_active (runtime d.eq_active, ints),
      qfrc_applied, xfrc_applied (nbody*6), mocap_pos, mocap_quat: what mj_forward needs.
    output (mj_forward with Newton, islands as the model says, default: on):
      ncon, contacts: struct of arrays over the ncon contacts after mj_forward: geom ([g1, g2]),
        dist, pos (3), frame (9, normal first), dim, friction (5), solref, solreffriction,
        solimp (5), includemargin, exclude (0 active, 1 in the gap, 2 fused bodies, 3 no
        dofs), efc_address (-1 without rows), adhesion, surfacevel (3: tangent1, tangent2,
        spin; MuJoCo 4.x),
      ne, nf, nl, nefc, and per efc row: efc_type (mjtConstraint int: 0 equality, 1 dof
        friction, 2 tendon friction, 3 joint limit, 4 tendon limit, 5 frictionless contact,
        6 pyramidal contact, 7 elliptic contact), efc_id (eq / dof / tendon / joint / contact
        index), efc_J (nefc*nv dense; absent if efc_J_dropped), efc_pos, efc_margin,
        efc_frictionloss, efc_diagA (MuJoCo 4.0's name for the former efc_diagApprox:
        approximate diagonal of A = J M^-1 J^T used for R), efc_KBIP (nefc*4: stiffness K,
        damping B, impedance I = imp(pos), P = d imp / d pos), efc_D, efc_R,
        efc_vel, efc_aref, efc_b, efc_force, efc_state (mjtConstraintState int),
      qfrc_smooth, qacc_smooth, qfrc_constraint, qacc, qfrc_adhesion (4.x: passive contact
      adhesion), qfrc_passive (includes it), qfrc_actuator, actuator_length, actuator_moment
      (nu*nv dense; adhesion actuators' body transmission depends on the contacts),
      nisland, island_nv, island_nefc, efc_island, dof_island,
      solver_niter (one per island, first min(nisland, mjNISLAND) entries; [n] if nisland 0),
      solver_stats: per island, the first min(niter, STATS_CAP) iteration records of d.solver
        (island i's block starts at i*mjNSOLVER) as struct of arrays: improvement, gradient,
        lineslope, nactive, nchange, neval, nupdate,
      solver_fwdinv (2).
    alt: {pgs, cg, newton_noisland, newton_exact}: each {solver (int), disableflags, qacc, qfrc_constraint,
      efc_force, efc_state, nisland, solver_niter (per island as above), last (per island the
      last iteration record, struct of arrays as solver_stats, or null if niter is 0)}; for
      newton_noisland also solver_stats (capped like the main one).  All three solvers work per
      island in MuJoCo 4.0 (PGS and CG too), except newton_noisland (mjDSBL_ISLAND: one block).

Output is deterministic.  The script exits non-zero if MuJoCo raises a warning, a file exceeds
MAX_FILE_BYTES, an XML file in models/constraints/ is not listed in MODELS, or a model misses
the constraint kinds it is meant to exercise (EXPECT) or shows kinds its disable flags forbid.
It prints a per-model summary (nefc by type per sample, Newton iteration ranges).
"""

import json
import os
import sys
import zlib

import mujoco
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_contacts import contacts as contact_fields, flat, free_joint_velocities  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS_DIR = os.path.join(REPO, "models", "constraints")
OUT = os.path.join(HERE, "constraints")
MAX_FILE_BYTES = 1_500_000
CTRL_HOLD = 25
STATS_CAP = 50
TOLERANCE = 1e-12
CONES = [("pyramidal", mujoco.mjtCone.mjCONE_PYRAMIDAL), ("elliptic", mujoco.mjtCone.mjCONE_ELLIPTIC)]
NSOLVER = None  # per-island block length of d.solver (mjNSOLVER), set at first use

# (file, sampled steps)
MODELS = [
    ("drops.xml", [0, 60, 150, 300, 600]),
    ("stacks.xml", [0, 20, 100, 300, 600]),
    ("humanoid.xml", [0, 20, 60, 150, 300]),
    ("equality.xml", [0, 50, 200, 400, 700]),
    ("frictionloss.xml", [0, 50, 150, 300, 600]),
    ("limits.xml", [0, 200, 400, 800, 900, 1500]),
    ("pairs.xml", [0, 50, 200, 400, 800]),
    ("override.xml", [0, 50, 150, 300]),
    ("refsafe.xml", [0, 30, 100, 300]),
    ("mixed.xml", [0, 100, 200, 400, 600]),
    ("dsbl_equality.xml", [0, 100, 200, 400, 600]),
    ("dsbl_frictionloss.xml", [0, 100, 200, 400, 600]),
    ("dsbl_limit.xml", [0, 100, 200, 400, 600]),
    ("dsbl_contact.xml", [0, 100, 200, 400, 600]),
    ("dsbl_constraint.xml", [0, 100, 300]),
    ("adhesion.xml", [0, 50, 150, 300, 600]),
]

THIRDPARTY = [
    ("dm_control/humanoid.xml", [0, 150, 400]),
    ("dm_control/walker.xml", [0, 150, 400]),
    ("dm_control/hopper.xml", [0, 150, 400]),
    ("dm_control/cheetah.xml", [0, 150, 400]),
    ("gymnasium/ant.xml", [0, 100, 300]),
    ("gymnasium/humanoid.xml", [0, 100, 300]),
    ("gymnasium/hopper.xml", [0, 100, 300]),
]

# model -> [(step, equality name, active)]: set d.eq_active before that step
EQ_TOGGLES = {
    "equality": [(300, "inactive", 1), (600, "weld_world", 0)],
}

# constraint kinds (mjtConstraint ints) each own model must show in some sample (the contact
# kind is per cone: "C" stands for 6 pyramidal / 7 elliptic), and kinds it must never show
EXPECT = {
    "drops": ({5, "C"}, set()),
    "stacks": ({5, "C"}, set()),
    "humanoid": ({3, "C"}, set()),
    "equality": ({0}, {1, 2, 3, 4, 5, 6, 7}),
    "frictionloss": ({1, 2}, {0, 3, 4, 5, 6, 7}),
    "limits": ({3, 4}, {0, 1, 2, 5, 6, 7}),
    "pairs": ({3, 5, "C"}, set()),
    "override": ({0, 1, 3, "C"}, set()),
    "refsafe": ({0, 1, 3, "C"}, set()),
    "mixed": ({0, 1, 2, 3, 4, "C"}, set()),
    "dsbl_equality": ({1, 2, 3, 4, "C"}, {0}),
    "dsbl_frictionloss": ({0, 3, 4, "C"}, {1, 2}),
    "dsbl_limit": ({0, 1, 2, "C"}, {3, 4}),
    "dsbl_contact": ({0, 1, 2, 3, 4}, {5, 6, 7}),
    "dsbl_constraint": (set(), {0, 1, 2, 3, 4, 5, 6, 7}),
    "adhesion": ({3, 5, "C"}, set()),
}

DISABLE_VARIANTS = ["equality", "frictionloss", "limit", "contact", "constraint"]

COMPILED = [
    "eq_type", "eq_obj1id", "eq_obj2id", "eq_objtype", "eq_data", "eq_solref", "eq_solimp",
    "eq_active0", "jnt_type", "jnt_limited", "jnt_range", "jnt_margin", "jnt_solref",
    "jnt_solimp", "jnt_dofadr", "jnt_qposadr", "jnt_bodyid", "dof_solref", "dof_solimp",
    "dof_frictionloss", "dof_invweight0", "dof_bodyid", "dof_jntid", "dof_treeid",
    "body_invweight0", "body_weldid", "body_treeid", "body_parentid", "body_rootid",
    "tendon_limited", "tendon_range", "tendon_margin", "tendon_solref_lim",
    "tendon_solimp_lim", "tendon_solref_fri", "tendon_solimp_fri", "tendon_frictionloss",
    "tendon_invweight0", "tendon_num", "tendon_adr", "wrap_type", "wrap_objid", "wrap_prm",
    "geom_contype", "geom_conaffinity", "geom_condim", "geom_priority", "geom_friction",
    "geom_solmix", "geom_solref", "geom_solimp", "geom_margin", "geom_gap", "pair_geom1",
    "pair_geom2", "pair_dim", "pair_signature", "pair_friction", "pair_solref",
    "pair_solreffriction", "pair_solimp", "pair_margin", "pair_gap", "exclude_signature",
    "geom_adhesion", "geom_surfacevel", "pair_adhesion",
]

STAT_FIELDS = ["improvement", "gradient", "lineslope", "nactive", "nchange", "neval", "nupdate"]
INT_STATS = {"nactive", "nchange", "neval", "nupdate"}


def make_disable_variants():
    """models/constraints/dsbl_<flag>.xml: mixed.xml with <flag <flag>="disable"/>."""
    src = open(os.path.join(MODELS_DIR, "mixed.xml")).read()
    head, body = src.split("-->", 1)
    for flag in DISABLE_VARIANTS:
        b = body.replace('<mujoco model="mixed">', f'<mujoco model="dsbl_{flag}">')
        b = b.replace('<option timestep="0.002"/>',
                      f'<option timestep="0.002">\n    <flag {flag}="disable"/>\n  </option>')
        assert f'{flag}="disable"' in b
        xml = (f'<!-- Generated by tests/golden/generate_constraints.py (make_disable_variants) '
               f'from mixed.xml:\n     the same model with <flag {flag}="disable"/>. -->' + b)
        with open(os.path.join(MODELS_DIR, f"dsbl_{flag}.xml"), "w") as fh:
            fh.write(xml)


def ints(a):
    return [int(x) for x in np.asarray(a).ravel()]


def names(m, objtype, n):
    return [mujoco.mj_id2name(m, objtype, i) or "" for i in range(n)]


def random_ctrl(m, rng):
    lo, hi = m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1]
    limited = m.actuator_ctrllimited.astype(bool)
    return np.where(limited, rng.uniform(lo, np.maximum(hi, lo)), rng.normal(0, 0.5, m.nu))


def contacts(d):
    """The contact list by field, as generate_contacts.py writes it, plus each contact's first
    constraint row, adhesion and surface velocity."""
    out = contact_fields(d)
    out["efc_address"] = [int(c.efc_address) for c in d.contact[:d.ncon]]
    out["adhesion"] = [float(c.adhesion) for c in d.contact[:d.ncon]]
    out["surfacevel"] = [flat(c.surfacevel) for c in d.contact[:d.ncon]]
    return out


def dense_moment(m, d):
    """actuator_moment as a dense nu x nv matrix (MuJoCo stores it sparse)."""
    M = np.zeros((m.nu, m.nv))
    if m.nu and m.nv:
        mujoco.mju_sparse2dense(M, d.actuator_moment, d.moment_rownnz, d.moment_rowadr,
                                d.moment_colind)
    return flat(M)


def stats_block(d, island, count):
    recs = [d.solver[island * NSOLVER + it] for it in range(count)]
    return {f: [(int(getattr(r, f)) if f in INT_STATS else float(getattr(r, f))) for r in recs]
            for f in STAT_FIELDS}


def n_blocks(d):
    return max(1, min(int(d.nisland), mujoco.mjNISLAND))


def solver_info(d, cap):
    """solver_niter per island and the first `cap` (None: only the last) iteration records."""
    nb = n_blocks(d)
    niter = [int(d.solver_niter[i]) for i in range(nb)]
    if cap is None:
        last = [stats_block_last(d, i, niter[i]) for i in range(nb)]
        return niter, last
    return niter, [stats_block(d, i, min(niter[i], cap, NSOLVER)) for i in range(nb)]


def stats_block_last(d, island, niter):
    if niter == 0:
        return None
    r = d.solver[island * NSOLVER + min(niter, NSOLVER) - 1]
    return {f: (int(getattr(r, f)) if f in INT_STATS else float(getattr(r, f))) for f in STAT_FIELDS}


def dense_J(m, d):
    if d.nefc == 0:
        return []
    if mujoco.mj_isSparse(m):
        J = np.zeros((d.nefc, m.nv))
        mujoco.mju_sparse2dense(J, d.efc_J, d.efc_J_rownnz, d.efc_J_rowadr, d.efc_J_colind)
        return flat(J)
    return flat(np.asarray(d.efc_J)[:d.nefc * m.nv])


def efc(m, d, with_J):
    n = d.nefc
    out = {
        "ne": int(d.ne), "nf": int(d.nf), "nl": int(d.nl), "nefc": int(n),
        "efc_type": ints(d.efc_type[:n]), "efc_id": ints(d.efc_id[:n]),
    }
    if with_J:
        out["efc_J"] = dense_J(m, d)
    for f in ["efc_pos", "efc_margin", "efc_frictionloss", "efc_diagA", "efc_KBIP", "efc_D",
              "efc_R", "efc_vel", "efc_aref", "efc_b", "efc_force"]:
        out[f] = flat(getattr(d, f)[:n])
    out["efc_state"] = ints(d.efc_state[:n])
    return out


def warnings_of(d, acc):
    for i in range(int(mujoco.mjtWarning.mjNWARNING)):
        if d.warning[i].number:
            k = mujoco.mjtWarning(i).name
            acc[k] = acc.get(k, 0) + int(d.warning[i].number)


def alt_solve(m, d_in, solver, extra_disable, warns, tolerance=None):
    global NSOLVER
    d2 = mujoco.MjData(m)
    mujoco.mj_copyData(d2, m, d_in)
    saved = (m.opt.solver, m.opt.disableflags, m.opt.tolerance)
    m.opt.solver = solver
    m.opt.disableflags |= extra_disable
    if tolerance is not None:
        m.opt.tolerance = tolerance
    try:
        mujoco.mj_forward(m, d2)
        r = {
            "solver": int(m.opt.solver),
            "disableflags": int(m.opt.disableflags),
            "qacc": flat(d2.qacc),
            "qfrc_constraint": flat(d2.qfrc_constraint),
            "efc_force": flat(d2.efc_force[:d2.nefc]),
            "efc_state": ints(d2.efc_state[:d2.nefc]),
            "nisland": int(d2.nisland),
        }
        r["solver_niter"], r["last"] = solver_info(d2, None)
        if extra_disable:
            _, r["solver_stats"] = solver_info(d2, STATS_CAP)
        warnings_of(d2, warns)
    finally:
        m.opt.solver, m.opt.disableflags, m.opt.tolerance = saved
    return r


def generate(rel, steps, cone_name, cone, thirdparty=False):
    global NSOLVER
    if thirdparty:
        base = "thirdparty_" + rel[:-4].replace("/", "_")
        xml = "models/thirdparty/" + rel
    else:
        base = rel[:-4]
        xml = "models/constraints/" + rel
    name = f"{base}_{cone_name}"
    m = mujoco.MjModel.from_xml_path(os.path.join(REPO, xml))
    m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    m.opt.tolerance = TOLERANCE
    m.opt.cone = cone
    if not thirdparty:
        m.opt.iterations = 1000
        m.opt.ls_iterations = 100
        m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    d = mujoco.MjData(m)
    NSOLVER = len(d.solver) // mujoco.mjNISLAND
    seed = zlib.crc32(base.encode())
    rng = np.random.default_rng(seed)
    if thirdparty and m.nkey > 0:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    free_joint_velocities(m, d, rng)
    toggles = [(s, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_EQUALITY, e), v)
               for s, e, v in EQ_TOGGLES.get(base, [])]
    assert all(t[1] >= 0 for t in toggles)
    warns = {}
    states = []
    k = 0
    for target in steps:
        while k < target:
            if m.nu and k % CTRL_HOLD == 0:
                d.ctrl[:] = random_ctrl(m, rng)
            for s, e, v in toggles:
                if s == k:
                    d.eq_active[e] = v
            mujoco.mj_step(m, d)
            k += 1
        inp = {
            "time": float(d.time), "qpos": flat(d.qpos), "qvel": flat(d.qvel),
            "act": flat(d.act), "ctrl": flat(d.ctrl), "qacc_warmstart": flat(d.qacc_warmstart),
            "eq_active": ints(d.eq_active), "qfrc_applied": flat(d.qfrc_applied),
            "xfrc_applied": flat(d.xfrc_applied), "mocap_pos": flat(d.mocap_pos),
            "mocap_quat": flat(d.mocap_quat),
        }
        snap = mujoco.MjData(m)
        mujoco.mj_copyData(snap, m, d)
        mujoco.mj_forward(m, d)
        out = {"ncon": int(d.ncon), "contacts": contacts(d)}
        out.update(efc(m, d, True))
        for f in ["qfrc_smooth", "qacc_smooth", "qfrc_constraint", "qacc", "qfrc_adhesion",
                  "qfrc_passive", "qfrc_actuator", "actuator_length"]:
            out[f] = flat(getattr(d, f))
        out["actuator_moment"] = dense_moment(m, d)
        out["nisland"] = int(d.nisland)
        out["island_nv"] = ints(d.island_nv[:d.nisland])
        out["island_nefc"] = ints(d.island_nefc[:d.nisland])
        out["efc_island"] = ints(d.efc_island[:d.nefc])
        out["dof_island"] = ints(d.dof_island)
        out["solver_niter"], out["solver_stats"] = solver_info(d, STATS_CAP)
        out["solver_fwdinv"] = flat(d.solver_fwdinv)
        alt = {
            "pgs": alt_solve(m, snap, mujoco.mjtSolver.mjSOL_PGS, 0, warns),
            "cg": alt_solve(m, snap, mujoco.mjtSolver.mjSOL_CG, 0, warns),
            "newton_noisland": alt_solve(m, snap, mujoco.mjtSolver.mjSOL_NEWTON,
                                         int(mujoco.mjtDisableBit.mjDSBL_ISLAND), warns),
            # the exact minimum: Newton run to convergence (tolerance 0, one island); MuJoCo's
            # elliptic Newton at 1e-12 can stop up to ~1e-6 short of it
            "newton_exact": alt_solve(m, snap, mujoco.mjtSolver.mjSOL_NEWTON,
                                      int(mujoco.mjtDisableBit.mjDSBL_ISLAND), warns,
                                      tolerance=0.0),
        }
        states.append({"step": k, "input": inp, "output": out, "alt": alt})
    warnings_of(d, warns)
    o = m.opt
    out = {
        "model": name,
        "xml": xml,
        "cone": cone_name,
        "mujoco_version": mujoco.__version__,
        "seed": seed,
        "thirdparty": thirdparty,
        "efc_J_dropped": False,
        "sizes": {f: int(getattr(m, f)) for f in
                  ["nq", "nv", "nu", "na", "nbody", "njnt", "ngeom", "ntendon", "neq", "npair",
                   "nexclude", "ntree"]},
        "option": {
            "timestep": float(o.timestep), "impratio": float(o.impratio),
            "tolerance": float(o.tolerance), "iterations": int(o.iterations),
            "ls_iterations": int(o.ls_iterations), "ls_tolerance": float(o.ls_tolerance),
            "noslip_iterations": int(o.noslip_iterations), "solver": int(o.solver),
            "cone": int(o.cone), "jacobian": int(o.jacobian),
            "disableflags": int(o.disableflags), "enableflags": int(o.enableflags),
            "o_margin": float(o.o_margin), "o_solref": flat(o.o_solref),
            "o_solimp": flat(o.o_solimp), "o_friction": flat(o.o_friction),
            "gravity": flat(o.gravity), "integrator": int(o.integrator),
        },
        "stat_meaninertia": float(m.stat.meaninertia),
        "compiled": {f: flat(getattr(m, f)) for f in COMPILED},
        "names": {
            "body": names(m, mujoco.mjtObj.mjOBJ_BODY, m.nbody),
            "joint": names(m, mujoco.mjtObj.mjOBJ_JOINT, m.njnt),
            "geom": names(m, mujoco.mjtObj.mjOBJ_GEOM, m.ngeom),
            "tendon": names(m, mujoco.mjtObj.mjOBJ_TENDON, m.ntendon),
            "equality": names(m, mujoco.mjtObj.mjOBJ_EQUALITY, m.neq),
            "actuator": names(m, mujoco.mjtObj.mjOBJ_ACTUATOR, m.nu),
        },
        "eq_toggles": [{"step": s, "eq": int(e), "active": int(v)} for s, e, v in toggles],
        "warnings": warns,
        "states": states,
    }
    os.makedirs(OUT, exist_ok=True)
    dst = os.path.join(OUT, name + ".json")
    text = json.dumps(out, separators=(",", ":"))
    if thirdparty and len(text) > MAX_FILE_BYTES:
        out["efc_J_dropped"] = True
        for s in states:
            del s["output"]["efc_J"]
        text = json.dumps(out, separators=(",", ":"))
    with open(dst, "w") as fh:
        fh.write(text)
    size = os.path.getsize(dst)

    # summary and checks
    ok = True
    by_type = []
    seen = set()
    for s in states:
        t = s["output"]["efc_type"]
        bc = np.bincount(np.asarray(t, dtype=int), minlength=8).tolist() if t else [0] * 8
        by_type.append(bc)
        seen |= set(t)
    newton = [n for s in states for n in s["output"]["solver_niter"]]
    noisl = [n for s in states for n in s["alt"]["newton_noisland"]["solver_niter"]]
    pgs = [n for s in states for n in s["alt"]["pgs"]["solver_niter"]]
    cg = [n for s in states for n in s["alt"]["cg"]["solver_niter"]]
    print(f"{name}: nv {m.nv}, {size} bytes, nefc by type [eq,fdof,ften,ljnt,lten,c1,cpyr,cell] "
          f"per sample {by_type}")
    print(f"    niter newton(islands) {min(newton)}..{max(newton)}, newton(no island) "
          f"{min(noisl)}..{max(noisl)}, cg {min(cg)}..{max(cg)}, pgs {min(pgs)}..{max(pgs)}; "
          f"nisland {[s['output']['nisland'] for s in states]}, "
          f"ncon {[s['output']['ncon'] for s in states]}"
          + (f"  WARNINGS {warns}" if warns else ""))
    if not thirdparty:
        want, forbid = EXPECT[base]
        want = {(6 if cone_name == "pyramidal" else 7) if w == "C" else w for w in want}
        if not want <= seen or seen & forbid:
            print(f"    EXPECT FAILED: missing {sorted(want - seen)}, forbidden {sorted(seen & forbid)}")
            ok = False
    return ok and not warns and size <= MAX_FILE_BYTES


def main(argv):
    make_disable_variants()
    listed = {f for f, _ in MODELS}
    found = {f for f in os.listdir(MODELS_DIR) if f.endswith(".xml")}
    if listed != found:
        raise SystemExit(f"model list out of date: unlisted={sorted(found - listed)} "
                         f"missing={sorted(listed - found)}")
    print("mjtConstraint:", {k: int(v) for k, v in mujoco.mjtConstraint.__members__.items()})
    bad = 0
    jobs = [(f, st, False) for f, st in MODELS] + [(f, st, True) for f, st in THIRDPARTY]
    for rel, steps, tp in jobs:
        label = ("thirdparty/" if tp else "") + rel
        if argv[1:] and not any(s in label for s in argv[1:]):
            continue
        for cone_name, cone in CONES:
            if not generate(rel, steps, cone_name, cone, tp):
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
