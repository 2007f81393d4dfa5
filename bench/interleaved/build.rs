//! Link MuJoCo's shared library from `MUJOCO_LIB_DIR` (the directory of the `mujoco` wheel,
//! which ships `libmujoco.so.<version>` without the unversioned name the linker looks for: a
//! link named `libmujoco.so` is made in OUT_DIR).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=MUJOCO_LIB_DIR");
    let dir = PathBuf::from(
        std::env::var("MUJOCO_LIB_DIR")
            .expect("set MUJOCO_LIB_DIR to the mujoco wheel's directory"),
    );
    let lib = std::fs::read_dir(&dir)
        .expect("MUJOCO_LIB_DIR is readable")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libmujoco.so"))
        })
        .expect("libmujoco.so* in MUJOCO_LIB_DIR");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let link = out.join("libmujoco.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&lib, &link).expect("link libmujoco.so in OUT_DIR");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=dylib=mujoco");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
