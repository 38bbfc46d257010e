//! The house's layers as a test: every top-level module of `src/` has a floor, and a module may
//! `use crate::…` only modules on lower floors. An import to the same floor or above — an upward
//! import, the start of a circle — fails with the file, the line and the two floors. Test code
//! (`#[cfg(test)]` modules, `tests.rs` files) and the test-only `fixtures` module are not the
//! house's structure and are not read.
//!
//! To add a module, give it a floor here: above everything it imports, below everything that
//! imports it.

use std::path::{Path, PathBuf};

/// The floors, ground first. A module imports only from floors below its own.
const FLOORS: [&[&str]; 16] = [
    &["env", "error", "fsutil", "mix", "secret", "timeline"],
    &["untrusted_dir"],
    &["process", "retry", "progress"],
    &["output", "workspace"],
    &["spec"],
    &["market"],
    &["ledger"],
    &["config"],
    &["settings", "replay", "checks", "demo"],
    &["tracker", "agent", "verify"],
    &["run_report"],
    &["follow_report"],
    &["render"],
    &["compete", "action"],
    &["doctor", "refine", "follow"],
    &["cli"],
];

/// Modules that are not rooms of the house: test data, the crate's root and the binary.
const NOT_READ: [&str; 3] = ["fixtures", "lib", "main"];

fn floor(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

/// The top-level module a file under `src/` belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// The `crate::<module>` names a line of production code uses, with the line number.
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("#[cfg(test)]") {
            break; // the file's test module: test code, not structure
        }
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split(" //").next().unwrap_or(code);
        for (at, _) in code.match_indices("crate::") {
            let preceded = code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
            if preceded {
                continue;
            }
            let rest = &code[at + "crate::".len()..];
            assert!(
                !rest.starts_with('{'),
                "line {}: `use crate::{{…}}` hides which modules are used; name each",
                i + 1
            );
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((i + 1, name));
            }
        }
    }
    out
}

#[test]
fn no_module_imports_its_own_floor_or_above() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut unplaced = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let name = file.file_name().unwrap().to_string_lossy();
        if NOT_READ.contains(&module.as_str()) || name == "tests.rs" {
            continue;
        }
        let Some(own) = floor(&module) else {
            unplaced.push(module);
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, used) in imports(&text) {
            if used == module || NOT_READ.contains(&used.as_str()) {
                continue;
            }
            match floor(&used) {
                Some(f) if f < own => {}
                Some(f) => wrong.push(format!(
                    "{}:{line}: `{module}` (floor {own}) uses `crate::{used}` (floor {f})",
                    file.strip_prefix(&src).unwrap().display()
                )),
                None => unplaced.push(used),
            }
        }
    }
    unplaced.sort();
    unplaced.dedup();
    assert!(
        unplaced.is_empty(),
        "modules with no floor in tests/it/layers.rs: {unplaced:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports that run up or sideways:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_finds_imports_and_skips_comments_and_test_code() {
    let text = "use crate::market::Proposal;\n// crate::cli in a comment\nfn f() { crate::render::x(); } // crate::doctor\nlet s = \"$crate::x\";\n#[cfg(test)]\nmod tests { use crate::cli; }\n";
    assert_eq!(
        imports(text),
        [(1, "market".to_owned()), (3, "render".to_owned())]
    );
}

#[test]
fn every_floor_names_a_module_that_exists() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    for module in FLOORS.iter().flat_map(|f| f.iter()) {
        assert!(
            src.join(module).is_dir() || src.join(format!("{module}.rs")).is_file(),
            "`{module}` is on a floor but not in src/"
        );
    }
}

/// Inside `compete/`, the loop that drives a competition (`run.rs`) sits on top: the phases are
/// functions over the crew and the book (`crew.rs`) and never import the loop back, and `Run`
/// has its behaviour in one place.
#[test]
fn the_competition_loop_is_imported_by_no_phase() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/compete");
    let mut files = Vec::new();
    crate::common::rust_files(&dir, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "run.rs" || name == "tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
        for (i, line) in code.lines().enumerate() {
            if line.contains("super::run")
                || line.starts_with("impl Run<")
                || line.contains("> Run<")
            {
                wrong.push(format!("compete/{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "phases that reach back into the loop:\n{}",
        wrong.join("\n")
    );
}

/// The modules that work in worktrees (and the report folders checks write): inside them, files
/// are touched only through `untrusted_dir`, which never follows a link an agent left, never
/// opens a FIFO or a device, and bounds every read. A direct `std::fs` call there is allowed only
/// on a path ralph alone writes, each file listed below with how many such lines it has and
/// which paths they touch. A new one fails this test: go through `untrusted_dir`, or — when the
/// path is truly not the agents' — add it here with the reason.
const WORKTREE_MODULES: [&str; 8] = [
    "workspace",
    "checks",
    "compete",
    "follow",
    "verify.rs",
    "spec",
    "agent",
    "process",
];

/// Files of [`WORKTREE_MODULES`] with direct file-system calls on paths no agent or check
/// writes: (file under `src/`, number of lines, the paths).
const OWN_PATHS: [(&str, usize, &str); 29] = [
    ("process/egress/proxy.rs", 3, "the network gates' sockets in ralph's own folder, and the folder, removed at exit"),
    ("checks/confined.rs", 1, "ralph's own build caches and scratch folders, made before a check starts"),
    ("checks/environment.rs", 1, "the worktree's private cache folder under .ralph/cache"),
    ("agent/state.rs", 7, "the user's agent CLI state (bounded regular-file reads), ralph's private copies of it and the fresh homes it makes (folders in its own temporary folder); the agent's copy is read through untrusted_dir"),
    ("process/gitconfig.rs", 1, "the repository's and the user's git configuration (a bounded regular-file read)"),
    (
        "agent/codex.rs",
        1,
        "Codex's own config.toml in its state folder (a bounded regular-file read)",
    ),
    (
        "checks/baseline.rs",
        3,
        "the baseline cache under .ralph/cache",
    ),
    (
        "checks/shared_target.rs",
        7,
        "the shared Cargo target's lock and marker under .ralph/cache",
    ),
    ("compete/finish.rs", 1, "the run report under .ralph/runs"),
    (
        "compete/prepare.rs",
        5,
        "the setup marker and the private caches under .ralph/cache",
    ),
    (
        "compete/state.rs",
        12,
        "the run state, the trees judged and the lock under .ralph/runs",
    ),
    (
        "follow/revision.rs",
        1,
        "the run report under .ralph/runs (a bounded regular-file read)",
    ),
    (
        "process/bwrap.rs",
        2,
        "the worktree's admin folder in the common git dir; the host's paths",
    ),
    ("process/sandbox/mod.rs", 3, "~/.cache and the caches the environment names, made for a setup; the empty file hidden files are shown as, in ralph's own scrub folder, removed at exit"),
    ("process/sandbox/places.rs", 1, "agents' state folders, made when missing"),
    ("process/sandbox/host.rs", 2, "/proc/sys and the git configurations shown scrubbed"),
    (
        "workspace/checkout.rs",
        9,
        "the checkouts' folders, ralph's own, and those earlier versions made under .ralph/worktrees: listed, made, removed whole (never followed); the worktree registrations' lock in the common git dir",
    ),
    (
        "workspace/git.rs",
        3,
        "the repository's worktrees folder; the pre-commit cache under .ralph/cache; ralph's own index, copied for the hook",
    ),
    (
        "workspace/ledger_push.rs",
        7,
        "the ledger's own worktree, the checkouts' folder it is made in, and .ralph/events",
    ),
    (
        "workspace/leftovers.rs",
        2,
        "the checkouts' folder, ralph's own: listed, and removed once empty",
    ),
    (
        "workspace/memory.rs",
        9,
        "the in-memory workspace of the tests",
    ),
    (
        "workspace/own_git.rs",
        1,
        "ralph's own index, in its registration of the checkout (a bounded regular-file read)",
    ),
    (
        "workspace/revision.rs",
        1,
        "the repository's worktrees folder",
    ),
    (
        "workspace/seal.rs",
        16,
        "the common git dir and the global git config (bounded, never blocking)",
    ),
    ("agent/replay.rs", 2, "the recordings folder"),
    ("checks/tools/tool.rs", 1, "a check run's own folder (reports)"),
    (
        "checks/tools/ask.rs",
        1,
        "a check run's own folder (its tools' state)",
    ),
    (
        "checks/tools/unittest.rs",
        1,
        "the unittest hook, into a check run's own folder",
    ),
    (
        "checks/workflows/interpreters.rs",
        1,
        "the names of the interpreters pyenv and uv keep (a listing, nothing read)",
    ),
];

/// The lines of production code in `text` that call the file system directly.
fn fs_calls(text: &str) -> Vec<(usize, String)> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| {
            [
                "std::fs",
                "tokio::fs",
                "fsutil::read",
                "File::open",
                "OpenOptions::new",
            ]
            .iter()
            .any(|p| l.contains(p))
        })
        .map(|(i, l)| (i + 1, l.trim().to_owned()))
        .collect()
}

#[test]
fn worktree_files_are_touched_only_through_untrusted_dir() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for module in WORKTREE_MODULES {
        let mut files = Vec::new();
        if module.ends_with(".rs") {
            files.push(src.join(module));
        } else {
            crate::common::rust_files(&src.join(module), &mut files);
        }
        files.sort();
        for file in files {
            let rel = file.strip_prefix(&src).unwrap().display().to_string();
            if rel.ends_with("tests.rs") {
                continue;
            }
            let calls = fs_calls(&std::fs::read_to_string(&file).unwrap());
            let allowed = OWN_PATHS
                .iter()
                .find(|(f, ..)| *f == rel)
                .map_or(0, |(_, n, _)| *n);
            if calls.len() != allowed {
                wrong.push(format!(
                    "{rel}: {} direct file-system line(s), {allowed} allowed:\n{}",
                    calls.len(),
                    calls
                        .iter()
                        .map(|(n, l)| format!("    {n}: {l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "file-system calls outside untrusted_dir in modules that work in worktrees (see OWN_PATHS):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_file_system_reader_skips_comments_and_test_code() {
    let text = "let a = std::fs::read(p);\n// std::fs::write in a comment\nlet d = dir.read_file(p);\n#[cfg(test)]\nmod tests { std::fs::write(p, b); }\n";
    assert_eq!(
        fs_calls(text),
        [(1, "let a = std::fs::read(p);".to_owned())]
    );
}

/// The lines of production code in `text` that start a program without the one wrapper.
fn raw_commands(text: &str) -> Vec<(usize, String)> {
    let code = text.split("\n#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| l.contains("process::Command") || l.contains("std::process::Stdio"))
        .map(|(i, l)| (i + 1, l.trim().to_owned()))
        .collect()
}

#[test]
fn every_program_ralph_starts_goes_through_the_one_process_wrapper() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    crate::common::rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        // fixtures.rs is compiled for tests only (`#[cfg(test)] mod fixtures`).
        if rel.starts_with("process/") || rel.ends_with("tests.rs") || rel == "fixtures.rs" {
            continue;
        }
        for (n, line) in raw_commands(&std::fs::read_to_string(&file).unwrap()) {
            wrong.push(format!("{rel}:{n}: {line}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "programs started outside src/process/ (use process::Cmd: timeouts, bounded output, the environment allowlist, the sandbox):\n{}",
        wrong.join("\n")
    );
    assert_eq!(
        raw_commands("let c = std::process::Command::new(\"x\");\n// std::process::Command in a comment\n#[cfg(test)]\nmod tests { std::process::Command::new(\"y\"); }\n").len(),
        1
    );
}
