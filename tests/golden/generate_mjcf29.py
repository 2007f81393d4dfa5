#!/usr/bin/env python3
"""Golden data for issue 29 (MJCF breadth: replicate, frame, attach, actuatorgroupdisable) from
MuJoCo 4.0.

Usage: python3 tests/golden/generate_mjcf29.py [substring ...]

For every model of MODELS this writes
  * tests/golden/<golden name>.json in generate.py's format (compiled fields, random states,
    rollouts; checked by tests/suite/mjcf_golden.rs and tests/suite/conformance.rs), and
  * tests/golden/mjcf29/<golden name>.json: the names of every object kind (bodies, joints,
    geoms, sites, cameras, lights, tendons, actuators, sensors, equalities, pairs, excludes) in
    compiled order and the integer fields that say what refers to what (EXTRA_FIELDS), checked by
    tests/suite/mjcf29.rs, and for models with sensors the `sensordata` MuJoCo computes at each state
    of the generate.py file.
It also writes tests/golden/mjcf29/orientation_runs.json (short runs of orientation actuators
from set states, see RUNS) and tests/golden/mjcf29/decisions.json: MuJoCo's accept/refuse decision (and sizes
when accepted, its message when refused) for the small MJCF texts of DECISIONS (malformed
replicate attributes and placement rules).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mujoco  # noqa: E402

import generate as G  # noqa: E402

# (path under models/, third party: constraints disabled as generate.py does for those,
#  full: also the generate.py golden file (states, rollouts); False for models too large for its
#  1.5 MB budget, which get names and reference fields only)
MODELS = [
    ("mjcf29/replicate_tree.xml", False, True),
    ("mjcf29/replicate_nested.xml", False, True),
    ("mjcf29/frames.xml", False, True),
    ("mjcf29/replicate_refs.xml", False, True),
    ("mjcf29/groupdisable.xml", False, True),
    ("mjcf29/alignfree.xml", False, True),
    ("mjcf29/springdamper.xml", False, True),
    ("mjcf29/pid_servo.xml", False, True),
    ("mjcf29/pid_states.xml", False, True),
    ("mjcf29/pid_rotational.xml", False, True),
    ("mjcf29/dcmotor.xml", False, True),
    ("mjcf29/dcmotor_nested.xml", False, True),
    ("mjcf29/orientation.xml", False, True),
    ("mjcf29/orientation_nested.xml", False, True),
    # the attach models hold limits, equalities and pairs: constraints disabled as for
    # third-party models (their compiled fields are still compared)
    ("mjcf29/attach_body.xml", True, True),
    ("mjcf29/attach_frame.xml", True, True),
    ("mjcf29/attach_frames.xml", True, True),
    ("mjcf29/attach_merge.xml", False, True),
    ("mjcf29/attach_nested.xml", True, True),
    # MuJoCo's published models that use replicate and need no asset file
    ("thirdparty/mujoco/replicate/bowl.xml", True, True),
    ("thirdparty/mujoco/replicate/container.xml", True, True),
    ("thirdparty/mujoco/replicate/cylinder.xml", True, True),
    ("thirdparty/mujoco/replicate/helix.xml", True, True),
    ("thirdparty/mujoco/replicate/newton_cradle.xml", True, True),
    ("thirdparty/mujoco/testdata/fromto_body_body.xml", True, True),
    ("thirdparty/mujoco/replicate/stonehenge.xml", True, False),
    ("thirdparty/mujoco/replicate/tendon.xml", True, False),
    ("thirdparty/mujoco/replicate/leaves.xml", True, False),
    ("thirdparty/mujoco/replicate/active_adhesion.xml", True, False),
    # MuJoCo's models that use <attach> and need no mesh file
    ("thirdparty/mujoco/attach/ten_armature_1_compare.xml", True, True),
    ("thirdparty/mujoco/attach/contact_subtree.xml", True, True),
    ("thirdparty/mujoco/attach/22_humanoids.xml", True, False),
    ("thirdparty/mujoco/testdata/inertia.xml", True, False),
]

EXTRA_FIELDS = [
    "body_parentid", "jnt_bodyid", "geom_bodyid", "site_bodyid", "cam_bodyid",
    "geom_size", "geom_pos", "geom_quat", "site_pos", "site_quat", "cam_pos", "cam_quat",
    "body_pos", "body_quat", "body_ipos", "body_iquat", "qpos0", "qpos_spring", "key_qpos",
    "light_bodyid", "light_pos", "light_dir",
    "sensor_type", "sensor_objtype", "sensor_objid", "sensor_reftype", "sensor_refid",
    "actuator_trntype", "actuator_trnid", "actuator_group", "wrap_type", "wrap_objid",
    "actuator_outadr", "actuator_outnum",
    "eq_type", "eq_obj1id", "eq_obj2id", "pair_geom1", "pair_geom2", "exclude_signature",
]

O = mujoco.mjtObj
KINDS = [
    ("body", O.mjOBJ_BODY, "nbody"), ("joint", O.mjOBJ_JOINT, "njnt"),
    ("geom", O.mjOBJ_GEOM, "ngeom"), ("site", O.mjOBJ_SITE, "nsite"),
    ("camera", O.mjOBJ_CAMERA, "ncam"), ("light", O.mjOBJ_LIGHT, "nlight"),
    ("tendon", O.mjOBJ_TENDON, "ntendon"), ("actuator", O.mjOBJ_ACTUATOR, "nactuator"),
    ("sensor", O.mjOBJ_SENSOR, "nsensor"), ("equality", O.mjOBJ_EQUALITY, "neq"),
    ("pair", O.mjOBJ_PAIR, "npair"), ("exclude", O.mjOBJ_EXCLUDE, "nexclude"),
]

R = '<mujoco><worldbody>%s</worldbody></mujoco>'
DECISIONS = {
    "count_zero": R % '<replicate count="0"><geom size=".1"/></replicate>',
    "count_negative": R % '<replicate count="-3"><geom size=".1"/></replicate>',
    "count_fraction": R % '<replicate count="1.5"><geom size=".1"/></replicate>',
    "count_exponent": R % '<replicate count="1e3"><geom size=".1"/></replicate>',
    "count_word": R % '<replicate count="abc"><geom size=".1"/></replicate>',
    "count_two": R % '<replicate count="2 3"><geom size=".1"/></replicate>',
    "count_empty": R % '<replicate count=""><geom size=".1"/></replicate>',
    "count_missing": R % '<replicate><geom size=".1"/></replicate>',
    "count_overflow": R % '<replicate count="99999999999"><geom size=".1"/></replicate>',
    "count_plus": R % '<replicate count="+3"><geom size=".1"/></replicate>',
    "count_padded": R % '<replicate count=" 03 "><geom size=".1"/></replicate>',
    "count_large": R % '<replicate count="2000"><geom size=".1"/></replicate>',
    "offset_short": R % '<replicate count="2" offset="1 0"><geom size=".1"/></replicate>',
    "euler_long": R % '<replicate count="2" euler="1 0 0 0"><geom size=".1"/></replicate>',
    "unknown_attribute": R % '<replicate count="2" foo="1" name="r"><geom size=".1"/></replicate>',
    "unknown_childclass": R % '<replicate count="2" childclass="nope"><geom size=".1"/></replicate>',
    "joint_child": R % '<body><geom size=".1"/><replicate count="2"><joint/></replicate></body>',
    "freejoint_in_frame": R % '<replicate count="2"><frame><freejoint/></frame></replicate>',
    "free_body": R % '<replicate count="2" offset="1 0 0"><body><freejoint/><geom size=".1"/></body></replicate>',
    "repeated_name": R % '<replicate count="2"><geom name="g" size=".1"/></replicate><geom name="g1" size=".1"/>',
    "camera_target_inside": R % '<replicate count="2"><body name="b"><joint/><geom size=".1"/><camera mode="targetbody" target="b"/></body></replicate>',
    "camera_target_count0": R % '<replicate count="0"><body name="b"><camera mode="targetbody" target="nowhere"/></body></replicate>',
    "inertial_dropped": R % '<body><joint/><geom size=".1"/><replicate count="2"><inertial pos="0 0 0" mass="0" diaginertia="0 0 0"/></replicate></body>',
    "nested_in_body_frame": R % '<body><frame pos="1 0 0"><replicate count="2" offset="0 1 0"><replicate count="2" offset="0 0 1"><geom size=".1"/></replicate></replicate></frame><geom size=".1"/></body>',
    "sensor_dropped": '<mujoco><worldbody><replicate count="0"><site name="s"/></replicate></worldbody><sensor><framepos objtype="site" objname="s"/></sensor></mujoco>',
    "referenced_before_defined": '<mujoco><worldbody><replicate count="2"><body name="b"><joint name="j"/><geom size=".1"/></body></replicate><body name="c"><joint name="k"/><geom size=".1"/></body></worldbody><tendon><fixed><joint joint="j" coef="1"/><joint joint="k" coef="1"/></fixed></tendon></mujoco>',
    "sensor_ref_after": '<mujoco><worldbody><replicate count="2"><site name="s"/></replicate><body name="late"/></worldbody><sensor><framepos objtype="site" objname="s" reftype="body" refname="late"/></sensor></mujoco>',
    "sensor_ref_before": '<mujoco><worldbody><body name="early"/><replicate count="2"><site name="s"/></replicate></worldbody><sensor><framepos objtype="site" objname="s" reftype="body" refname="early"/></sensor></mujoco>',
    "equality_outside": '<mujoco><worldbody><body name="a"><joint name="ja"/><geom size=".1"/></body><replicate count="2"><body><joint name="j"/><geom size=".1"/></body></replicate></worldbody><equality><joint joint1="j" joint2="ja"/></equality></mujoco>',
    "exclude_fallback": '<mujoco><worldbody><body name="a"><joint/><geom size=".1"/></body><replicate count="3"><body name="b"><joint/><geom size=".1"/></body></replicate></worldbody><contact><exclude body1="a" body2="b"/></contact></mujoco>',
    "clock_copies": '<mujoco><worldbody><replicate count="4"><geom size=".1"/></replicate></worldbody><sensor><clock/></sensor></mujoco>',
    "frame_repeated": R % '<frame name="f"/><body><frame name="f"/></body>',
    "frame_replicated_collision": R % '<replicate count="2"><frame name="f"/></replicate><frame name="f1"/>',
    "frame_replicated_collision_before": R % '<frame name="f1"/><replicate count="2"><frame name="f"/></replicate>',
    "frame_same_name_as_body": R % '<frame name="f"/><body name="f"/>',
    "frame_unknown_attribute": R % '<frame foo="1" mocap="true"/>',
    "frame_class_unknown": R % '<frame class="nope"/>',
    "frame_joint_in_world": R % '<frame><joint/></frame>',
    "frame_freejoint_in_body": R % '<body><geom size=".1"/><frame pos="1 0 0"><freejoint/></frame></body>',
    "frame_two_inertials": R % '<body><frame pos="1 0 0"><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></frame><frame><inertial pos="0 0 0" mass="2" diaginertia="1 1 1"/></frame><joint/></body>',
    "replicate_class_unknown": R % '<replicate count="2" class="nope"><geom size=".1"/></replicate>',
    "align_auto_no_compiler": R % '<body><freejoint align="auto"/><geom size=".1" pos="1 0 0"/></body>',
    "align_bad_keyword": R % '<body><freejoint align="yes"/><geom size=".1"/></body>',
    "align_on_joint": R % '<body><joint type="free" align="true"/><geom size=".1"/></body>',
    "alignfree_bad": '<mujoco><compiler alignfree="1"/></mujoco>',
    "groups_zero": '<mujoco><option actuatorgroupdisable="0"/></mujoco>',
    "groups_all": '<mujoco><option actuatorgroupdisable="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30"/></mujoco>',
    "groups_repeat_plus": '<mujoco><option actuatorgroupdisable=" 3 +1 1 "/></mujoco>',
    "groups_empty": '<mujoco><option actuatorgroupdisable=""/></mujoco>',
    "groups_negative": '<mujoco><option actuatorgroupdisable="-1"/></mujoco>',
    "groups_31": '<mujoco><option actuatorgroupdisable="31"/></mujoco>',
    "groups_fraction": '<mujoco><option actuatorgroupdisable="1.5"/></mujoco>',
    "groups_hex": '<mujoco><option actuatorgroupdisable="0x2"/></mujoco>',
    "groups_comma": '<mujoco><option actuatorgroupdisable="2,3"/></mujoco>',
    "groups_overflow": '<mujoco><option actuatorgroupdisable="99999999999"/></mujoco>',
    "groups_32_values": '<mujoco><option actuatorgroupdisable="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 1"/></mujoco>',
}

# <pid> (MuJoCo 4.0): what the reader and the compiler refuse, and the control counts of what
# they accept
P = ('<mujoco><worldbody><body><joint name="j" range="-1 1" limited="true"/><geom size=".1"/>'
     '</body></worldbody><default>%s</default><actuator>%s</actuator></mujoco>')
DECISIONS.update({
    "pid_plain": P % ('', '<pid joint="j"/>'),
    "pid_ki_slew": P % ('', '<pid joint="j" ki="1" imax="2" slewmax="3"/>'),
    "pid_all_inputs": P % ('', '<pid joint="j" input="pos vel ff" ki="1"/><motor joint="j"/>'),
    "pid_empty_input": P % ('', '<pid joint="j" input=""/>'),
    "pid_input_order": P % ('', '<pid joint="j" input="vel pos"/>'),
    "pid_input_repeat": P % ('', '<pid joint="j" input="pos pos"/>'),
    "pid_input_none": P % ('', '<pid joint="j" input="none"/>'),
    "pid_input_voltage": P % ('', '<pid joint="j" input="voltage"/>'),
    "pid_input_unknown": P % ('', '<pid joint="j" input="position"/>'),
    "pid_ki_without_pos": P % ('', '<pid joint="j" input="vel" ki="1"/>'),
    "pid_slew_without_pos": P % ('', '<pid joint="j" input="vel ff" slewmax="1"/>'),
    "pid_ki_negative": P % ('', '<pid joint="j" ki="-1"/>'),
    "pid_imax_negative": P % ('', '<pid joint="j" ki="1" imax="-1"/>'),
    "pid_imax_negative_no_ki": P % ('', '<pid joint="j" imax="-1"/>'),
    "pid_slewmax_negative": P % ('', '<pid joint="j" slewmax="-1"/>'),
    "pid_kv_negative": P % ('', '<pid joint="j" kv="-1"/>'),
    "pid_kp_negative": P % ('', '<pid joint="j" kp="-1"/>'),
    "pid_kv_dampratio": P % ('', '<pid joint="j" kv="1" dampratio="1"/>'),
    "pid_posrange_inheritrange": P % ('', '<pid joint="j" posrange="-1 1" inheritrange="1"/>'),
    "pid_ctrlrange_inheritrange": P % ('', '<pid joint="j" ctrlrange="-1 1" inheritrange="1"/>'),
    "pid_bad_posrange": P % ('', '<pid joint="j" posrange="1 -1" ctrllimited="true"/>'),
    "pid_reversed_velrange": P % ('', '<pid joint="j" velrange="1 -1"/>'),
    "pid_actdim": P % ('', '<pid joint="j" actdim="1" ki="1"/>'),
    "pid_delay": P % ('', '<pid joint="j" nsample="3" delay="0.004" input="pos"/>'),
    "pid_class_ki": P % ('<pid ki="1" input="pos ff"/>', '<pid joint="j" kp="3"/>'),
    "pid_class_negative_ki": P % ('<pid ki="-2"/>', '<pid joint="j"/>'),
    "general_pid": P % ('', '<general joint="j" gaintype="pid" dyntype="pid" biastype="affine" '
                            'gainprm="1" dynprm="0 2" input="pos ff"/>'),
    "general_pid_ki_without_dyn": P % ('', '<general joint="j" gaintype="pid" biastype="affine"/>'),
    "general_pid_no_bias": P % ('', '<general joint="j" gaintype="pid" dyntype="pid" '
                                    'gainprm="1"/>'),
    "general_pid_integrator": P % ('', '<general joint="j" gaintype="pid" dyntype="integrator" '
                                       'biastype="affine" gainprm="0"/>'),
    "general_pid_dyn_fixed_gain": P % ('', '<general joint="j" dyntype="pid"/>'),
    "general_pid_actdim_mismatch": P % ('', '<general joint="j" gaintype="pid" dyntype="pid" '
                                            'biastype="affine" gainprm="1" actdim="2"/>'),
    "general_pid_no_states": P % ('', '<general joint="j" gaintype="pid" dyntype="pid" '
                                      'biastype="affine" gainprm="0" dynprm="0 0"/>'),
    "general_pid_slew_negative": P % ('', '<general joint="j" gaintype="pid" dyntype="pid" '
                                          'biastype="affine" gainprm="1" dynprm="0 -1"/>'),
    "general_input_pos": P % ('', '<general joint="j" input="pos"/>'),
    "general_input_quat": P % ('', '<general joint="j" input="quat"/>'),
    "general_input_two": P % ('', '<general joint="j" input="pos vel"/>'),
    "general_input_ff": P % ('', '<general joint="j" input="ff"/>'),
    "general_input_voltage": P % ('', '<general joint="j" input="voltage"/>'),
    "general_input_muscle": P % ('', '<general joint="j" gaintype="muscle" biastype="muscle" '
                                     'dyntype="muscle" gainprm="0.75 1.05 -1 200 0.5 1.6 1.5 1.3 1.2"'
                                     ' input="pos"/>'),
    "pid_body": ('<mujoco><worldbody><body name="b"><joint/><geom size=".1"/></body></worldbody>'
                 '<actuator><general body="b" gaintype="pid" biastype="affine" gainprm="0"/>'
                 '</actuator></mujoco>'),
})

# <dcmotor> (MuJoCo 4.0): what the reader and the compiler refuse, the parameters they derive
# (nominal point, thermal time constant, inheritance) and the control and state counts
DM = '<dcmotor joint="j" motorconst="0.1" resistance="1" %s/>'
DECISIONS.update({
    "dcmotor_plain": P % ('', '<dcmotor joint="j"/>'),
    "dcmotor_no_resistance": P % ('', '<dcmotor joint="j" motorconst="0.1"/>'),
    "dcmotor_no_k": P % ('', '<dcmotor joint="j" resistance="1"/>'),
    "dcmotor_ok": P % ('', DM % ''),
    "dcmotor_negative_k": P % ('', '<dcmotor joint="j" motorconst="-0.1" resistance="1"/>'),
    "dcmotor_negative_ke": P % ('', '<dcmotor joint="j" motorconst="0.1 -0.1" resistance="1"/>'),
    "dcmotor_negative_r": P % ('', '<dcmotor joint="j" motorconst="0.1" resistance="-1"/>'),
    "dcmotor_nominal": P % ('', '<dcmotor joint="j" nominal="12 1 100"/>'),
    "dcmotor_nominal_damped": P % ('', '<dcmotor joint="j" nominal="12 1 100" damping="0.001"/>'),
    "dcmotor_nominal_negative": P % ('', '<dcmotor joint="j" nominal="-12 1 100"/>'),
    "dcmotor_nominal_no_torque": P % ('', '<dcmotor joint="j" nominal="12 0 100"/>'),
    "dcmotor_inductance_negative": P % ('', DM % 'inductance="-1"'),
    "dcmotor_timeconst_negative": P % ('', DM % 'inductance="0 -1"'),
    "dcmotor_inductance": P % ('', DM % 'inductance="0.01 0.3"'),
    "dcmotor_thermal_no_capacitance": P % ('', DM % 'thermal="1"'),
    "dcmotor_thermal_no_resistance": P % ('', DM % 'thermal="0 0 3"'),
    "dcmotor_thermal_negative": P % ('', DM % 'thermal="-2 2"'),
    "dcmotor_thermal_timeconst": P % ('', DM % 'thermal="2 2 3"'),
    "dcmotor_saturation_current": P % ('', DM % 'saturation="0 2"'),
    "dcmotor_saturation_negative": P % ('', DM % 'saturation="-1 -2 -3"'),
    "dcmotor_forcerange": P % ('', DM % 'forcerange="-1 1"'),
    "dcmotor_actearly": P % ('', DM % 'actearly="false"'),
    "dcmotor_input_none": P % ('', DM % 'input="none"'),
    "dcmotor_input_all": P % ('', DM % 'input="pos vel ff voltage" controller="1 1"'),
    "dcmotor_input_order": P % ('', DM % 'input="voltage pos"'),
    "dcmotor_input_repeat": P % ('', DM % 'input="pos pos"'),
    "dcmotor_input_pressure": P % ('', DM % 'input="pos pressure"'),
    "dcmotor_input_quat": P % ('', DM % 'input="quat"'),
    "dcmotor_input_empty": P % ('', DM % 'input=""'),
    "dcmotor_gains_without_input": P % ('', DM % 'controller="1"'),
    "dcmotor_ki_without_pos": P % ('', DM % 'input="vel" controller="1 1"'),
    "dcmotor_slew_without_input": P % ('', DM % 'controller="0 0 0 1"'),
    "dcmotor_slew_negative": P % ('', DM % 'input="pos" controller="0 0 0 -1"'),
    "dcmotor_imax_ki_negative": P % ('', DM % 'input="pos" controller="0 -1 0 0 -1"'),
    "dcmotor_lugre_negative": P % ('', DM % 'lugre="-1 1"'),
    "dcmotor_lugre": P % ('', DM % 'lugre="1 2 3 4 5" thermal="1 1" controller="1 1 0 1" '
                               'input="pos" inductance="0.1"'),
    "dcmotor_ctrlrange_bad": P % ('', DM % 'ctrlrange="1 -1"'),
    "dcmotor_ctrlrange_multi": P % ('', DM % 'input="pos vel" ctrlrange="-1 1"'),
    "dcmotor_default_empty": P % ('<dcmotor/>', '<motor joint="j"/>'),
    "dcmotor_class": P % ('<default class="c"><dcmotor motorconst="0.1" resistance="2" '
                          'inductance="0.01"/></default>', '<dcmotor class="c" joint="j"/>'),
    "dcmotor_class_thermal": P % ('<default class="c"><dcmotor motorconst="0.1" resistance="2" '
                                  'inductance="0.01"/></default>',
                                  '<dcmotor class="c" joint="j" thermal="1 1"/>'),
    "dcmotor_class_position_child": P % ('<default class="c"><dcmotor motorconst="0.1" '
                                         'resistance="1" controller="1 2 3 4 5 6" input="pos" '
                                         'lugre="1 2 3 4 5"/><default class="d"><position/>'
                                         '</default></default>', '<dcmotor class="d" joint="j"/>'),
    "dcmotor_body": ('<mujoco><worldbody><body name="b"><joint/><geom size=".1"/></body>'
                     '</worldbody><actuator><dcmotor body="b" motorconst="0.1" resistance="1"/>'
                     '</actuator></mujoco>'),
    "dcmotor_nsample": P % ('', DM % 'nsample="3" delay="0.002"'),
})

# <orientation> (MuJoCo 4.0): what the reader and the compiler refuse, and the sizes (nu, na,
# nactuator, nout) of what they accept; what MuJoCo accepts and diffmj refuses as unsupported
# (reflected damping, states without dynamics, a control history) is in tests/suite/mjcf29.rs
Q = ('<mujoco><compiler autolimits="true"/><default>%s</default><worldbody>'
     '<site name="ref" pos="0 0 1"/><body name="a" pos="0 0 1"><joint name="b" type="ball"/>'
     '<geom size=".1"/><site name="tip" pos="0 0 -.3"/><body pos="0 0 -1"><joint name="j"/>'
     '<geom size=".1"/></body></body></worldbody><tendon><fixed name="t"><joint joint="j" '
     'coef="1"/></fixed></tendon><actuator>%s</actuator></mujoco>')
S3 = 'gaintype="so3" biastype="so3" gainprm="2" biasprm="0 -2 -1"'
DECISIONS.update({
    "orientation_plain": Q % ('', '<orientation joint="b"/>'),
    "orientation_quat": Q % ('', '<orientation joint="b" input="quat" kp="2" kv="1"/>'),
    "orientation_input_pos": Q % ('', '<orientation joint="b" input="pos"/>'),
    "orientation_input_unknown": Q % ('', '<orientation joint="b" input="foo"/>'),
    "orientation_site": Q % ('', '<orientation site="tip" refsite="ref" dampratio="1"/>'),
    "orientation_site_no_ref": Q % ('', '<orientation site="tip"/>'),
    "orientation_hinge": Q % ('', '<orientation joint="j"/>'),
    "orientation_tendon": Q % ('', '<orientation tendon="t"/>'),
    "orientation_gear": Q % ('', '<orientation joint="b" gear="2 0 0"/>'),
    "orientation_forcerange": Q % ('', '<orientation joint="b" forcerange="0 2"/>'),
    "orientation_forcerange_negative": Q % ('', '<orientation joint="b" forcerange="-1 2"/>'),
    "orientation_forcerange_zero": Q % ('', '<orientation joint="b" forcerange="0 0" '
                                            'forcelimited="true"/>'),
    "orientation_ctrlrange": Q % ('', '<orientation joint="b" ctrlrange="-1 2"/>'),
    "orientation_kv_dampratio": Q % ('', '<orientation joint="b" kv="1" dampratio="1"/>'),
    "orientation_kp_negative": Q % ('', '<orientation joint="b" kp="-1"/>'),
    "orientation_kv_negative": Q % ('', '<orientation joint="b" kv="-1"/>'),
    "orientation_dampratio_negative": Q % ('', '<orientation joint="b" dampratio="-1"/>'),
    "orientation_armature": Q % ('', '<orientation joint="b" armature="1"/>'),
    "orientation_timeconst": Q % ('', '<orientation joint="b" timeconst="1"/>'),
    "orientation_class": Q % ('<default class="c"><orientation kp="5" kv="1.5" ctrlrange="-1 1" '
                              'forcerange="0 3"/></default>',
                              '<orientation joint="b" class="c"/>'),
    "orientation_class_quat": Q % ('<default class="c"><orientation input="quat"/></default>',
                                   '<orientation joint="b" class="c"/><position joint="j" '
                                   'class="c"/>'),
    "general_so3": Q % ('', '<general joint="b" %s/>' % S3),
    "general_so3_gain_only": Q % ('', '<general joint="b" gaintype="so3"/>'),
    "general_so3_bias_only": Q % ('', '<general joint="b" biastype="so3"/>'),
    "general_so3_kp_mismatch": Q % ('', '<general joint="b" gaintype="so3" biastype="so3"/>'),
    "general_so3_filter": Q % ('', '<general joint="b" %s dyntype="filter"/>' % S3),
    "general_so3_integrator": Q % ('', '<general joint="b" %s dyntype="integrator"/>' % S3),
    "general_so3_integrator_actdim1": Q % ('', '<general joint="b" %s dyntype="integrator" '
                                               'actdim="1"/>' % S3),
    "general_so3_integrator_quat": Q % ('', '<general joint="b" %s dyntype="integrator" '
                                            'input="quat"/>' % S3),
    "general_so3_input_none": Q % ('', '<general joint="b" %s input="none"/>' % S3),
    "general_so3_input_two": Q % ('', '<general joint="b" %s input="pos vel"/>' % S3),
    "general_so3_jointinparent": Q % ('', '<general jointinparent="b" %s/>' % S3),
    "general_so3_body": Q % ('', '<general body="a" %s/>' % S3),
    "general_so3_site_no_ref": Q % ('', '<general site="tip" %s/>' % S3),
})

# <attach> texts: they read the models of models/mjcf29/ by paths relative to the repository's
# root, which is the working directory of both the decisions below and the Rust tests
A = ('<asset><model name="arm" file="models/mjcf29/attach_arm.xml"/>'
     '<model name="toy" file="models/mjcf29/attach_toy.xml"/></asset>')


def C(policy, head):
    """A world body attaching attach_settings.xml's pendulum under a conflict policy."""
    return ('<mujoco><compiler conflict="%s"/>%s<asset><model name="s" '
            'file="models/mjcf29/attach_settings.xml"/></asset><worldbody><body><joint/>'
            '<geom size=".1"/><attach model="s" body="pendulum" prefix="s/"/></body></worldbody>'
            '</mujoco>' % (policy, head))


def W(body, extra=''):
    return '<mujoco>%s<worldbody>%s</worldbody>%s</mujoco>' % (A, body, extra)


DECISIONS.update({
    "attach_missing_model": W('<attach model="nope" body="upper" prefix="a-"/>'),
    "attach_missing_body": W('<attach model="arm" body="nope" prefix="a-"/>'),
    # the compiler's conflict policy on the global settings of attach_settings.xml
    "attach_error_no_conflict": C('error', ''),
    "attach_error_timestep": C('error', '<option timestep="0.002"/>'),
    "attach_error_same_timestep": C('error', '<option timestep="1e-3"/>'),
    "attach_error_flag": C('error', '<option><flag frictionloss="enable"/></option>'),
    "attach_error_same_flag": C('error', '<option><flag frictionloss="disable"/></option>'),
    "attach_error_groups": C('error', '<option actuatorgroupdisable="3"/>'),
    "attach_error_memory": C('error', '<size memory="1M"/>'),
    "attach_merge_groups": C('merge', '<option actuatorgroupdisable="3"/>'),
    "attach_merge_gravity": C('merge', '<option gravity="0 0 -1"/>'),
    "attach_merge_same_gravity": C('merge', '<option gravity="0 1.0 -6"/>'),
    "attach_merge_integrator": C('merge', '<option integrator="implicitfast"/>'),
    "attach_merge_timestep_kept": C('merge', '<option timestep="0.0005"/>'),
    "attach_missing_frame": W('<attach model="arm" frame="nope" prefix="a-"/>'),
    "attach_frame_as_body": W('<attach model="arm" body="mount" prefix="a-"/>'),
    "attach_body_as_frame": W('<attach model="arm" frame="upper" prefix="a-"/>'),
    "attach_frame_and_body": W('<attach model="arm" body="upper" frame="elbow_frame" prefix="a-"/>'),
    "attach_frame_twice": W('<attach model="arm" frame="elbow_frame" prefix="a-"/>'
                            '<attach model="arm" frame="elbow_frame" prefix="b-"/>'),
    "attach_frame_same_prefix_twice": W('<attach model="arm" frame="elbow_frame" prefix="a-"/>'
                                        '<attach model="arm" frame="elbow_frame" prefix="a-"/>'),
    "attach_prefixed_frame_exists": W('<frame name="a-mount"/>'
                                      '<attach model="arm" frame="mount" prefix="a-"/>'),
    "attach_frame_then_body": W('<attach model="arm" frame="elbow_frame" prefix="a-"/>'
                                '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_frame_in_body": W('<body><joint/><geom size=".1"/>'
                              '<attach model="toy" frame="shelf" prefix="a-"/></body>'
                              '<body name="a-block"/>'),
    "attach_empty_body": '<mujoco><asset><model name="m" file="models/thirdparty/mujoco/mjx/tendon/site_wrap.xml"/>'
                         '</asset><worldbody><attach model="m" body="" prefix="a-"/></worldbody>'
                         '</mujoco>',
    "attach_missing_prefix": W('<attach model="arm" body="upper"/>'),
    "attach_same_prefix_twice": W('<attach model="arm" body="upper" prefix="a-"/>'
                                  '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_prefixed_body_exists": W('<body name="a-upper"/>'
                                     '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_joint_name_conflict": W('<body name="x"><joint name="a-elbow"/><geom size=".1"/></body>'
                                    '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_geom_name_conflict_after": W('<attach model="arm" body="upper" prefix="a-"/>'
                                         '<geom name="a-hand_geom" size=".1"/>'),
    "attach_frame_name_conflict": W('<frame name="a-elbow_frame"/>'
                                    '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_dropped_frame_no_conflict": W('<frame name="a-mount"/>'
                                          '<attach model="arm" body="upper" prefix="a-"/>'),
    "attach_same_prefix_other_body": W('<attach model="arm" body="upper" prefix="a-"/>'
                                       '<attach model="arm" body="spare" prefix="a-"/>'),
    "attach_whole_twice_same_prefix": W('<attach model="toy" prefix="t-"/>'
                                        '<attach model="toy" prefix="t-"/>'),
    "attach_key_name_conflict": W('<attach model="arm" body="upper" prefix="a-"/>',
                                  '<keyframe><key name="a-bent"/></keyframe>'),
    "attach_tendon_name_conflict": W('<attach model="arm" body="upper" prefix="a-"/>',
                                     '<tendon><fixed name="a-coupling"><joint joint="a-elbow" '
                                     'coef="1"/></fixed></tendon>'),
    "attach_missing_file": '<mujoco><asset><model name="m" file="models/mjcf29/nope.xml"/>'
                           '</asset></mujoco>',
    "attach_unknown_attribute": W('<attach model="arm" body="upper" prefix="a-" foo="1"/>'),
    "attach_child_element": W('<attach model="arm" body="upper" prefix="a-">'
                              '<geom size=".1"/></attach>'),
    "attach_frame_unknown_childclass": W('<frame childclass="nope">'
                                         '<attach model="arm" body="upper" prefix="a-"/></frame>'),
    "attach_two_prefixes": W('<attach model="arm" body="upper" prefix="a-"/>'
                             '<attach model="arm" body="upper" prefix="b-"/>'),
    "attach_empty_prefix": W('<attach model="arm" body="upper" prefix=""/>'),
    "attach_whole_free_into_body": W('<body name="x"><joint/><geom size=".1"/>'
                                     '<attach model="toy" prefix="t-"/></body>'),
    "attach_camera_target_outside": W('<attach model="toy" body="spinner" prefix="t-"/>'),
    "attach_in_replicate": W('<replicate count="3" offset="0 1 0">'
                             '<attach model="arm" body="lower" prefix="a-"/></replicate>'),
    "attach_model_named_twice": '<mujoco><asset><model name="m" file="models/mjcf29/attach_toy.xml"/>'
                                '<model name="m" file="models/mjcf29/attach_arm.xml"/></asset>'
                                '<worldbody><attach model="m" body="upper" prefix="a-"/>'
                                '</worldbody></mujoco>',
    "attach_model_default_name": '<mujoco><asset><model file="models/mjcf29/attach_finger.xml"/>'
                                 '</asset><worldbody><attach model="finger" body="finger" '
                                 'prefix="a-"/></worldbody></mujoco>',
    "attach_parent_refers_to_copy": W('<attach model="arm" body="upper" prefix="a-"/>',
                                      '<actuator><motor joint="a-elbow"/></actuator><sensor>'
                                      '<framepos objtype="site" objname="a-tip"/></sensor>'),
    "attach_parent_refers_to_missing": W('<attach model="arm" body="lower" prefix="a-"/>',
                                         '<actuator><motor joint="a-shoulder"/></actuator>'),
    "attach_content_type": '<mujoco><asset><model name="m" file="models/mjcf29/attach_finger.xml" '
                           'content_type="text/usd"/></asset><worldbody><attach model="m" '
                           'body="finger" prefix="a-"/></worldbody></mujoco>',
    "attach_model_unused": '<mujoco><asset><model name="m" file="models/mjcf29/attach_body.xml"/>'
                           '</asset></mujoco>',
    "attach_nkey": W('<attach model="arm" body="upper" prefix="a-"/>',
                     '<size nkey="4"/><keyframe><key name="k" qpos="1"/></keyframe>'),
})


# Short runs from set states that the random states of the golden files do not reach (the wheel's
# final qpos, qvel and act after STEPS steps from the state given, each integrator): an so3
# integrator set-point past pi, brought back to the same rotation with angle <= pi after each
# step; an so3 servo with damping whose torque norm is at its forcerange bound (the implicit
# integrators then drop its damping).
ORIENT_BALL = ('<mujoco><option timestep="0.002"/><worldbody><body pos="0 0 1"><joint name="b" '
               'type="ball" damping="0.1"/><geom type="box" size=".1 .15 .2" pos=".05 0 0"/>'
               '</body></worldbody><actuator>%s</actuator></mujoco>')
RUNS = {
    "integrator_past_pi": (
        ORIENT_BALL % '<general joint="b" gaintype="so3" biastype="so3" dyntype="integrator" '
                      'gainprm="0.5" biasprm="0 -0.5 -0.05" actearly="true"/>',
        {"qpos": [0.9, 0.3, -0.2, 0.1], "qvel": [0.5, -0.3, 0.2], "act": [3.0, 2.5, -1.0],
         "ctrl": [0.8, 0.6, -0.4]}),
    "integrator_turns": (
        ORIENT_BALL % '<general joint="b" gaintype="so3" biastype="so3" dyntype="integrator" '
                      'gainprm="0.5" biasprm="0 -0.5 -0.05"/>',
        {"qpos": [1, 0, 0, 0], "qvel": [0, 0, 0], "act": [9.0, -4.0, 2.0],
         "ctrl": [0.1, 0.2, 0.3]}),
    "saturated_damping": (
        ORIENT_BALL % '<orientation joint="b" kp="4" kv="2" forcerange="0 0.3"/>',
        {"qpos": [0.9, 0.3, -0.2, 0.1], "qvel": [2.0, -1.5, 1.0], "act": [],
         "ctrl": [0.8, 0.6, -0.4]}),
    "inside_bound_damping": (
        ORIENT_BALL % '<orientation joint="b" kp="0.5" kv="0.2" forcerange="0 5"/>',
        {"qpos": [0.9, 0.3, -0.2, 0.1], "qvel": [2.0, -1.5, 1.0], "act": [],
         "ctrl": [0.8, 0.6, -0.4]}),
}
STEPS = 50


def runs():
    out = {}
    for key, (xml, st) in RUNS.items():
        m = mujoco.MjModel.from_xml_string(xml)
        res = {}
        for integ in ["Euler", "RK4", "implicit", "implicitfast"]:
            m.opt.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integ.upper())
            d = mujoco.MjData(m)
            d.qpos[:] = st["qpos"]
            d.qvel[:] = st["qvel"]
            d.act[:] = st["act"]
            d.ctrl[:] = st["ctrl"]
            first = None
            for k in range(STEPS):
                mujoco.mj_step(m, d)
                if k == 0:
                    first = {"qvel": G.flat(d.qvel), "act": G.flat(d.act)}
            res[integ] = {"first": first, "qpos": G.flat(d.qpos), "qvel": G.flat(d.qvel),
                          "act": G.flat(d.act)}
        out[key] = {"xml": xml, "state": st, "steps": STEPS, "integrators": res}
    return out


def names(m):
    out = {}
    for key, t, n in KINDS:
        out[key] = [mujoco.mj_id2name(m, t, i) or "" for i in range(getattr(m, n))]
    return out


def sensordata(m, name, thirdparty):
    """`sensordata` after mj_forward at each state of the generate.py golden file `name`."""
    with open(os.path.join(HERE, name + ".json")) as f:
        g = json.load(f)
    if thirdparty:
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    out = []
    for st in g["states"]:
        inp = st["input"]
        d.time = inp["time"]
        d.qpos[:] = inp["qpos"]
        d.qvel[:] = inp["qvel"]
        d.act[:] = inp["act"]
        d.ctrl[:] = inp["ctrl"]
        d.qfrc_applied[:] = inp["qfrc_applied"]
        d.xfrc_applied[:] = [inp["xfrc_applied"][6 * b:6 * b + 6] for b in range(m.nbody)]
        if m.nmocap:
            d.mocap_pos[:] = [inp["mocap_pos"][3 * k:3 * k + 3] for k in range(m.nmocap)]
            d.mocap_quat[:] = [inp["mocap_quat"][4 * k:4 * k + 4] for k in range(m.nmocap)]
        mujoco.mj_forward(m, d)
        out.append(G.flat(d.sensordata))
    return out


def decisions():
    out = {}
    # the attach texts name model files relative to the repository's root
    os.chdir(os.path.dirname(os.path.dirname(HERE)))
    for key, xml in DECISIONS.items():
        try:
            m = mujoco.MjModel.from_xml_string(xml)
            out[key] = {"xml": xml, "accept": True,
                        "sizes": {k: int(getattr(m, k)) for k in
                                  ["nbody", "njnt", "ngeom", "nsite", "ntendon", "nsensor", "ncam",
                                   "neq", "nexclude", "nu", "nactuator", "na", "nkey", "nout"]},
                        "disableactuator": int(m.opt.disableactuator)}
        except ValueError as e:
            out[key] = {"xml": xml, "accept": False, "message": str(e).strip()}
    return out


def main(argv):
    filt = argv[1:]
    os.makedirs(os.path.join(HERE, "mjcf29"), exist_ok=True)
    for rel, tp, full in MODELS:
        name = G.golden_name(rel)
        if filt and not any(f in name for f in filt):
            continue
        if full:
            G.generate(rel, tp)
        m = mujoco.MjModel.from_xml_path(os.path.join(G.MODELS_DIR, rel))
        doc = {"model": name, "xml": "models/" + rel, "mujoco_version": mujoco.__version__,
               "names": names(m),
               "compiled": {k: G.flat(getattr(m, k)) for k in EXTRA_FIELDS}}
        if full and m.nsensor:
            doc["sensordata"] = sensordata(m, name, tp)
        with open(os.path.join(HERE, "mjcf29", name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if not filt or any("runs" in f for f in filt):
        with open(os.path.join(HERE, "mjcf29", "orientation_runs.json"), "w") as f:
            json.dump({"mujoco_version": mujoco.__version__, "runs": runs()}, f, indent=1)
            f.write("\n")
    if not filt or any("decisions" in f for f in filt):
        with open(os.path.join(HERE, "mjcf29", "decisions.json"), "w") as f:
            json.dump({"mujoco_version": mujoco.__version__, "cases": decisions()}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
