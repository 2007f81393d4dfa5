"""Compile small MJCF snippets with MuJoCo 4.0 and store the resulting mjModel arrays in
compile_fields.json; tests/suite/mjcf_compile_fields.rs loads each snippet with diffmj and compares.

    python3 tests/golden/compile_fields.py
"""
import json
import os

import mujoco
import numpy as np

W = '<worldbody>{}</worldbody>'
SNIPPETS = {
    'inertia_primitives': W.format(''.join(
        f'<body pos="{i} 0 0"><joint/><geom type="{t}" size="{s}" {x}/></body>'
        for i, (t, s, x) in enumerate([
            ('sphere', '0.1', ''), ('capsule', '0.1 0.3', ''), ('ellipsoid', '0.1 0.2 0.3', ''),
            ('cylinder', '0.1 0.3', ''), ('box', '0.1 0.2 0.3', ''), ('sphere', '0.1', 'mass="2"'),
            ('capsule', '0.1 0.3', 'mass="3"'), ('ellipsoid', '0.3 0.2 0.1', 'density="500"'),
            ('cylinder', '0.1 0.3', 'mass="1.5"'), ('box', '0.3 0.2 0.1', 'density="10"')]))),
    'inertia_combined': W.format(
        '<body><joint/><geom type="box" size="0.3 0.2 0.1" euler="10 20 30"/>'
        '<geom type="sphere" size="0.1" pos="0.2 0.1 1"/><geom type="capsule" fromto="0 0 0 0.3 0.1 0.2" size="0.05"/></body>'
        '<body><joint/><geom type="box" size="0.3 0.2 0.1" group="4"/><geom type="sphere" size="0.1" mass="0" pos="1 0 0"/></body>'),
    'fromto': W.format(
        '<body><joint/><geom type="capsule" fromto="0 0 0 1 1 1" size="0.1"/><geom type="cylinder" fromto="1 2 3 1 2 1" size="0.1"/>'
        '<geom type="box" fromto="0 0 0 -0.2 0.1 0" size="0.02 0.03"/><geom type="ellipsoid" fromto="0 0 0 0 0.15 0.15" size="0.02 0.03"/>'
        '<geom type="capsule" fromto="0 0 0 0 0 -1" size="0.1"/><site type="capsule" fromto="0 0 0 0.1 0.1 0" size="0.01"/></body>'),
    'orientations': W.format(
        '<body quat="1 2 3 4"><joint/><geom size="0.1" axisangle="1 1 0 30"/><geom size="0.1" euler="10 20 30"/>'
        '<geom size="0.1" xyaxes="0 -1 0 0 0 1"/><geom size="0.1" zaxis="1 1 1"/><geom size="0.1" zaxis="0 0 -1"/>'
        '<site xyaxes="1 1 0 -1 1 0.5"/><camera xyaxes="0 -1 0 0 0 1"/><light dir="1 1 -1"/></body>'),
    'eulerseq': '<compiler eulerseq="ZYX"/>' + W.format(
        '<body euler="10 20 30"><joint/><geom size="0.1" euler="30 -40 50"/></body>'),
    'eulerseq_mixed': '<compiler eulerseq="xZy"/>' + W.format(
        '<body euler="10 20 30"><joint/><geom size="0.1"/></body>'),
    'radian': '<compiler angle="radian"/>' + W.format(
        '<body euler="0.1 0.2 0.3"><joint range="-1 1" ref="0.3" springref="0.2"/><geom size="0.1" axisangle="0 0 1 1.5"/></body>'),
    'defaults_childclass': '''<default><joint damping="1"/><geom size="0.1" density="100"/>
      <default class="a"><joint damping="2" axis="1 0 0"/><geom type="box" size="0.1 0.2 0.3"/>
        <default class="b"><joint stiffness="3"/><geom density="300"/>
          <default class="c"><joint armature="0.5"/><geom rgba="1 0 0 1" mass="2"/></default></default></default></default>''' + W.format(
        '<body childclass="b"><joint/><geom/><body childclass="c"><joint/><geom/><geom class="main"/>'
        '<body><joint class="a"/><geom class="a"/></body></body></body>'),
    'actuators': '''<default><motor gear="7"/><default class="a"><position kp="15" ctrlrange="-1 1"/>
      <default class="b"><motor gear="2"/></default></default><default class="v"><velocity kv="3"/>
      <default class="w"><position kp="2"/></default></default></default>''' + W.format(
        '<body><joint name="j" range="-30 60"/><geom size="0.1"/></body>') + '''<actuator>
      <motor joint="j"/><position joint="j" class="a"/><position joint="j" class="b"/><general joint="j" class="b"/>
      <velocity joint="j" class="b"/><velocity joint="j" class="w"/><general joint="j" class="w"/>
      <position joint="j" kp="3" timeconst="0.1"/><position joint="j" kp="2" inheritrange="0.5"/>
      <intvelocity joint="j" kp="4" actrange="-1 1"/><damper joint="j" kv="2" ctrlrange="0 1"/>
      <cylinder joint="j" diameter="0.1" bias="1 2 3"/><muscle joint="j" lengthrange="0.1 0.2"/>
      <general joint="j" dyntype="filter" dynprm="0.3" gaintype="affine" gainprm="1 2 3" biastype="affine" biasprm="4 5 6" actearly="true"/>
      <motor joint="j" ctrlrange="-1 1" forcerange="-2 2" gear="2 0 0 0 0 1"/></actuator>''',
    'fullinertia': W.format(
        '<body><joint/><inertial pos="1 2 3" mass="2" fullinertia="3 2.5 2 0.1 0.2 0.3"/></body>'
        '<body><joint/><inertial pos="0 0 0" mass="1" diaginertia="1 2 3" euler="10 20 30"/></body>'),
    'qpos0': W.format(
        '<body pos="1 2 3" euler="10 20 30"><freejoint/><geom size="0.1"/></body>'
        '<body><joint type="ball"/><geom size="0.1"/><body><joint type="slide" ref="0.3" springref="0.1" axis="1 1 0"/>'
        '<joint type="hinge" ref="30" springref="-20" range="-90 90"/><geom size="0.1"/></body></body>'),
    'tendon_keyframe': W.format(
        '<body><joint name="a"/><geom size="0.1"/><body><joint name="b" type="slide"/><geom size="0.1"/></body></body>'
        '<body mocap="true" pos="1 1 1"/>') + '''<tendon><fixed stiffness="2" springlength="0.3">
        <joint joint="a" coef="1"/><joint joint="b" coef="-2"/></fixed><fixed range="-1 1" springlength="0.1 0.4">
        <joint joint="b" coef="0.5"/></fixed></tendon><actuator><motor tendon="T"/></actuator>
        <keyframe><key qpos="0.1 0.2" ctrl="0"/><key time="1" mpos="1 2 3"/></keyframe>'''.replace(
            '<fixed stiffness', '<fixed name="T" stiffness'),
    'options': '<option timestep="0.01" gravity="0 0 -1" impratio="2" tolerance="1e-6" iterations="10" integrator="implicitfast">'
               '<flag contact="disable" energy="enable" warmstart="disable"/></option>' + W.format(''),
    'contact_pairs': '''<default><pair condim="4" solimp="0.5 0.6 0.01"/><default class="c"><pair friction="0.5 0.4"
      margin="0.01" gap="0.002" solreffriction="0.1 0.2"/><default class="d"><pair condim="6" solref="-100 -10"/></default></default></default>'''
      + W.format('<geom name="fl" type="plane" size="1 1 1" contype="2"/><body name="A"><freejoint/><geom name="a1" size="0.1"/>'
                 '<geom name="a2" size="0.1" pos="0.3 0 0" conaffinity="4"/><body name="A2" pos="0 1 0"><geom name="a3" size="0.1" contype="0" conaffinity="0"/></body></body>'
                 '<body name="B" pos="0 0 1"><freejoint/><geom name="b1" size="0.1"/><geom name="b2" type="box" size="0.1 0.1 0.1" pos="0.3 0 0"/></body>')
      + '''<contact><pair geom1="b2" geom2="a1" class="c"/><pair name="p2" geom1="a2" geom2="b1" condim="1" friction="0.1 0.2 0.3 0.4 0.5"/>
      <pair geom1="a1" geom2="b1" class="d" margin="0.05" gap="0.01" solref="0.03 0.9" solimp="0.8 0.85 0.002 0.4 3"/>
      <pair name="x" geom1="b1" geom2="fl"/><pair geom1="a2" geom2="a1"/>
      <exclude body1="B" body2="A"/><exclude body1="A2" body2="world"/><exclude body1="A" body2="A2"/></contact>''',
    'bounds': '<compiler boundmass="0.5" boundinertia="0.01" settotalmass="10"/>' + W.format(
        '<body><joint/><geom size="0.01"/><body><joint/><geom size="0.2 0.1 0.3" type="box"/></body></body>'),
}

FIELDS = ['nq', 'nv', 'nu', 'na', 'nbody', 'njnt', 'ngeom', 'nsite', 'ntendon', 'nwrap', 'nkey', 'nmocap', 'nM',
          'qpos0', 'qpos_spring', 'body_parentid', 'body_rootid', 'body_weldid', 'body_mocapid', 'body_dofnum',
          'body_dofadr', 'body_pos', 'body_quat', 'body_ipos', 'body_iquat', 'body_mass', 'body_inertia',
          'jnt_type', 'jnt_qposadr', 'jnt_dofadr', 'jnt_limited', 'jnt_pos', 'jnt_axis', 'jnt_stiffness',
          'jnt_range', 'dof_parentid', 'dof_Madr', 'dof_armature', 'dof_damping', 'geom_size', 'geom_pos',
          'geom_quat', 'geom_rbound', 'geom_friction', 'geom_solref', 'geom_solimp', 'site_pos', 'site_quat',
          'site_size', 'cam_pos', 'cam_quat', 'light_dir', 'tendon_adr', 'tendon_num', 'tendon_limited',
          'tendon_range', 'wrap_type', 'wrap_objid', 'wrap_prm', 'actuator_trntype', 'actuator_dyntype',
          'actuator_gaintype', 'actuator_biastype', 'actuator_trnid', 'actuator_actadr', 'actuator_actnum',
          'actuator_ctrllimited', 'actuator_forcelimited', 'actuator_actlimited', 'actuator_actearly',
          'actuator_dynprm', 'actuator_gainprm', 'actuator_biasprm', 'actuator_ctrlrange', 'actuator_forcerange',
          'actuator_actrange', 'actuator_gear', 'key_time', 'key_qpos', 'key_qvel', 'key_ctrl', 'key_mpos',
          'key_mquat', 'opt_timestep', 'opt_gravity', 'opt_impratio', 'opt_tolerance', 'opt_iterations',
          'opt_integrator', 'opt_disableflags', 'opt_enableflags', 'npair', 'nexclude', 'body_contype',
          'body_conaffinity', 'pair_geom1', 'pair_geom2', 'pair_dim', 'pair_signature', 'pair_friction',
          'pair_solref', 'pair_solreffriction', 'pair_solimp', 'pair_margin', 'pair_gap', 'exclude_signature']


def main():
    out = {}
    for name, body in SNIPPETS.items():
        xml = f'<mujoco model="{name}">{body}</mujoco>'
        try:
            m = mujoco.MjModel.from_xml_string(xml)
        except Exception as e:
            raise SystemExit(f"{name}: {e}")
        fields = {}
        for f in FIELDS:
            v = getattr(m.opt, f[4:]) if f.startswith('opt_') else getattr(m, f)
            fields[f] = np.asarray(v, dtype=float).ravel().tolist()
        out[name] = {'xml': xml, 'fields': fields}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'compile_fields.json')
    with open(path, 'w') as fh:
        json.dump(out, fh, indent=1)


if __name__ == '__main__':
    main()
