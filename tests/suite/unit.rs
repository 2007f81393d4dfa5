//! The library's unit tests of private items (`diffmj::unit_tests`), one test each, in a module
//! per library module.

macro_rules! unit {
    ($($module:ident: $($name:ident),+;)+) => {
        $(
            mod $module {
                $(
                    #[test]
                    fn $name() {
                        diffmj::unit_tests::$module::$name();
                    }
                )+
            }
        )+
    };
}

unit! {
    collision: frame_default_tangents, pair_table, errors_are_reported;
    collision_multi: cylinder_side_against_a_box_face_at_the_default_tolerance, stacked_cylinders_give_four_cap_contacts, capsule_across_a_cap_gives_two_contacts, tilted_cylinder_side_on_a_box_gives_two_depths;
    control_boxqp: box_qp_meets_kkt;
    engine_actuation: adhesion_moment_matches_mujoco;
    engine_collision: convex_buffers_only_where_the_convex_routine_can_run, parameter_mixing, adhesion_and_surface_velocity_match_mujoco, duals_carry_derivatives, broad_phase_matches_all_pairs;
    engine_kinematics: lifted_stage_inputs_are_model_fields, skipping_unread_frames_changes_nothing;
    engine_passive: adhesion_is_passive_and_skipped_with_the_stage;
    identification_problem: lifted_smooth_stages_change_nothing;
    math: quat_normalize_unit_value_and_derivative, dexp_inv_is_the_rate_of_the_rotation_vector;
    mjcf_eig3: matches_mujoco, degenerate_and_trivial_inputs;
    mjcf_schema: every_accepted_attribute_is_read_or_audited, patterns;
    pbad_lm: minimizes_rosenbrock, round_off_ties_are_decided_by_the_gradient, cholesky_solves_and_refuses, lu_solves_and_refuses;
    solver: smoothed_inverse_tends_to_the_exact_one;
    solver_dual: half_rows_give_the_full_solves_a;
    solver_newton: rank1_updates_give_the_new_factor;
    trajopt_lm: block_jacobians_match_finite_differences, block_jacobians_match_finite_differences_ramped_contact;
}

/// Every unit test in the library runs: each argument-free `pub fn` of a `tests` module under
/// `src/` (the module inline after `pub mod tests {`, or `schema_tests.rs`) is listed above, and
/// no `#[test]` is left in `src/` (the library is not built in test mode, so it would never
/// run).
#[test]
fn every_library_unit_test_is_listed() {
    let listed = include_str!("unit.rs");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![root];
    let (mut found, mut missing) = (0, vec![]);
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains("#[test]"),
                "{}: a #[test] in the library never runs",
                path.display()
            );
            let whole = path.file_name().is_some_and(|n| n == "schema_tests.rs");
            let Some(start) = (if whole {
                Some(0)
            } else {
                text.find("pub mod tests {")
            }) else {
                continue;
            };
            for line in text[start..].lines() {
                let Some(rest) = line.trim_start().strip_prefix("pub fn ") else {
                    continue;
                };
                let Some(name) = rest.strip_suffix("() {") else {
                    continue;
                };
                found += 1;
                if !listed.contains(&format!(" {name},")) && !listed.contains(&format!(" {name};"))
                {
                    missing.push(format!("{}: {name}", path.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "unit tests not listed in tests/suite/unit.rs: {missing:?}"
    );
    // the 33 tests listed above
    assert_eq!(found, 33);
}
