//! The tests of `environment`.

use super::*;
use crate::checks::project;

#[test]
fn go_and_c_builds_get_ralphs_own_caches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    std::fs::write(dir.path().join("CMakeLists.txt"), "project(x)\n").unwrap();
    let vars = variables(dir.path(), Path::new("/r/.ralph/cache"));
    assert!(vars.contains(&("GOCACHE".into(), "/r/.ralph/cache/go-build".into())));
    assert!(vars.contains(&("CCACHE_DIR".into(), "/r/.ralph/cache/ccache".into())));
}

/// The setup of an in-memory project: a pure function of its files, no filesystem.
fn command(files: &[(&str, &str)], config: &ChecksConfig) -> Option<String> {
    let p = Project::in_memory(Path::new("/p"), files);
    setup(&p, config).map(|s| s.command)
}

#[test]
fn the_interpreter_is_the_one_the_checks_name() {
    use crate::checks::spec::CheckSpec;
    let wt = Path::new("/w/tree");
    let plan = |commands: &[(&str, &str)]| {
        commands
            .iter()
            .map(|(n, c)| CheckSpec::new(n, c))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        check_interpreter(
            &plan(&[
                ("lint", "ruff check ."),
                ("test", ".venv/bin/python -m pytest -q")
            ]),
            wt
        )
        .as_deref(),
        Some("/w/tree/.venv/bin/python")
    );
    assert_eq!(
        check_interpreter(&plan(&[("test", "/opt/py/bin/python3.12 -m pytest")]), wt).as_deref(),
        Some("/opt/py/bin/python3.12")
    );
    assert_eq!(
        check_interpreter(&plan(&[("test", "python -m pytest")]), wt).as_deref(),
        Some("python")
    );
    assert_eq!(
        check_interpreter(&plan(&[("test", "uv run pytest")]), wt),
        None
    );
}

#[test]
fn setups_follow_the_lockfile_or_the_configuration() {
    let none = ChecksConfig::default();
    assert_eq!(
        command(&[("uv.lock", "")], &none).as_deref(),
        Some("uv sync --frozen --all-groups --all-extras")
    );
    assert_eq!(
        command(&[("package-lock.json", "{}")], &none).as_deref(),
        Some("npm ci")
    );
    // No lockfile committed: `npm install`, as the contributor ran it, writing none.
    let deps = r#"{"devDependencies": {"mocha": "^10"}}"#;
    assert_eq!(
        command(&[("package.json", deps)], &none).as_deref(),
        Some("npm install --no-package-lock --no-audit --no-fund")
    );
    assert_eq!(
        command(
            &[("package.json", r#"{"scripts": {"test": "node t.js"}}"#)],
            &none
        ),
        None,
        "nothing to install"
    );
    assert_eq!(
        command(&[("package.json", deps), ("yarn.lock", "")], &none).as_deref(),
        Some("yarn install --frozen-lockfile"),
        "another manager's lockfile"
    );
    assert_eq!(
        command(&[("yarn.lock", ""), (".yarnrc.yml", "")], &none).as_deref(),
        Some("yarn install --immutable")
    );
    assert_eq!(
        command(&[("pnpm-lock.yaml", "")], &none).as_deref(),
        Some("pnpm install --frozen-lockfile")
    );
    assert_eq!(
        command(&[("requirements.txt", "x")], &none),
        None,
        "no lockfile, no guess"
    );
    let crate_ = ("Cargo.toml", "[package]\nname = \"x\"\n");
    assert_eq!(
        command(&[crate_, ("Cargo.lock", "")], &none).as_deref(),
        Some("cargo fetch || cargo fetch --offline")
    );
    assert_eq!(
        command(&[crate_], &none).as_deref(),
        Some("(cargo fetch || cargo fetch --offline) && rm -f Cargo.lock"),
        "a lock the project does not keep is not left in the worktree"
    );
    assert_eq!(
        command(&[crate_, ("uv.lock", ""), ("Cargo.lock", "")], &none).as_deref(),
        Some("uv sync --frozen --all-groups --all-extras && (cargo fetch || cargo fetch --offline)"),
        "a Python project with a Rust extension sets up its Python environment, then the crates its cargo checks build"
    );
    let configured = ChecksConfig {
        setup: Some("make venv".into()),
        ..ChecksConfig::default()
    };
    assert_eq!(
        command(&[("uv.lock", "")], &configured).as_deref(),
        Some("make venv")
    );
    // A declared install target that only makes a local environment wins over the lockfile.
    assert_eq!(
        command(
            &[
                ("uv.lock", ""),
                (
                    "Makefile",
                    "install:\n\tuv sync --all-extras\ntest:\n\tuv run pytest\n"
                )
            ],
            &none
        )
        .as_deref(),
        Some("make install")
    );
    // One that installs into a shared environment is not run by itself.
    assert_eq!(
        command(&[("Makefile", "install:\n\tpip install -e .\n")], &none),
        None
    );
}

#[test]
fn fingerprints_change_with_the_manifests_only() {
    let dir = project(&[("pyproject.toml", "[project]\nname='x'\n"), ("a.py", "")]);
    let before = fingerprint(dir.path());
    std::fs::write(dir.path().join("a.py"), "print(1)").unwrap();
    assert_eq!(fingerprint(dir.path()), before);
    std::fs::write(dir.path().join("uv.lock"), "version = 1").unwrap();
    assert_ne!(fingerprint(dir.path()), before);
}

#[test]
fn variables_per_language() {
    let cache = Path::new("/repo/.ralph/cache");
    let cargo = project(&[("Cargo.toml", "[package]\nname = \"x\"\n")]);
    let vars = variables(cargo.path(), cache);
    // Whether or not this machine sets one of its own: ralph's, which checks may write.
    assert_eq!(
        vars,
        [(
            "CARGO_TARGET_DIR".to_owned(),
            "/repo/.ralph/cache/target".to_owned()
        )]
    );
    let src = project(&[
        ("pyproject.toml", "[project]\nname = \"pkg\"\n"),
        ("src/pkg/__init__.py", ""),
    ]);
    let vars = variables(src.path(), cache);
    let path = &vars.iter().find(|(k, _)| k == "PYTHONPATH").unwrap().1;
    assert!(
        path.starts_with(&src.path().join("src").display().to_string()),
        "{path}"
    );
    let flat = project(&[
        ("pyproject.toml", "[project]\nname = \"pkg\"\n"),
        ("pkg/__init__.py", ""),
    ]);
    let vars = variables(flat.path(), cache);
    let path = &vars.iter().find(|(k, _)| k == "PYTHONPATH").unwrap().1;
    assert!(path.starts_with(&flat.path().display().to_string()));
}

#[tokio::test]
async fn a_failing_setup_says_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let spec = SetupSpec {
        command: "echo resolving; echo 'No solution found: foo>=9' >&2; exit 1".into(),
        reason: "test".into(),
        configured: true,
    };
    let err = run_setup(&spec, dir.path(), Duration::from_secs(5), &[], None)
        .await
        .unwrap_err();
    assert!(
        err.contains("failed (exit 1)") && err.contains("No solution found"),
        "{err}"
    );
    let ok = SetupSpec {
        command: "test \"$X\" = 1".into(),
        reason: "test".into(),
        configured: true,
    };
    assert!(run_setup(
        &ok,
        dir.path(),
        Duration::from_secs(5),
        &[("X".into(), "1".into())],
        None
    )
    .await
    .is_ok());
}

#[tokio::test]
async fn an_install_of_another_checkout_is_found_and_neutralised() {
    if !process::on_path("python3") {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    // The main checkout's package, installed through a .pth file as an editable install
    // does it, and the worktree's copy.
    let main = project(&[("src/pkg_ralph_t/__init__.py", "WHERE = 'main'\n")]);
    let site = tempfile::tempdir().unwrap();
    std::fs::write(
        site.path().join("__editable__.pkg.pth"),
        main.path().join("src").display().to_string(),
    )
    .unwrap();
    let wt = project(&[
        ("pyproject.toml", "[project]\nname = \"pkg_ralph_t\"\n"),
        ("src/pkg_ralph_t/__init__.py", "WHERE = 'worktree'\n"),
    ]);
    // `site.addsitedir` through a sitecustomize stands for the venv's site-packages.
    let custom = tempfile::tempdir().unwrap();
    std::fs::write(
        custom.path().join("sitecustomize.py"),
        format!(
            "import site\nsite.addsitedir({:?})\n",
            site.path().display().to_string()
        ),
    )
    .unwrap();
    // The user's environment: what ralph inherits.
    std::env::set_var("PYTHONPATH", custom.path());
    let env = variables(wt.path(), Path::new("/unused"));
    let found = python_import(wt.path(), &env, None).await;
    std::env::remove_var("PYTHONPATH");
    assert!(
        matches!(&found, Some(Diagnosis::Neutralised(m)) if m.contains("pkg_ralph_t") && m.contains(&main.path().display().to_string())),
        "{found:?}"
    );
}

#[test]
fn native_code_rebuilt_after_a_change_goes_beside_the_read_only_environment() {
    let p = Project::in_memory(
        Path::new("/p"),
        &[(
            "pyproject.toml",
            "[build-system]\nbuild-backend = \"maturin\"\n[tool.maturin]\nfeatures = [\"pyo3/extension-module\"]\n",
        )],
    );
    let n = native(&p).unwrap();
    assert!(n.command.ends_with("maturin develop"), "{n:?}");
    let rebuild = n.rebuild.unwrap();
    assert!(
        rebuild.starts_with("rm -rf \"$RALPH_NATIVE_SITE\" && maturin build --interpreter "),
        "{rebuild}"
    );
    assert!(
        rebuild.contains("--out \"$RALPH_NATIVE_SITE/wheel\" && "),
        "{rebuild}"
    );
    assert!(rebuild.contains("extractall(d)"), "{rebuild}");
    let setup_py = Project::in_memory(
        Path::new("/p"),
        &[("setup.py", "ext_modules=[Extension('x', ['x.c'])]\n")],
    );
    assert_eq!(
        native(&setup_py).unwrap().rebuild,
        None,
        "built in place, in the worktree"
    );
    // Cython sources beside a setup.py that names no extension of its own (a build helper
    // does): built by it all the same.
    let cython = Project::in_memory(
        Path::new("/p"),
        &[
            (
                "setup.py",
                "from build_helpers import setup_all\nsetup_all()\n",
            ),
            ("src/fastpkg/_speed.pyx", "def f(): pass\n"),
            ("src/fastpkg/__init__.py", ""),
            ("pyproject.toml", "[project]\nname = \"fastpkg\"\n"),
        ],
    );
    assert!(native(&cython).is_some_and(|n| n.command.ends_with("setup.py build_ext --inplace")));
    // Cython sources an in-project build backend compiles (yarl): compiled in place by Cython.
    let backend = Project::in_memory(
        Path::new("/p"),
        &[
            ("pyproject.toml", "[build-system]\nbuild-backend = \"pep517_backend.hooks\"\nbackend-path = [\"packaging\"]\n[project]\nname = \"yarl\"\n"),
            ("yarl/__init__.py", ""),
            ("yarl/_quoting_c.pyx", "cdef int x\n"),
        ],
    );
    let n = native(&backend).unwrap();
    assert!(
        n.command
            .ends_with("-m Cython.Build.Cythonize -i -3 yarl/_quoting_c.pyx"),
        "{n:?}"
    );
    assert_eq!(n.rebuild, None, "in place, in the worktree");
    // The checks find the rebuilt wheel first.
    let dir = tempfile::tempdir().unwrap();
    let wt = dir.path().join("3");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(
        wt.join("pyproject.toml"),
        "[project]\nname = \"x\"\n[tool.maturin]\n",
    )
    .unwrap();
    let vars = variables(&wt, Path::new("/r/.ralph/cache"));
    let path = &vars.iter().find(|(k, _)| k == "PYTHONPATH").unwrap().1;
    assert!(
        path.starts_with(&format!(
            "/r/.ralph/cache/after-change/3/native-site:{}",
            wt.display()
        )),
        "{path}"
    );
}

#[test]
fn a_setup_reaches_the_registries_of_the_package_managers_it_runs() {
    let c = Project::in_memory(
        Path::new("/p"),
        &[
            ("meson.build", "project('x', 'c')\n"),
            ("Makefile", "deps:\n\tpip install ninja\n"),
        ],
    );
    // A C project: no registry of its own, but pip reaches PyPI whatever the language.
    assert!(registries(&c).is_empty());
    let pip = registries_for("pip install meson", &c);
    assert_eq!(pip, ["files.pythonhosted.org", "pypi.org"]);
    assert_eq!(
        registries_for("python3 -m pip install --user meson ninja", &c),
        pip,
        "python -m pip is pip"
    );
    assert_eq!(
        registries_for("env CC=gcc bash -ec 'npm ci && cargo fetch'", &c),
        [
            "crates.io",
            "index.crates.io",
            "registry.npmjs.org",
            "registry.yarnpkg.com",
            "static.crates.io"
        ]
    );
    assert!(registries_for("go mod download", &c).contains(&"proxy.golang.org".to_owned()));
    assert!(registries_for("sudo apt-get install -y libfoo-dev", &c)
        .contains(&"deb.debian.org".to_owned()));
    assert!(registries_for("./configure && make", &c).is_empty());
    // A Python project's own registry stays, whatever its setup's words (a script of its own).
    let py = Project::in_memory(
        Path::new("/p"),
        &[("pyproject.toml", "[project]\nname='x'\n")],
    );
    assert_eq!(registries_for("./bootstrap.sh", &py), pip);
}
