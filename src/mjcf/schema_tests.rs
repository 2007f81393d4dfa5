//! The schema audit: every attribute MuJoCo 4.0 accepts ([`ELEMENTS`]) is either looked up by the
//! reader or listed in [`IGNORED`] with the reason it cannot change what diffmj computes.

use super::*;
use crate::mjcf::attr::lookups::{self, Noted};
use std::collections::{BTreeMap, BTreeSet};

/// Models that take the reader down every path that looks up an attribute: each element it
/// reads (also as a default), every actuator shortcut and transmission, every equality and wrap
/// kind, assets with and without a name. They only need to pass the reader, not the compiler.
const FIXTURES: &[&str] = &[r#"<mujoco model="m">
  <compiler angle="radian">
    <lengthrange/>
  </compiler>
  <option><flag/></option>
  <size/>
  <statistic/>
  <visual><global/><quality/><headlight/><map/><scale/><rgba/></visual>
  <custom><numeric name="n"/><text name="t"/><tuple name="u"/></custom>
  <extension><plugin plugin="p"/></extension>
  <asset>
    <mesh name="me"/><mesh file="a.stl"/><hfield name="h" size="1 1 1 1"/><hfield file="h.png"/>
    <texture name="tx" builtin="flat" width="1" height="1"/><texture file="t.png"/><material name="ma"/><skin name="sk"/>
    <skin file="s.skn"/><model name="mo" file="m.xml"/><model file="m.xml"/>
  </asset>
  <default>
    <mesh/><texture/><material/>
    <joint/><geom/><site/><camera/><light/><tendon/><equality/><pair/>
    <orientation/><general/><motor/><position/><velocity/><intvelocity/><damper/><cylinder/><muscle/>
    <adhesion/><pid/><dcmotor motorconst="0.1" resistance="1"/>
    <default class="c"><joint/></default>
  </default>
  <worldbody>
    <geom name="g0" size="1"/>
    <site name="s0"/>
    <attach model="mo" body="cb" prefix="x-"/>
    <camera/>
    <light/>
    <frame childclass="c"><site/></frame>
    <body name="b1" childclass="c">
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <joint name="j1"/>
      <geom size="1"/>
      <site name="s1"/>
      <body name="b2">
        <freejoint/>
        <inertial pos="0 0 0" mass="1" fullinertia="1 1 1 0 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="t1"><site site="s0"/><geom geom="g0" sidesite="s1"/><pulley divisor="2"/>
      <site site="s1"/></spatial>
    <fixed name="t2"><joint joint="j1" coef="1"/></fixed>
  </tendon>
  <actuator>
    <general joint="j1"/>
    <motor jointinparent="j1"/>
    <position tendon="t2"/>
    <velocity site="s1" refsite="s0"/>
    <intvelocity cranksite="s1" slidersite="s0" cranklength="1"/>
    <damper joint="j1" ctrlrange="0 1"/>
    <cylinder joint="j1"/>
    <muscle joint="j1"/>
    <adhesion body="b1" ctrlrange="0 1"/>
    <pid joint="j1"/>
    <dcmotor joint="j1" motorconst="0.1" resistance="1"/>
    <orientation site="s1" refsite="s0"/>
  </actuator>
  <equality>
    <connect body1="b1" anchor="0 0 0"/>
    <connect site1="s0" site2="s1"/>
    <weld body1="b1"/>
    <weld site1="s0" site2="s1"/>
    <joint joint1="j1"/>
    <tendon tendon1="t2"/>
  </equality>
  <contact><pair geom1="g0" geom2="g0"/><exclude body1="b1" body2="b2"/></contact>
  <sensor>
    <touch site="s0"/>
    <accelerometer site="s0"/>
    <velocimeter site="s0"/>
    <gyro site="s0"/>
    <force site="s0"/>
    <torque site="s0"/>
    <magnetometer site="s0"/>
    <jointpos joint="j1"/>
    <jointvel joint="j1"/>
    <jointactuatorfrc joint="j1"/>
    <ballquat joint="j1"/>
    <ballangvel joint="j1"/>
    <jointlimitpos joint="j1"/>
    <jointlimitvel joint="j1"/>
    <jointlimitfrc joint="j1"/>
    <tendonpos tendon="t2"/>
    <tendonvel tendon="t2"/>
    <tendonactuatorfrc tendon="t2"/>
    <tendonlimitpos tendon="t2"/>
    <tendonlimitvel tendon="t2"/>
    <tendonlimitfrc tendon="t2"/>
    <actuatorpos actuator="a0"/>
    <actuatorvel actuator="a0"/>
    <actuatorfrc actuator="a0"/>
    <subtreecom body="b1"/>
    <subtreelinvel body="b1"/>
    <subtreeangmom body="b1"/>
    <framepos objtype="site" objname="s0" reftype="body" refname="b1"/>
    <framequat objtype="site" objname="s0" reftype="body" refname="b1"/>
    <framexaxis objtype="site" objname="s0" reftype="body" refname="b1"/>
    <frameyaxis objtype="site" objname="s0" reftype="body" refname="b1"/>
    <framezaxis objtype="site" objname="s0" reftype="body" refname="b1"/>
    <framelinvel objtype="site" objname="s0" reftype="body" refname="b1"/>
    <frameangvel objtype="site" objname="s0" reftype="body" refname="b1"/>
    <framelinacc objtype="site" objname="s0"/>
    <frameangacc objtype="site" objname="s0"/>
    <insidesite site="s0" objtype="body" objname="b1"/>
    <rangefinder site="s0" data="dist normal"/>
    <contact site="s0" body2="b1" data="found force" num="2" reduce="mindist"/>
    <contact body1="b1" subtree2="b1"/>
    <contact subtree1="b1" geom2="g0"/>
    <contact geom1="g0"/>
    <distance geom1="g0" body2="b1" cutoff="1"/>
    <normal body1="b1" geom2="g0"/>
    <fromto geom1="g0" geom2="g0"/>
    <e_potential/>
    <e_kinetic/>
    <clock name="c" cutoff="1" noise="0" interval="0.1 0" nsample="0" delay="0"/>
  </sensor>
  <keyframe><key/></keyframe>
</mujoco>"#];

/// Schema key → attribute names the reader looked up on elements checked against that key, over
/// all [`FIXTURES`].
fn looked_up() -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // the fixtures' texture file, a 1x1 PNG, in a directory of its own
    // (one per call: tests run it on parallel threads)
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("diffmj_schema_{}_{call}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let mut png = Vec::new();
    let mut enc = png::Encoder::new(&mut png, 1, 1);
    enc.set_color(png::ColorType::Grayscale);
    let mut w = enc.write_header().expect("PNG header");
    w.write_image_data(&[128]).expect("PNG data");
    w.finish().expect("PNG end");
    std::fs::write(dir.join("t.png"), &png).expect("fixture texture written");
    // the fixtures' attached model
    std::fs::write(
        dir.join("m.xml"),
        r#"<mujoco><worldbody><body name="cb"><geom size="1"/></body></worldbody></mujoco>"#,
    )
    .expect("fixture model written");
    for xml in FIXTURES {
        lookups::start();
        let doc = crate::mjcf::xml::parse(xml.to_string(), "<fixture>".into(), &dir, None)
            .expect("fixture parses");
        let read = crate::mjcf::spec::build(&doc);
        let log = lookups::stop();
        if let Err(e) = read {
            panic!("fixture does not pass the reader: {e}");
        }
        let mut key_of: BTreeMap<usize, String> = BTreeMap::new();
        for (e, what, name) in &log {
            if *what == Noted::Key {
                key_of.insert(*e, name.clone());
            }
        }
        for (e, what, a) in log {
            if what == Noted::Attr {
                let k = key_of
                    .get(&e)
                    .unwrap_or_else(|| panic!("attribute '{a}' read on an unchecked element"));
                out.entry(k.clone()).or_default().insert(a);
            }
        }
        for k in key_of.into_values() {
            out.entry(k).or_default();
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    out
}

/// Whether `pattern` (a schema key, or one with `*` at its start or end) matches `key`.
pub(super) fn matches(pattern: &str, key: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        key.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        key.ends_with(suffix)
    } else {
        pattern == key
    }
}

/// Every accepted attribute is looked up by the reader or listed in [`IGNORED`] (with a
/// reason), and [`IGNORED`] lists nothing the reader reads or MuJoCo does not accept: an
/// attribute added to [`ELEMENTS`], or a read dropped from the reader, fails here until it is
/// audited.
pub fn every_accepted_attribute_is_read_or_audited() {
    let read = looked_up();
    let mut unaudited = Vec::new();
    for (key, attrs) in ELEMENTS {
        for a in *attrs {
            let is_read = read.get(*key).is_some_and(|s| s.contains(*a));
            let ignored = IGNORED
                .iter()
                .any(|(k, at, _)| matches(k, key) && (at == a || *at == "*"));
            if !is_read && !ignored {
                unaudited.push(format!("{key} {a}"));
            }
        }
    }
    assert!(
        unaudited.is_empty(),
        "accepted attributes neither read nor listed in IGNORED:\n{}",
        unaudited.join("\n")
    );
    // no stale entry: each names an unread attribute MuJoCo accepts, and one naming an
    // attribute (not `*`) names no attribute the reader reads
    for (pattern, attr, _) in IGNORED {
        let mut named = 0;
        for (key, attrs) in ELEMENTS.iter().filter(|(k, _)| matches(pattern, k)) {
            for a in attrs.iter().filter(|a| *attr == "*" || **a == *attr) {
                let is_read = read.get(*key).is_some_and(|s| s.contains(*a));
                assert!(
                    *attr == "*" || !is_read,
                    "IGNORED lists '{attr}' of {pattern}, which the reader reads on {key}"
                );
                named += usize::from(!is_read);
            }
        }
        assert!(
            named > 0,
            "IGNORED entry {pattern} {attr} names no unread attribute"
        );
    }
}

/// The audit test's patterns: a `*` at either end of an element pattern matches any prefix or
/// suffix, otherwise the key must be equal.
pub fn patterns() {
    assert!(matches("*-geom", "body-geom") && matches("*-geom", "default-geom"));
    assert!(matches("sensor-*", "sensor-touch") && matches("*", "option"));
    assert!(!matches("body", "body-geom") && !matches("*-geom", "geom-plugin"));
}
