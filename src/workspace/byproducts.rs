//! What running a project's tools leaves behind that nobody writes on purpose: bytecode, test
//! and type-checker caches, coverage and JUnit reports, build folders, object files and built
//! libraries, installed environments.
//! A file the repository does not track whose path looks like one of these is a by-product,
//! whether or not the project's `.gitignore` says so: the read-only guard does not blame an agent
//! for one (the baseline's checks may be writing them in the same worktree at the same time).

/// Folder names whose whole content is a by-product, wherever they are.
const FOLDERS: [&str; 13] = [
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".venv",
    "node_modules",
    "htmlcov",
    ".nyc_output",
    "target",
    ".gradle",
];

/// File names that are by-products, wherever they are.
const FILES: [&str; 5] = [
    ".coverage",
    "coverage.xml",
    "junit.xml",
    "lcov.info",
    ".DS_Store",
];

/// File name endings that are by-products: bytecode, object files and built libraries.
const SUFFIXES: [&str; 8] = [
    ".pyc",
    ".pyo",
    ".egg-info",
    ".so",
    ".pyd",
    ".dylib",
    ".o",
    ".obj",
];

/// Whether `path` (relative to the worktree, `/`-separated) is a by-product.
pub fn is_byproduct(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((name, folders)) = parts.split_last() else {
        return false;
    };
    folders
        .iter()
        .any(|f| FOLDERS.contains(f) || f.ends_with(".egg-info"))
        || FOLDERS.contains(name)
        || FILES.contains(name)
        || name.starts_with(".coverage.")
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::is_byproduct;

    #[test]
    fn caches_reports_and_builds_are_by_products_and_sources_are_not() {
        for p in [
            "__pycache__/mod.cpython-311.pyc",
            "pkg/__pycache__/x.pyc",
            "x.pyc",
            ".pytest_cache/v/cache/nodeids",
            ".coverage",
            ".coverage.host.123",
            "coverage.xml",
            "junit.xml",
            "src/pkg.egg-info/PKG-INFO",
            "node_modules/left-pad/index.js",
            ".venv/bin/python",
            "target/debug/app",
            ".tox/py311/log",
            "src/halves/_native.cpython-311-x86_64-linux-gnu.so",
            "build/temp.linux-x86_64-cpython-311/src/halves/_native.o",
        ] {
            assert!(is_byproduct(p), "{p}");
        }
        for p in [
            "src/lib.rs",
            "tests/test_x.py",
            "targets.md",
            "src/target_cpu.rs",
            "coverage_test.py",
            "pyc.md",
            "",
        ] {
            assert!(!is_byproduct(p), "{p}");
        }
    }
}
