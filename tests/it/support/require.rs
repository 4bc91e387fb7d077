//! What a test needs that a machine may lack: root, the VM, a browser, a program. Outside CI a
//! test without it skips, saying why. With the `CI` environment variable set (`.ci/run` sets
//! it) the test fails instead, so a capability the CI machine lost turns the run red rather
//! than letting its tests pass without running.
//!
//! A test asks first and returns when told to: `if !support::require_root("…") { return; }`,
//! or, when it needs root and takes the lock, `let Some(_lock) =
//! support::shared_as_root("…") else { return; };` (`exclusive_as_root` for one that must
//! have the machine to itself).

/// Whether the `CI` environment variable is set (to anything but empty, `0` or `false`).
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// Whether the test may go on: `true` when nothing is `missing`. Otherwise, outside CI, prints
/// `skipped: WHY` and returns `false`; with `CI` set, panics with WHY.
pub fn require(missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    assert!(
        !on_ci(),
        "{why} (CI is set: a missing capability fails the test there, it does not skip it)"
    );
    eprintln!("skipped: {why}");
    false
}

/// Root, for `why` ("loop devices need root"). CI runs as root.
pub fn require_root(why: &str) -> bool {
    require((!super::is_root()).then(|| why.to_string()))
}

/// For a test that needs root and does not measure: the shared lock (`support::shared()`),
/// or `None` when the test is to return because root is missing (see [`require_root`]).
pub fn shared_as_root(why: &str) -> Option<std::sync::RwLockReadGuard<'static, ()>> {
    let lock = super::shared();
    require_root(why).then_some(lock)
}

/// For a test that needs root and the machine to itself: the exclusive lock
/// (`support::exclusive()`), or `None` when the test is to return because root is missing.
pub fn exclusive_as_root(why: &str) -> Option<std::sync::RwLockWriteGuard<'static, ()>> {
    let lock = super::exclusive();
    require_root(why).then_some(lock)
}

/// The program `name` on PATH; `install` says how to get it.
pub fn require_program(name: &str, install: &str) -> bool {
    let missing = sshtune::process::find_program(name).is_none();
    require(missing.then(|| format!("{name} is not installed ({install})")))
}
