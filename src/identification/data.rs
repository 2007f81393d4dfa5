//! Measured trajectories: the CSV format of `diffmj rollout` (`time, qpos0.., qvel0..,
//! act0..`, with an optional leading `rollout` column for batches) extended by optional
//! columns `ctrl0..` (the control applied from this row to the next), `sensor0..` (the flat
//! `sensordata` at this row's state, as `mj_step` leaves it: computed before the integration)
//! and `qfrc0..` (measured generalized actuation forces, `nv` of them, for the equation-error
//! estimator when the model's actuators do not describe the forces that acted).
//!
//! Row `k` holds the state at step `k`; consecutive rows are one model timestep apart. A
//! missing `ctrl` block means zero controls; missing `sensor` or `qfrc` blocks are only an
//! error for the estimators that read them. Columns may come in any order; unknown columns
//! are an error (a misspelt name would otherwise be silently ignored).

use std::path::Path;

use super::SysIdError;
use crate::data::Data;
use crate::engine::step;
use crate::model::Model;

/// One measured trajectory, row-major blocks of `nrow` rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// Where it came from (file name and rollout index), for error messages.
    pub name: String,
    /// Number of rows (states).
    pub nrow: usize,
    /// `time`, `nrow`.
    pub time: Vec<f64>,
    /// `qpos`, `nrow × nq`.
    pub qpos: Vec<f64>,
    /// `qvel`, `nrow × nv`.
    pub qvel: Vec<f64>,
    /// `act`, `nrow × na`.
    pub act: Vec<f64>,
    /// `ctrl`, `nrow × nu` (zeros when the file has none).
    pub ctrl: Vec<f64>,
    /// `sensordata`, `nrow × nsensordata`, when measured.
    pub sensor: Option<Vec<f64>>,
    /// Measured generalized actuation `nrow × nv`, when given.
    pub qfrc: Option<Vec<f64>>,
}

/// Column blocks of the format, by prefix.
const BLOCKS: [&str; 6] = ["qpos", "qvel", "act", "ctrl", "sensor", "qfrc"];

impl Trajectory {
    /// The trajectories in a CSV text (several when it has a `rollout` column), checked
    /// against the sizes of model `m`; `name` labels errors.
    pub fn from_csv_str<T>(m: &Model<T>, text: &str, name: &str) -> Result<Vec<Self>, SysIdError> {
        let err = |line: usize, msg: String| SysIdError::Data {
            what: format!("{name}:{line}"),
            msg,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, head) = lines
            .next()
            .ok_or_else(|| err(1, "empty file (expected a header line)".into()))?;
        let cols: Vec<&str> = head.split(',').map(str::trim).collect();
        let sizes = [m.nq, m.nv, m.na, m.nu, m.nsensordata, m.nv];
        // where each column goes: (block index or TIME/ROLLOUT, component)
        const TIME: usize = 100;
        const ROLLOUT: usize = 101;
        let mut place = Vec::with_capacity(cols.len());
        let mut seen = [
            vec![false; m.nq],
            vec![false; m.nv],
            vec![false; m.na],
            vec![false; m.nu],
            vec![false; m.nsensordata],
            vec![false; m.nv],
        ];
        let mut has_time = false;
        for c in &cols {
            if *c == "time" {
                has_time = true;
                place.push((TIME, 0));
                continue;
            }
            if *c == "rollout" {
                place.push((ROLLOUT, 0));
                continue;
            }
            let found = BLOCKS.iter().enumerate().find_map(|(b, p)| {
                c.strip_prefix(p)
                    .and_then(|i| i.parse::<usize>().ok())
                    .map(|i| (b, i))
            });
            match found {
                Some((b, i)) if i < sizes[b] => {
                    if seen[b][i] {
                        return Err(err(1, format!("column '{c}' appears twice")));
                    }
                    seen[b][i] = true;
                    place.push((b, i));
                }
                Some((b, _)) => {
                    return Err(err(1, format!(
                        "column '{c}': the model has {} {} entries",
                        sizes[b], BLOCKS[b]
                    )))
                }
                None => {
                    return Err(err(1, format!(
                        "unknown column '{c}' (expected time, rollout, qpos<i>, qvel<i>, act<i>, ctrl<i>, sensor<i>, qfrc<i>)"
                    )))
                }
            }
        }
        if !has_time {
            return Err(err(1, "no 'time' column".into()));
        }
        for b in 0..3 {
            if let Some(i) = seen[b].iter().position(|s| !s) {
                return Err(err(
                    1,
                    format!("missing column '{}{i}' (the state is needed)", BLOCKS[b]),
                ));
            }
        }
        for b in 3..6 {
            let n = seen[b].iter().filter(|&&s| s).count();
            if n != 0 && n != sizes[b] {
                let i = seen[b].iter().position(|s| !s).unwrap_or(0);
                return Err(err(
                    1,
                    format!(
                        "column '{}{i}' missing (give all {} or none)",
                        BLOCKS[b], sizes[b]
                    ),
                ));
            }
        }
        let has_sensor = m.nsensordata > 0 && seen[4][0];
        let has_qfrc = m.nv > 0 && seen[5][0];
        let mut out: Vec<Trajectory> = Vec::new();
        let mut current: Option<(String, Trajectory)> = None;
        let mut row = vec![0.0; cols.len()];
        for (ln, line) in lines {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() != cols.len() {
                return Err(err(
                    ln + 1,
                    format!("{} values, the header has {}", fields.len(), cols.len()),
                ));
            }
            for (j, f) in fields.iter().enumerate() {
                row[j] = f.parse::<f64>().map_err(|_| {
                    err(
                        ln + 1,
                        format!("column '{}': '{f}' is not a number", cols[j]),
                    )
                })?;
                if !row[j].is_finite() {
                    return Err(err(
                        ln + 1,
                        format!("column '{}': {f} is not finite", cols[j]),
                    ));
                }
            }
            let label = place
                .iter()
                .position(|p| p.0 == ROLLOUT)
                .map(|j| format!("{}", row[j]))
                .unwrap_or_default();
            if current.as_ref().is_none_or(|(l, _)| *l != label) {
                if let Some((_, t)) = current.take() {
                    out.push(t);
                }
                let tname = if label.is_empty() {
                    name.to_string()
                } else {
                    format!("{name} rollout {label}")
                };
                current = Some((
                    label.clone(),
                    Trajectory::empty(m, tname, has_sensor, has_qfrc),
                ));
            }
            let t = &mut current.as_mut().expect("set above").1;
            let base = [
                t.qpos.len(),
                t.qvel.len(),
                t.act.len(),
                t.ctrl.len(),
                t.sensor.as_ref().map_or(0, Vec::len),
                t.qfrc.as_ref().map_or(0, Vec::len),
            ];
            t.qpos.resize(base[0] + m.nq, 0.0);
            t.qvel.resize(base[1] + m.nv, 0.0);
            t.act.resize(base[2] + m.na, 0.0);
            t.ctrl.resize(base[3] + m.nu, 0.0);
            if let Some(s) = t.sensor.as_mut() {
                s.resize(base[4] + m.nsensordata, 0.0);
            }
            if let Some(s) = t.qfrc.as_mut() {
                s.resize(base[5] + m.nv, 0.0);
            }
            for (j, &(b, i)) in place.iter().enumerate() {
                let v = row[j];
                match b {
                    TIME => t.time.push(v),
                    ROLLOUT => {}
                    0 => t.qpos[base[0] + i] = v,
                    1 => t.qvel[base[1] + i] = v,
                    2 => t.act[base[2] + i] = v,
                    3 => t.ctrl[base[3] + i] = v,
                    4 => t.sensor.as_mut().expect("sensor columns present")[base[4] + i] = v,
                    _ => t.qfrc.as_mut().expect("qfrc columns present")[base[5] + i] = v,
                }
            }
            t.nrow += 1;
        }
        if let Some((_, t)) = current.take() {
            out.push(t);
        }
        if out.is_empty() {
            return Err(err(2, "no data rows".into()));
        }
        for t in &out {
            if t.nrow < 2 {
                return Err(SysIdError::Data {
                    what: t.name.clone(),
                    msg: "fewer than 2 rows: no step to fit".into(),
                });
            }
        }
        Ok(out)
    }

    /// [`Trajectory::from_csv_str`] on a file.
    pub fn read_csv<T>(m: &Model<T>, path: &Path) -> Result<Vec<Self>, SysIdError> {
        let text = std::fs::read_to_string(path).map_err(|e| SysIdError::Data {
            what: path.display().to_string(),
            msg: e.to_string(),
        })?;
        Self::from_csv_str(m, &text, &path.display().to_string())
    }

    fn empty<T>(m: &Model<T>, name: String, sensor: bool, qfrc: bool) -> Self {
        let _ = m;
        Trajectory {
            name,
            nrow: 0,
            time: Vec::new(),
            qpos: Vec::new(),
            qvel: Vec::new(),
            act: Vec::new(),
            ctrl: Vec::new(),
            sensor: sensor.then(Vec::new),
            qfrc: qfrc.then(Vec::new),
        }
    }

    /// Simulate model `m` with diffmj from the state of `d0` for `nstep` steps, with the
    /// control of step `k` from `ctrl(k, time, &mut ctrl)`, and record it in this format
    /// (sensors included; the last row's controls are zero and its sensors come from
    /// `forward`), as `tests/golden/generate_sysid.py` records MuJoCo.
    pub fn simulate(
        m: &Model<f64>,
        d0: &Data<f64>,
        nstep: usize,
        mut ctrl: impl FnMut(usize, f64, &mut [f64]),
        name: &str,
    ) -> Result<Self, SysIdError> {
        let mut d = d0.clone();
        let mut t = Trajectory::empty(m, name.to_string(), m.nsensordata > 0, false);
        for k in 0..=nstep {
            t.time.push(d.time);
            t.qpos.extend_from_slice(&d.qpos);
            t.qvel.extend_from_slice(&d.qvel);
            t.act.extend_from_slice(&d.act);
            if k < nstep {
                ctrl(k, d.time, &mut d.ctrl);
                t.ctrl.extend_from_slice(&d.ctrl);
                step(m, &mut d).map_err(|e| SysIdError::Sim {
                    what: format!("{name} step {k}"),
                    msg: e.to_string(),
                })?;
            } else {
                d.ctrl.iter_mut().for_each(|c| *c = 0.0);
                t.ctrl.extend_from_slice(&d.ctrl);
                crate::engine::forward(m, &mut d).map_err(|e| SysIdError::Sim {
                    what: format!("{name} row {k}"),
                    msg: e.to_string(),
                })?;
            }
            if let Some(s) = t.sensor.as_mut() {
                s.extend_from_slice(&d.sensordata);
            }
            t.nrow += 1;
        }
        Ok(t)
    }

    /// The trajectory as CSV text in the format read by [`Trajectory::from_csv_str`]
    /// (17 significant digits: values round-trip).
    pub fn to_csv<T>(&self, m: &Model<T>) -> String {
        let mut head = vec!["time".to_string()];
        let blocks: [(&str, usize, Option<&Vec<f64>>); 6] = [
            ("qpos", m.nq, Some(&self.qpos)),
            ("qvel", m.nv, Some(&self.qvel)),
            ("act", m.na, Some(&self.act)),
            ("ctrl", m.nu, Some(&self.ctrl)),
            ("sensor", m.nsensordata, self.sensor.as_ref()),
            ("qfrc", m.nv, self.qfrc.as_ref()),
        ];
        for (p, n, v) in &blocks {
            if v.is_some() {
                head.extend((0..*n).map(|i| format!("{p}{i}")));
            }
        }
        let mut s = head.join(",") + "\n";
        for k in 0..self.nrow {
            let mut row = vec![format!("{:e}", self.time[k])];
            for (_, n, v) in &blocks {
                if let Some(v) = v {
                    row.extend(v[k * n..(k + 1) * n].iter().map(|x| format!("{x:e}")));
                }
            }
            s += &(row.join(",") + "\n");
        }
        s
    }
}
