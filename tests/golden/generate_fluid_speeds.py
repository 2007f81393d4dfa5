#!/usr/bin/env python3
"""Golden data for the ellipsoid fluid model at small speeds (MuJoCo 4.0): a leaf-sized
ellipsoid (the geom of MuJoCo's published `model/replicate/leaves.xml`) in air, at linear
speeds from 1 m/s down to and below MINVAL (1e-15) along a fixed oblique direction, with and
without a small angular velocity; and a 20-step implicitfast rollout from rest of two such
leaves on one free body (leaves.xml's body), whose second step MuJoCo's lift and drag set.

Usage:  python3 tests/golden/generate_fluid_speeds.py

Writes tests/golden/fluid/speeds.json: {mujoco_version, xml, states: [{qvel, qfrc_fluid}],
rollout: {xml, steps, qpos, qvel (per step, after the step)}}.
"""
import json
import os

import mujoco
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

XML = """<mujoco><option density="1.225" viscosity="1.8e-5" timestep="0.002"/>
<worldbody><body pos="0 0 1" euler="10 20 30"><freejoint/>
<geom type="ellipsoid" size=".025 .01 .001" mass="1e-4" fluidshape="ellipsoid"/>
</body></worldbody></mujoco>"""

ROLLOUT_XML = """<mujoco><option density="1.225" viscosity="1.8e-5" timestep="0.002"
integrator="implicitfast"/>
<default><geom type="ellipsoid" size=".025 .01 .001" mass="1e-4" fluidshape="ellipsoid"/></default>
<worldbody><body pos="0 0 1" euler="5 -8 12"><freejoint/>
<geom pos=".025 0 0" euler="10 0 0"/><geom pos="-.025 0 0" euler="-14 0 0" mass="1.2e-4"/>
</body></worldbody></mujoco>"""

SPEEDS = [1.0, 2e-2, 1e-4, 1e-8, 1e-12, 1e-14, 2e-15, 1e-15, 5e-16, 0.0]


def main():
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    direction = np.array([0.3, -0.5, -0.8]) / np.linalg.norm([0.3, -0.5, -0.8])
    states = []
    for w in [0.0, 1e-3]:
        for s in SPEEDS:
            mujoco.mj_resetData(m, d)
            d.qvel[:3] = s * direction
            d.qvel[3:] = w * np.array([0.2, 0.7, -0.4])
            mujoco.mj_forward(m, d)
            states.append({"qvel": d.qvel.tolist(), "qfrc_fluid": d.qfrc_fluid.tolist()})
    m2 = mujoco.MjModel.from_xml_string(ROLLOUT_XML)
    d2 = mujoco.MjData(m2)
    qpos, qvel = [], []
    for _ in range(20):
        mujoco.mj_step(m2, d2)
        qpos.append(d2.qpos.tolist())
        qvel.append(d2.qvel.tolist())
    out = {"mujoco_version": mujoco.__version__, "xml": XML, "states": states,
           "rollout": {"xml": ROLLOUT_XML, "steps": 20, "qpos": qpos, "qvel": qvel}}
    path = os.path.join(ROOT, "tests", "golden", "fluid", "speeds.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
