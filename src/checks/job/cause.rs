//! Whose doing a CI job's failed step is, after the change: the machine's (the sandbox refused a
//! connection, a write landed where nothing may be written, the disk is full, a host cannot be
//! resolved), nobody's that ralph can tell (a step that only installs the job's tools by name —
//! `pip install tox`, `npm i -g pnpm` — builds nothing of the change), or the change's (anything
//! else: a build, code generation, the project's own package or native code failing to build).
//! A step that passed on the base and fails after the change for a reason not the change's
//! leaves the check unverified, held against nobody.

/// What in a step's output says the machine stopped it, and how ralph says so.
const SIGNS: [(&str, &str); 8] = [
    (
        "Read-only file system",
        "it wrote where nothing may be written (a read-only file system)",
    ),
    (
        "EROFS",
        "it wrote where nothing may be written (a read-only file system)",
    ),
    ("No space left on device", "the disk is full"),
    (
        "Temporary failure in name resolution",
        "it needed a host it could not reach (no name resolution)",
    ),
    (
        "Could not resolve host",
        "it needed a host it could not reach (no name resolution)",
    ),
    (
        "Name or service not known",
        "it needed a host it could not reach (no name resolution)",
    ),
    (
        "Network is unreachable",
        "it needed the network, which it cannot reach",
    ),
    (
        "ProxyError",
        "it needed a host the network policy does not allow",
    ),
];

/// Why the step `command` failing after the change is not the change's doing: the sandbox's
/// refusals of its connections (`refused`), a sign in what it printed (`said`), or a step that
/// only installs tools by name. `None`: the change's doing.
pub fn not_the_changes(command: &str, said: &str, refused: Option<&str>) -> Option<String> {
    if let Some(r) = refused {
        return Some(r.to_owned());
    }
    if let Some((_, why)) = SIGNS.iter().find(|(sign, _)| said.contains(sign)) {
        return Some((*why).to_owned());
    }
    crate::checks::tools::installs_only_by_name(command)
        .then(|| "it only installs the job's tools by name, nothing of the change's".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_doing_is_told_from_the_changes() {
        let build = "pip install .";
        assert!(not_the_changes(
            build,
            "error: [Errno 30] Read-only file system: '/home/u/.venv/lib/python3.11/site-packages/x'",
            None
        )
        .unwrap()
        .contains("read-only"));
        assert!(
            not_the_changes(build, "OSError: [Errno 28] No space left on device", None).is_some()
        );
        assert_eq!(
            not_the_changes(
                build,
                "anything",
                Some("the sandbox refused its connection(s) to pypi.org:443")
            )
            .as_deref(),
            Some("the sandbox refused its connection(s) to pypi.org:443")
        );
        // The project's own package failing to build is the change's.
        assert_eq!(
            not_the_changes(
                build,
                "src/ext.c:12:5: error: expected ';' before '}' token",
                None
            ),
            None
        );
        assert_eq!(
            not_the_changes("make cython", "Error compiling Cython file", None),
            None
        );
        assert_eq!(
            not_the_changes("pip install -e '.[test]'", "error", None),
            None
        );
        // Tools installed by name build nothing of the change.
        for tools in [
            "pip install tox",
            "python -m pip install --upgrade pip && pip install -r requirements-dev.txt",
            "npm install -g pnpm@9",
            "cargo install cargo-nextest --locked",
            "uv tool install ruff",
            "pipx install nox && go install golang.org/x/tools/cmd/goimports@v0.24.0",
            "yarn global add serve",
        ] {
            assert!(not_the_changes(tools, "error", None).is_some(), "{tools}");
        }
        assert_eq!(not_the_changes("npm ci", "npm ERR! code E404", None), None);
        // An install by name beside one of the project is the project's.
        assert_eq!(
            not_the_changes("pip install tox && pip install -e .", "error", None),
            None
        );
        assert_eq!(not_the_changes("uv sync", "error", None), None);
    }
}
