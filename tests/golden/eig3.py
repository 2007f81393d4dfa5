"""Reference eigen-decompositions of symmetric 3x3 matrices from MuJoCo 4.0, for the unit test
in src/mjcf/eig3.rs.

    python3 tests/golden/eig3.py

Writes tests/golden/eig3.json:
  * "engine": mujoco.mju_eig3 on random symmetric matrices of several families (well
    separated, two or three equal eigenvalues, nearly equal ones, diagonal, integer
    a*I + b*v*v', rank deficient, indefinite, widely scaled, and the inertia tensors of the
    multi-geom bodies of the gymnasium humanoid); each case has the matrix (row-major), the
    eigenvalues, the quaternion and the iteration count.
  * "compiler": the same kinds of matrices (only valid inertias: positive, triangle
    inequality) compiled as <inertial fullinertia=...>; eigval/quat are the resulting
    body_inertia/body_iquat, i.e. the compiler's own copy of the solver.
Numbers are stored as strings holding Python's repr, so that they parse back to the exact
same f64 (serde_json's default float parser may be off by one ulp).
Output is deterministic (fixed seed).
"""
import json
import os

import mujoco
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N_ENGINE = 1200
N_COMPILER = 400


def rand_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, q)
    return mat.reshape(3, 3)


def compose(rng, w):
    r = rand_rotation(rng)
    a = r @ np.diag(w) @ r.T
    return (a + a.T) / 2


def humanoid_inertias():
    """Full inertia (about the centre of mass) of each multi-geom body of the gymnasium
    humanoid, summed from its geoms as the compiler does with inertiafromgeom."""
    path = os.path.join(HERE, '..', '..', 'models', 'thirdparty', 'gymnasium', 'humanoid.xml')
    m = mujoco.MjModel.from_xml_path(path)
    out = []
    for b in range(1, m.nbody):
        geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] == b]
        if len(geoms) < 2:
            continue
        # mass and diagonal inertia of each geom alone, compiled as a single-geom body
        parts = []
        for g in geoms:
            sub = mujoco.MjSpec()
            body = sub.worldbody.add_body()
            body.add_freejoint()
            body.add_geom(type=mujoco.mjtGeom(m.geom_type[g]), size=m.geom_size[g],
                          pos=m.geom_pos[g], quat=m.geom_quat[g])
            sm = sub.compile()
            rot = np.zeros(9)
            mujoco.mju_quat2Mat(rot, sm.body_iquat[1])
            rot = rot.reshape(3, 3)
            parts.append((sm.body_mass[1], sm.body_ipos[1].copy(),
                          rot @ np.diag(sm.body_inertia[1]) @ rot.T))
        mass = sum(p[0] for p in parts)
        com = sum(p[0] * p[1] for p in parts) / mass
        full = np.zeros((3, 3))
        for mm, pos, inert in parts:
            d = pos - com
            full += inert + mm * (d @ d * np.eye(3) - np.outer(d, d))
        out.append(full)
    return out


def families(rng, valid_inertia):
    """Yield (kind, 3x3 matrix) forever, cycling through the families."""
    def lu(a, b):
        return float(np.exp(rng.uniform(np.log(a), np.log(b))))

    def spectrum():
        while True:
            w = [lu(0.1, 10) for _ in range(3)]
            if not valid_inertia or max(w) <= sum(w) - max(w):
                return w

    kinds = ['separated', 'pair', 'triple', 'near_pair', 'diagonal', 'int_rank1',
             'single_offdiag', 'scaled']
    if not valid_inertia:
        kinds += ['rank2', 'indefinite']
    i = 0
    while True:
        kind = kinds[i % len(kinds)]
        i += 1
        if kind == 'separated':
            a = compose(rng, spectrum())
        elif kind == 'pair':
            x, y = lu(0.1, 10), lu(0.1, 10)
            if valid_inertia:
                y = min(y, 2 * x)
            w = [x, x, y]
            rng.shuffle(w)
            a = compose(rng, w)
        elif kind == 'triple':
            a = compose(rng, [lu(0.1, 10)] * 3)
        elif kind == 'near_pair':
            x = lu(0.1, 10)
            w = [x, x * (1 + 10 ** -rng.uniform(3, 15)), x * rng.uniform(0.6, 1.8)]
            a = compose(rng, w)
        elif kind == 'diagonal':
            a = np.diag(rng.integers(1, 4, 3).astype(float))
        elif kind == 'int_rank1':
            # a*I + b*v*v': eigenvalues a + b|v|^2, a, a, entries exact
            while True:
                v = rng.integers(-2, 3, 3).astype(float)
                x, y = float(rng.integers(1, 5)), 0.5 * float(rng.integers(1, 5))
                if v.any() and (not valid_inertia or y * (v @ v) <= x):
                    break
            a = x * np.eye(3) + y * np.outer(v, v)
        elif kind == 'single_offdiag':
            a = np.diag([lu(1, 2) for _ in range(3)])
            i0, j0 = [(0, 1), (0, 2), (1, 2)][rng.integers(3)]
            a[i0, j0] = a[j0, i0] = rng.uniform(-0.3, 0.3)
        elif kind == 'scaled':
            a = compose(rng, spectrum()) * 10.0 ** rng.uniform(-8, 6)
        elif kind == 'rank2':
            a = compose(rng, [lu(0.1, 10), lu(0.1, 10), 0.0])
        else:  # indefinite
            a = compose(rng, rng.uniform(-10, 10, 3))
        yield kind, a


def s(x):
    return [repr(float(v)) for v in np.ravel(x)]


def engine_cases(rng):
    cases = []
    mats = [('humanoid', a) for a in humanoid_inertias()]
    gen = families(rng, valid_inertia=False)
    while len(mats) < N_ENGINE:
        mats.append(next(gen))
    for kind, a in mats:
        val, vec, quat = np.zeros(3), np.zeros(9), np.zeros(4)
        it = mujoco.mju_eig3(val, vec, quat, np.ravel(a).astype(float))
        cases.append({'kind': kind, 'mat': s(a), 'eigval': s(val), 'quat': s(quat),
                      'iter': int(it)})
    return cases


def compiler_cases(rng):
    mats = [('humanoid', a) for a in humanoid_inertias()]
    gen = families(rng, valid_inertia=True)
    while len(mats) < N_COMPILER:
        kind, a = next(gen)
        w = np.linalg.eigvalsh(a)
        if w[0] + w[1] >= w[2] * (1 + 1e-9):
            mats.append((kind, a))
    bodies = ''.join(
        '<body><joint/><inertial pos="0 0 0" mass="1" fullinertia="'
        + ' '.join(s([a[0, 0], a[1, 1], a[2, 2], a[0, 1], a[0, 2], a[1, 2]])) + '"/></body>'
        for _, a in mats)
    m = mujoco.MjModel.from_xml_string(f'<mujoco><worldbody>{bodies}</worldbody></mujoco>')
    cases = []
    for i, (kind, a) in enumerate(mats):
        # the compiler reads only the upper triangle
        full = np.triu(a) + np.triu(a, 1).T
        cases.append({'kind': kind, 'mat': s(full), 'eigval': s(m.body_inertia[i + 1]),
                      'quat': s(m.body_iquat[i + 1])})
    return cases


def main():
    rng = np.random.default_rng(20240401)
    out = {'mujoco_version': mujoco.__version__, 'engine': engine_cases(rng),
           'compiler': compiler_cases(rng)}
    with open(os.path.join(HERE, 'eig3.json'), 'w') as f:
        json.dump(out, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
