//! How the native code of a project is built in place — a Python extension (setuptools'
//! `ext_modules`, Cython, maturin, scikit-build, meson-python) or a node-gyp addon —, each by
//! the tool that builds it ([`super::Tool::native`]): run after the setup, and again before the
//! checks when a change touches native sources.

use serde::Serialize;

/// The variable naming the folder a rebuild after the change unpacks its wheel into.
pub const NATIVE_SITE_VAR: &str = "RALPH_NATIVE_SITE";

/// A project's native build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NativeSpec {
    pub command: String,
    /// Why, for `ralph doctor`.
    pub reason: String,
    /// The build after an agent's change, when `command` installs into the environment (which
    /// is read-only then): it builds a wheel and unpacks it into `$RALPH_NATIVE_SITE`, a
    /// private folder of the worktree's that the checks find first on `PYTHONPATH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<String>,
    /// It compiles Rust too: a change to a `.rs` file builds it again.
    #[serde(skip)]
    pub rust: bool,
}

/// Files whose change makes the native code build again.
const NATIVE_SOURCES: [&str; 13] = [
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".pyx", ".pxd", ".pxi", ".rs", ".gyp",
    "setup.py",
];

/// Whether a change to `path` needs the native code rebuilt (for `spec`'s kind of project).
pub fn touches_native(path: &str, spec: &NativeSpec) -> bool {
    NATIVE_SOURCES
        .iter()
        .any(|s| path.ends_with(s) && (spec.rust || *s != ".rs"))
}

/// The command that builds the wheel with `build` (its output folder `$RALPH_NATIVE_SITE/wheel`)
/// and unpacks it into `$RALPH_NATIVE_SITE` with the project's `python`.
pub(super) fn wheel_into_site(build: &str, python: &str) -> String {
    format!(
        "rm -rf \"${NATIVE_SITE_VAR}\" && {build} && {python} -c 'import glob, os, zipfile; d = os.environ[\"{NATIVE_SITE_VAR}\"]; [zipfile.ZipFile(w).extractall(d) for w in glob.glob(d + \"/wheel/*.whl\")]'"
    )
}
