//! What ralph knows per language and not per tool: which files say a project is of it, which of
//! them make its environment (their change makes the setup run again), and the package registry
//! its installs reach — its hosts, and the mirrors the environment or the project name in its
//! place. A tool says which registry it downloads from ([`super::Tool::registry`]); the project's
//! own ecosystems add theirs, since what a script of its own installs cannot be read.

use crate::checks::project::Project;

/// A package registry a setup may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Registry {
    PyPI,
    Npm,
    Crates,
    GoProxy,
    Debian,
}

/// One language's ecosystem.
pub struct Ecosystem {
    pub name: &'static str,
    /// Whether a project is of it.
    pub present: fn(&Project) -> bool,
    /// Its manifests a project's environment is made from, whatever the tool (a tool's own
    /// lockfile is the tool's: [`super::Tool::manifests`]).
    pub manifests: &'static [&'static str],
    pub registry: Option<Registry>,
    /// The `[checks]` lines to start from, offered when a project of it has no check.
    pub example: &'static [&'static str],
    /// Its build cache: the variable that points it elsewhere, and the folder under ralph's cache
    /// it is pointed to — ralph's own, shared by the worktrees; the user's stays read-only to
    /// checks.
    pub build_cache: Option<(&'static str, &'static str)>,
    /// What its checks are named by beside another language's (`cargo-test`, `node-lint`).
    pub part: &'static str,
    /// The folders a project of it keeps its builds or its environment in, inside its tree.
    pub local_folders: &'static [&'static str],
    /// The variable and value that keep its builds off the network (a check has none).
    pub offline: Option<(&'static str, &'static str)>,
    /// The CI actions that install its toolchain, and what they provide.
    pub actions: &'static [&'static str],
    pub toolchain: &'static str,
    /// A `[checks] setup` that installs the project into an environment of its own, where one
    /// is needed for the checks to test the tree's code.
    pub setup: Option<&'static str>,
}

/// Every ecosystem ralph knows, in the order a project of several is offered an example.
pub static ECOSYSTEMS: &[Ecosystem] = &[
    Ecosystem {
        name: "Rust",
        present: |p| p.is_file("Cargo.toml"),
        manifests: &[],
        registry: Some(Registry::Crates),
        example: &[
            "format = \"cargo fmt --all -- --check\"",
            "lint = \"cargo clippy --all-targets -- -D warnings\"",
            "test = \"cargo test\"",
        ],
        actions: &[
            "dtolnay/rust-toolchain",
            "actions-rs/toolchain",
            "actions-rust-lang/setup-rust-toolchain",
        ],
        toolchain: "a Rust toolchain",
        build_cache: Some(("CARGO_TARGET_DIR", "target")),
        offline: Some(("CARGO_NET_OFFLINE", "true")),
        local_folders: &["target"],
        part: "cargo",
        setup: None,
    },
    Ecosystem {
        name: "Python",
        present: |p| is_python(p) || p.is_file("requirements.txt"),
        manifests: &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "requirements.txt",
            "requirements-dev.txt",
        ],
        registry: Some(Registry::PyPI),
        example: &["lint = \"flake8\"", "test = \"python -m pytest\""],
        actions: &["actions/setup-python"],
        toolchain: "a Python",
        build_cache: None,
        offline: None,
        local_folders: &[".venv"],
        part: "python",
        setup: Some("python -m venv .venv && .venv/bin/pip install -e ."),
    },
    Ecosystem {
        name: "Node",
        present: |p| p.is_file("package.json"),
        manifests: &["package.json"],
        registry: Some(Registry::Npm),
        example: &["lint = \"npm run lint\"", "test = \"npm test\""],
        actions: &["actions/setup-node"],
        toolchain: "a Node.js",
        build_cache: None,
        offline: None,
        local_folders: &["node_modules"],
        part: "node",
        setup: None,
    },
    Ecosystem {
        name: "Go",
        present: |p| p.is_file("go.mod"),
        manifests: &[],
        registry: Some(Registry::GoProxy),
        example: &["lint = \"go vet ./...\"", "test = \"go test ./...\""],
        actions: &["actions/setup-go"],
        toolchain: "a Go toolchain",
        build_cache: Some(("GOCACHE", "go-build")),
        offline: None,
        local_folders: &[],
        part: "go",
        setup: None,
    },
    Ecosystem {
        name: "Java",
        present: |p| p.is_file("pom.xml"),
        manifests: &[],
        registry: None,
        example: &["test = \"mvn -q test\""],
        actions: &["actions/setup-java"],
        toolchain: "a JDK",
        build_cache: None,
        offline: None,
        local_folders: &[],
        part: "java",
        setup: None,
    },
    Ecosystem {
        name: "C/C++",
        present: |p| p.is_file("CMakeLists.txt") || p.is_file("meson.build"),
        manifests: &[],
        registry: None,
        example: &[],
        actions: &[],
        toolchain: "a C or C++ toolchain",
        build_cache: Some(("CCACHE_DIR", "ccache")),
        offline: None,
        local_folders: &[],
        part: "c",
        setup: None,
    },
];

/// Whether the variable `var` names a folder a check writes outside its worktree, as an
/// ecosystem's build cache does (`CARGO_TARGET_DIR`).
pub fn names_build_cache(var: &str) -> bool {
    ECOSYSTEMS
        .iter()
        .any(|e| e.build_cache.is_some_and(|(v, _)| v == var))
}

/// The ecosystem named `name` (`Rust`), one of the table's.
pub fn named(name: &str) -> &'static Ecosystem {
    ECOSYSTEMS
        .iter()
        .find(|e| e.name == name)
        .expect("an ecosystem of the table")
}

/// The `[checks] setup` that installs a Python project into an environment of its own.
pub fn python_setup() -> &'static str {
    ECOSYSTEMS
        .iter()
        .find(|e| e.name == "Python")
        .and_then(|e| e.setup)
        .unwrap_or_default()
}

/// The `[checks]` lines offered where no ecosystem has an example of its own.
const EXAMPLE_ELSE: &[&str] = &["test = \"make test\""];

/// The `[checks]` lines to start from for the project `p`: its first ecosystem's example.
pub fn example(p: &Project) -> &'static [&'static str] {
    of(p)
        .map(|e| e.example)
        .find(|e| !e.is_empty())
        .unwrap_or(EXAMPLE_ELSE)
}

/// Whether `p` is a Python project.
pub fn is_python(p: &Project) -> bool {
    [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "tox.ini",
    ]
    .iter()
    .any(|f| p.is_file(f))
}

/// The project's import package: `src/<name>/` or `<name>/` holding an `__init__.py`, where
/// `<name>` is the project's name (dashes as underscores), else the only such folder.
pub fn package(p: &Project) -> Option<String> {
    let pyproject = p.text("pyproject.toml").unwrap_or_default();
    let name = pyproject
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == "name").then(|| v.trim().trim_matches(['"', '\'']).replace('-', "_"))
        })
        .filter(|n| !n.is_empty());
    for base in ["src", ""] {
        let under = |n: &str| {
            if base.is_empty() {
                n.to_owned()
            } else {
                format!("{base}/{n}")
            }
        };
        if let Some(n) = &name {
            if p.is_file(&format!("{}/__init__.py", under(n))) {
                return Some(under(n));
            }
        }
        let found: Vec<String> = p
            .list(base)
            .into_iter()
            .filter(|(n, kind)| {
                *kind == crate::untrusted_dir::Kind::Dir
                    && p.is_file(&format!("{}/__init__.py", under(n)))
            })
            .map(|(n, _)| n)
            .filter(|n| !n.starts_with('.') && n != "tests" && n != "test" && n != "docs")
            .collect();
        if let [only] = found.as_slice() {
            return Some(under(only));
        }
    }
    None
}

/// The files where Python tools keep their settings, in the order they are looked at.
const PYTHON_SETTINGS: [&str; 3] = ["pyproject.toml", "setup.cfg", "tox.ini"];

/// The file among Python's settings files (`pyproject.toml`, `setup.cfg`, `tox.ini`) of the
/// project `p` that declares `[section]` (or `[section.…]`).
pub fn declares(p: &Project, section: &str) -> Option<&'static str> {
    let head = format!("[{section}]");
    let sub = format!("[{section}.");
    PYTHON_SETTINGS.into_iter().find(|f| {
        p.text(f).is_some_and(|t| {
            t.lines().any(|l| {
                let l = l.trim();
                l == head || l.starts_with(&sub)
            })
        })
    })
}

/// The ecosystems of the project `p`.
pub fn of(p: &Project) -> impl Iterator<Item = &'static Ecosystem> + '_ {
    ECOSYSTEMS.iter().filter(move |e| (e.present)(p))
}

impl Registry {
    /// Its hosts.
    pub fn hosts(self) -> &'static [&'static str] {
        match self {
            Registry::PyPI => &["pypi.org", "files.pythonhosted.org"],
            Registry::Npm => &["registry.npmjs.org", "registry.yarnpkg.com"],
            Registry::Crates => &["index.crates.io", "static.crates.io", "crates.io"],
            Registry::GoProxy => &["proxy.golang.org", "sum.golang.org"],
            Registry::Debian => &["deb.debian.org", "security.debian.org"],
        }
    }

    /// The mirrors and private registries the environment and the project `p` name in its place.
    pub fn mirrors(self, p: &Project) -> Vec<String> {
        let env_list = |vars: &[&str], split: &dyn Fn(&str) -> Vec<String>| -> Vec<String> {
            vars.iter()
                .filter_map(|v| crate::env::non_empty(v))
                .flat_map(|v| split(&v))
                .collect()
        };
        match self {
            Registry::PyPI => {
                let mut urls = env_list(
                    &[
                        "PIP_INDEX_URL",
                        "PIP_EXTRA_INDEX_URL",
                        "UV_INDEX_URL",
                        "UV_DEFAULT_INDEX",
                        "UV_EXTRA_INDEX_URL",
                    ],
                    &|v| v.split_whitespace().map(str::to_owned).collect(),
                );
                urls.extend(urls_in(
                    &p.text("pyproject.toml").unwrap_or_default(),
                    "url",
                ));
                urls
            }
            Registry::Npm => {
                let mut urls: Vec<String> = crate::env::non_empty("npm_config_registry")
                    .into_iter()
                    .collect();
                for file in [".npmrc", ".yarnrc", ".yarnrc.yml"] {
                    let text = p.text(file).unwrap_or_default();
                    urls.extend(urls_in(&text, "registry"));
                    urls.extend(urls_in(&text, "npmRegistryServer"));
                }
                urls
            }
            Registry::Crates => urls_in(&p.text(".cargo/config.toml").unwrap_or_default(), "index"),
            Registry::GoProxy => env_list(&["GOPROXY"], &|v| {
                v.split([',', '|']).map(str::to_owned).collect()
            }),
            Registry::Debian => Vec::new(),
        }
    }
}

/// The URL values of `key = "…"` (or `key: …`, `key=…`) lines in a configuration `text`.
fn urls_in(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix(key)?;
            let value = rest.trim_start().strip_prefix(['=', ':'])?;
            let value = value.trim().trim_matches(['"', '\'']);
            value.contains("://").then(|| value.to_owned())
        })
        .collect()
}
