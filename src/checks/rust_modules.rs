//! Where a Rust source file's tests really are: the test binaries cargo builds that include
//! the file, and the module path it has in each — read from the crate roots down through the
//! `mod` declarations (`#[path]` included), `include!` and `automod::dir!`, as the compiler
//! does. A test in `tests/regression/issue1004.rs` made a module of `tests/regression.rs` by
//! `automod::dir!("tests/regression")` is `tests/regression.rs::issue1004::test` in cargo's
//! report, and nothing else is; the bare `test` another file also names is another test.

use std::collections::BTreeSet;

/// Read access to the project's files (relative paths, `/`-separated).
pub trait Tree {
    /// The text of the regular file `rel`, when there is one.
    fn text(&self, rel: &str) -> Option<String>;
    /// The regular files and folders in the folder `rel`: `(name, is_dir)`.
    fn list(&self, rel: &str) -> Vec<(String, bool)>;
}

/// One place a file's items are compiled: the test binary cargo announces (`src/lib.rs`,
/// `tests/regression.rs`, relative to its package) and the module path there (`a::b::`, empty
/// at the crate root).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub binary: String,
    pub module: String,
}

impl Place {
    /// The id cargo's report gives the test `name` (itself `inline::path::fn`) of this file.
    pub fn test_id(&self, name: &str) -> String {
        format!("{}::{}{name}", self.binary, self.module)
    }
}

/// The most files one search reads: a pathological tree is cut off, not walked.
const MAX_FILES: usize = 2_000;

/// The deepest module nesting one search follows.
const MAX_DEPTH: usize = 64;

/// Every place `file` is compiled in its package; empty when no crate root reaches it.
pub fn places(tree: &dyn Tree, file: &str) -> Vec<Place> {
    package_of(tree, file).map_or_else(Vec::new, |package| places_in(tree, &package, file))
}

/// [`places`] of `file` in the package at `package`.
fn places_in(tree: &dyn Tree, package: &str, file: &str) -> Vec<Place> {
    let rel = strip(file, package);
    let mut out = BTreeSet::new();
    let mut budget = MAX_FILES;
    // The roots likeliest to reach the file first: a `#[path]` may still reach across.
    let mut all = roots(tree, package);
    all.sort_by_key(|root| !related(root, rel));
    for root in all {
        let mut walk = Walk {
            tree,
            package,
            target: file,
            binary: &root,
            found: &mut out,
            budget: &mut budget,
            seen: BTreeSet::new(),
            stack: Vec::new(),
        };
        walk.file(&join(package, &root), true, "");
    }
    out.into_iter().collect()
}

/// The crate roots (from the project's top) of the crates that compile `file`: touched, they
/// make cargo build those crates again — a file only a macro reads (`automod::dir!`) is not
/// among the files cargo watches, so a new one alone would leave the last build standing.
pub fn crate_roots(tree: &dyn Tree, file: &str) -> Vec<String> {
    let Some(package) = package_of(tree, file) else {
        return Vec::new();
    };
    let roots: BTreeSet<String> = places_in(tree, &package, file)
        .into_iter()
        .map(|p| join(&package, &p.binary))
        .collect();
    roots.into_iter().collect()
}

/// The folder of the package holding `file`: the nearest with a `Cargo.toml` (`""` at the top).
fn package_of(tree: &dyn Tree, file: &str) -> Option<String> {
    let mut dir = parent(file);
    loop {
        if tree.text(&join(dir, "Cargo.toml")).is_some() {
            return Some(dir.to_owned());
        }
        if dir.is_empty() {
            return None;
        }
        dir = parent(dir);
    }
}

/// The crate roots of the package at `package`, relative to it: the library, the binaries,
/// the integration tests, benches and examples cargo finds by itself, and the `path`s its
/// manifest names.
fn roots(tree: &dyn Tree, package: &str) -> Vec<String> {
    let mut out: Vec<String> = ["src/lib.rs", "src/main.rs"]
        .into_iter()
        .filter(|r| tree.text(&join(package, r)).is_some())
        .map(str::to_owned)
        .collect();
    for dir in ["src/bin", "tests", "benches", "examples"] {
        for (name, is_dir) in tree.list(&join(package, dir)) {
            let root = if is_dir {
                format!("{dir}/{name}/main.rs")
            } else if name.ends_with(".rs") {
                format!("{dir}/{name}")
            } else {
                continue;
            };
            if is_dir && tree.text(&join(package, &root)).is_none() {
                continue;
            }
            out.push(root);
        }
    }
    if let Some(manifest) = tree.text(&join(package, "Cargo.toml")) {
        for line in manifest.lines() {
            let t = line.trim();
            let Some(value) = t
                .strip_prefix("path")
                .map(str::trim_start)
                .and_then(|v| v.strip_prefix('='))
            else {
                continue;
            };
            let path = value
                .trim()
                .trim_matches(['"', '\''])
                .trim_start_matches("./");
            if path.ends_with(".rs") && !out.iter().any(|r| r == path) {
                out.push(path.to_owned());
            }
        }
    }
    out
}

/// Whether the root `root` likely reaches the file `rel` (both relative to the package): a root
/// under `tests/` files under `tests/`, one under `src/` files under `src/`.
fn related(root: &str, rel: &str) -> bool {
    let top = |p: &str| p.split('/').next().unwrap_or("").to_owned();
    let (r, f) = (top(root), top(rel));
    !matches!(r.as_str(), "src" | "tests") || !matches!(f.as_str(), "src" | "tests") || r == f
}

/// One search from a crate root down its modules.
struct Walk<'a> {
    tree: &'a dyn Tree,
    package: &'a str,
    /// The file looked for (from the project's top).
    target: &'a str,
    binary: &'a str,
    found: &'a mut BTreeSet<Place>,
    budget: &'a mut usize,
    seen: BTreeSet<(String, String)>,
    /// The files from the crate root down to the one being read.
    stack: Vec<String>,
}

impl Walk<'_> {
    /// Reads `path` as the module `module` (`a::b::`); `mod_rs` when its children live in its
    /// own folder (a crate root, `mod.rs`, a `#[path]` file), else in a folder of its name.
    fn file(&mut self, path: &str, mod_rs: bool, module: &str) {
        // A file on the way down again (a macro listing its own folder, a `#[path]` loop) is
        // a cycle, and no real crate nests deeper: neither is walked.
        if *self.budget == 0
            || self.stack.len() >= MAX_DEPTH
            || self.stack.iter().any(|p| p == path)
            || !self.seen.insert((path.to_owned(), module.to_owned()))
        {
            return;
        }
        *self.budget -= 1;
        self.stack.push(path.to_owned());
        self.read(path, mod_rs, module);
        self.stack.pop();
    }

    /// Reads the declarations of `path` (see [`file`](Self::file)).
    fn read(&mut self, path: &str, mod_rs: bool, module: &str) {
        if path == self.target {
            self.found.insert(Place {
                binary: self.binary.to_owned(),
                module: module.to_owned(),
            });
        }
        let Some(text) = self.tree.text(path) else {
            return;
        };
        let children_dir = if mod_rs {
            parent(path).to_owned()
        } else {
            path.trim_end_matches(".rs").to_owned()
        };
        let lines: Vec<&str> = text.lines().collect();
        let inline = module_paths(&lines);
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("").trim();
            let here = format!("{module}{}", inline[i]);
            let inline_dir = join(&children_dir, &inline[i].replace("::", "/"));
            let inline_dir = inline_dir.trim_end_matches('/');
            if let Some(name) = declared_mod(code) {
                let child_module = format!("{here}{name}::");
                match path_attr(&lines[..i]) {
                    // `#[path]` is relative to the folder of the file declaring it.
                    Some(p) => self.file(&normalize(&join(parent(path), &p)), true, &child_module),
                    None => {
                        let flat = join(inline_dir, &format!("{name}.rs"));
                        if self.tree.text(&flat).is_some() {
                            self.file(&flat, false, &child_module);
                        } else {
                            self.file(
                                &join(inline_dir, &format!("{name}/mod.rs")),
                                true,
                                &child_module,
                            );
                        }
                    }
                }
            } else if let Some(dir) = macro_literal(code, "automod::dir!") {
                let dir = join(self.package, dir.trim_start_matches("./"));
                for (name, is_dir) in self.tree.list(&dir) {
                    if let Some(stem) = name.strip_suffix(".rs").filter(|_| !is_dir) {
                        let file = join(&dir, &name);
                        self.file(&file, true, &format!("{here}{stem}::"));
                    }
                }
            } else if let Some(included) = macro_literal(code, "include!") {
                // `concat!(env!("CARGO_MANIFEST_DIR"), "/x.rs")` is the package's; a plain
                // literal is beside the including file.
                let file = if code.contains("CARGO_MANIFEST_DIR") {
                    join(self.package, included.trim_start_matches('/'))
                } else {
                    join(parent(path), &included)
                };
                if file.ends_with(".rs") {
                    self.file(&normalize(&file), mod_rs, &here);
                }
            }
        }
    }
}

/// For each line, the inline modules it is in (`outer::inner::`, empty at the top): two tests
/// of one name in two modules are two tests.
pub fn module_paths(lines: &[&str]) -> Vec<String> {
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        out.push(open.iter().map(|(m, _)| format!("{m}::")).collect());
        let code = line.split("//").next().unwrap_or("");
        let t = code.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if code.contains('{') && !name.is_empty() {
                open.push((name, depth));
            }
        }
        let mut in_string = false;
        let mut escaped = false;
        let bare = code.replace("'{'", "").replace("'}'", "");
        for c in bare.chars() {
            if in_string {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => escaped = false,
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    while open.last().is_some_and(|(_, d)| *d >= depth) {
                        open.pop();
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The module `mod name;` declares (`pub`, `pub(crate)` and the like allowed).
fn declared_mod(code: &str) -> Option<String> {
    let mut t = code;
    if let Some(rest) = t.strip_prefix("pub") {
        t = rest.trim_start();
        if t.starts_with('(') {
            t = t[t.find(')')? + 1..].trim_start();
        }
    }
    let rest = t.strip_prefix("mod ")?.trim();
    let name = rest.strip_suffix(';')?.trim();
    let name = name.strip_prefix("r#").unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| name.to_owned())
}

/// The `#[path = "…"]` among the attributes right above a declaration (the last lines of
/// `above`).
fn path_attr(above: &[&str]) -> Option<String> {
    above
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
        .find_map(|l| {
            let rest = l.strip_prefix("#[path")?.trim_start().strip_prefix('=')?;
            let q = rest.find('"')? + 1;
            let end = rest[q..].find('"')?;
            Some(rest[q..q + end].to_owned())
        })
}

/// The last string literal in the call of `mac` on this line: the folder of
/// `automod::dir!("tests/x")`, the file of `include!("x.rs")`.
fn macro_literal(code: &str, mac: &str) -> Option<String> {
    let at = code.find(mac)?;
    let args = &code[at + mac.len()..];
    let end = args.rfind('"')?;
    let start = args[..end].rfind('"')? + 1;
    Some(args[start..end].to_owned())
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn join(dir: &str, rel: &str) -> String {
    match (dir.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_owned(),
        (_, true) => dir.to_owned(),
        _ => format!("{dir}/{rel}"),
    }
}

fn strip<'a>(file: &'a str, package: &str) -> &'a str {
    if package.is_empty() {
        file
    } else {
        file.strip_prefix(package)
            .map_or(file, |r| r.trim_start_matches('/'))
    }
}

/// `a/./b/../c` as `a/c`.
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

/// A project held in memory, for tests.
#[cfg(test)]
pub(crate) struct Files(pub std::collections::BTreeMap<&'static str, &'static str>);

#[cfg(test)]
impl Tree for Files {
    fn text(&self, rel: &str) -> Option<String> {
        self.0.get(rel).map(|t| t.to_string())
    }
    fn list(&self, rel: &str) -> Vec<(String, bool)> {
        let prefix = format!("{rel}/");
        let mut out: Vec<(String, bool)> = self
            .0
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .map(|rest| match rest.split_once('/') {
                Some((dir, _)) => (dir.to_owned(), true),
                None => (rest.to_owned(), false),
            })
            .collect();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(files: &[(&'static str, &'static str)], file: &str) -> Vec<String> {
        places(&Files(files.iter().copied().collect()), file)
            .iter()
            .map(|p| p.test_id("t"))
            .collect()
    }

    #[test]
    fn automod_modules_are_named_by_their_file() {
        // serde_json's layout: every file under tests/regression names its test `test`.
        let files = [
            ("Cargo.toml", "[package]\nname = \"serde_json\"\n"),
            ("src/lib.rs", "mod de;\n"),
            ("src/de.rs", ""),
            (
                "tests/regression.rs",
                "mod regression {\n    automod::dir!(\"tests/regression\");\n}\n",
            ),
            ("tests/regression/issue845.rs", "#[test]\nfn test() {}\n"),
            (
                "tests/regression/issue1004.rs",
                "#![cfg(feature = \"arbitrary_precision\")]\n",
            ),
            ("tests/test.rs", "#[test]\nfn test() {}\n"),
        ];
        assert_eq!(
            at(&files, "tests/regression/issue1004.rs"),
            ["tests/regression.rs::regression::issue1004::t"]
        );
        assert_eq!(at(&files, "tests/test.rs"), ["tests/test.rs::t"]);
        assert!(at(&files, "src/unreached.rs").is_empty());
    }

    #[test]
    fn a_files_crate_roots_are_named_from_the_projects_top() {
        let files = [
            ("Cargo.toml", "[workspace]\nmembers = [\"json\"]\n"),
            ("json/Cargo.toml", "[package]\nname = \"json\"\n"),
            ("json/src/lib.rs", "#[cfg(test)]\nmod unit;\n"),
            ("json/src/unit.rs", ""),
            (
                "json/tests/regression/main.rs",
                "automod::dir!(\"tests/regression\");\n",
            ),
            ("json/tests/regression/issue2.rs", ""),
        ];
        let tree = Files(files.iter().copied().collect());
        assert_eq!(
            crate_roots(&tree, "json/tests/regression/issue2.rs"),
            ["json/tests/regression/main.rs"]
        );
        assert_eq!(crate_roots(&tree, "json/src/unit.rs"), ["json/src/lib.rs"]);
        assert!(crate_roots(&tree, "json/src/unreached.rs").is_empty());
        assert!(crate_roots(&tree, "loose.rs").is_empty());
        // A file that declares itself (a hostile one) is a cycle, walked once.
        let looped = Files(
            [
                ("Cargo.toml", "[package]\n"),
                ("src/lib.rs", "#[path = \"lib.rs\"]\nmod again;\nmod a;\n"),
                ("src/a.rs", "#[path = \"../src/a.rs\"]\nmod b;\n"),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(
            places(&looped, "src/a.rs")
                .iter()
                .map(|p| p.test_id("t"))
                .collect::<Vec<_>>(),
            ["src/lib.rs::a::t"]
        );
    }

    #[test]
    fn mod_declarations_path_attributes_and_includes_are_followed() {
        let files = [
            (
                "Cargo.toml",
                "[package]\n[[test]]\nname = \"it\"\npath = \"tests/it/main.rs\"\n",
            ),
            (
                "src/lib.rs",
                "pub mod a;\n#[cfg(test)]\n#[path = \"odd/place.rs\"]\nmod tests;\n",
            ),
            (
                "src/a.rs",
                "pub(crate) mod b;\nmod inline {\n    mod deep;\n}\n",
            ),
            ("src/a/b/mod.rs", "include!(\"gen.rs\");\n"),
            ("src/a/b/gen.rs", ""),
            ("src/a/inline/deep.rs", ""),
            ("src/odd/place.rs", ""),
            (
                "tests/lexical.rs",
                "#[path = \"../src/a.rs\"]\nmod shared;\n",
            ),
            ("src/main.rs", "mod a;\n"),
            ("tests/it/main.rs", "mod parse;\n"),
            ("tests/it/parse.rs", ""),
        ];
        assert_eq!(
            at(&files, "src/a/b/mod.rs"),
            ["src/lib.rs::a::b::t", "src/main.rs::a::b::t"]
        );
        assert_eq!(at(&files, "src/a/b/gen.rs")[0], "src/lib.rs::a::b::t");
        assert_eq!(
            at(&files, "src/a/inline/deep.rs")[0],
            "src/lib.rs::a::inline::deep::t"
        );
        assert_eq!(at(&files, "src/odd/place.rs"), ["src/lib.rs::tests::t"]);
        // A test crate that takes a source file in by `#[path = "../src/…"]`.
        let lexical: Vec<String> = places(&Files(files.iter().copied().collect()), "src/a.rs")
            .iter()
            .map(|p| p.test_id("t"))
            .collect();
        assert!(
            lexical.contains(&"tests/lexical.rs::shared::t".to_owned()),
            "{lexical:?}"
        );
        assert_eq!(
            at(&files, "tests/it/parse.rs"),
            ["tests/it/main.rs::parse::t"]
        );
    }

    #[test]
    fn a_workspace_members_binaries_are_relative_to_it() {
        let files = [
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            ("crates/core/Cargo.toml", "[package]\n"),
            ("crates/core/src/lib.rs", "mod x;\n"),
            ("crates/core/src/x.rs", ""),
            ("crates/core/tests/api.rs", ""),
        ];
        assert_eq!(at(&files, "crates/core/src/x.rs"), ["src/lib.rs::x::t"]);
        assert_eq!(at(&files, "crates/core/tests/api.rs"), ["tests/api.rs::t"]);
        assert!(at(&files, "elsewhere/x.rs").is_empty(), "no package");
    }

    #[test]
    fn declarations_are_read_as_written() {
        assert_eq!(
            declared_mod("pub(in crate::a) mod r#type;").as_deref(),
            Some("type")
        );
        assert_eq!(declared_mod("mod tests {"), None);
        assert_eq!(declared_mod("mod a::b;"), None);
        assert_eq!(
            macro_literal(
                "include!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/gen/x.rs\"));",
                "include!"
            )
            .as_deref(),
            Some("/gen/x.rs")
        );
        assert_eq!(normalize("a/./b/../c"), "a/c");
    }
}
