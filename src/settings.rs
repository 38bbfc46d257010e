//! Command-line flags, the configuration file and the environment resolved into one
//! [`Settings`], in one place, so no command re-reads any of them.

use crate::config::{Config, ConfigError, ConfigSource, TrackerKind};
use crate::error::UserError;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A repository, `OWNER/NAME`; on GitLab the owner may be a group with subgroups
/// (`GROUP/SUB/NAME`: `owner` is then `GROUP/SUB`). GitHub and Forgejo refuse nested owners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoSlug {
    pub owner: String,
    pub name: String,
}

impl FromStr for RepoSlug {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let valid_part = |p: &str| {
            !p.is_empty()
                && p.len() <= 100
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
                && p != "."
                && p != ".."
        };
        match s.rsplit_once('/') {
            Some((owner, name)) if owner.split('/').all(valid_part) && valid_part(name) => {
                Ok(RepoSlug {
                    owner: owner.to_owned(),
                    name: name.trim_end_matches(".git").to_owned(),
                })
            }
            _ => Err(format!(
                "`{s}` is not a repository: expected OWNER/NAME, e.g. octo-org/octo-repo (GROUP/SUB/NAME on GitLab)"
            )),
        }
    }
}

impl fmt::Display for RepoSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// The name of ralph's directory in a repository.
pub const RALPH_DIR: &str = ".ralph";

/// `<root>/.ralph`.
pub fn ralph_dir(root: &Path) -> PathBuf {
    root.join(RALPH_DIR)
}

/// Finds the repository to work in: `-C PATH` (or the current directory), then upwards to
/// the nearest directory holding `.ralph` or `.git`; the starting directory when neither is
/// found (so `ralph init` works in a fresh directory).
pub fn find_root(dir: Option<&Path>) -> Result<PathBuf, UserError> {
    let start = match dir {
        Some(d) => {
            if !d.is_dir() {
                return Err(
                    UserError::usage(format!("-C {}: no such directory", d.display()))
                        .with_hint("pass the path of the repository to work in"),
                );
            }
            d.to_path_buf()
        }
        None => std::env::current_dir().map_err(|e| {
            UserError::usage(format!("cannot read the current directory: {e}"))
                .with_hint("run ralph from an existing directory, or pass -C PATH")
        })?,
    };
    let start = start.canonicalize().unwrap_or(start);
    let found = start
        .ancestors()
        .find(|d| ralph_dir(d).is_dir() || d.join(".git").exists());
    Ok(found.unwrap_or(&start).to_path_buf())
}

/// Everything a command needs to know, resolved once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The repository's top directory.
    pub root: PathBuf,
    /// `<root>/.ralph`.
    pub ralph_dir: PathBuf,
    /// `--repo`, when given; the GitHub tracker falls back to `GITHUB_REPOSITORY` and the
    /// `origin` remote (`tracker::discover::repository`).
    pub repo: Option<RepoSlug>,
    /// `--tracker`, else the configuration's `tracker`.
    pub tracker: TrackerKind,
    pub config: Config,
    pub config_source: ConfigSource,
}

impl Settings {
    /// Loads the configuration of the repository at `root` and applies the flags over it.
    pub fn load(
        root: PathBuf,
        repo: Option<RepoSlug>,
        tracker: Option<TrackerKind>,
    ) -> Result<Settings, ConfigError> {
        let ralph_dir = ralph_dir(&root);
        let (config, config_source) = Config::load(&ralph_dir)?;
        Ok(Settings {
            tracker: tracker.unwrap_or(config.tracker),
            root,
            ralph_dir,
            repo,
            config,
            config_source,
        })
    }

    /// The folder of this repository's checkouts: under `[workspace] root`, else the default
    /// (see [`checkouts_dir`](crate::workspace::checkouts_dir)); refused when there is none.
    pub fn checkouts(&self) -> Result<PathBuf, crate::workspace::WorkspaceError> {
        crate::workspace::checkouts_dir(&self.root, self.config.workspace_root.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_slugs() {
        let r: RepoSlug = "octo-org/octo.repo".parse().unwrap();
        assert_eq!(
            (r.owner.as_str(), r.name.as_str()),
            ("octo-org", "octo.repo")
        );
        assert_eq!(r.to_string(), "octo-org/octo.repo");
        assert_eq!("a/b.git".parse::<RepoSlug>().unwrap().name, "b");
        let nested: RepoSlug = "group/sub/project".parse().unwrap();
        assert_eq!(
            (nested.owner.as_str(), nested.name.as_str()),
            ("group/sub", "project")
        );
        for bad in ["", "noslash", "a/", "/b", "a//c", "a b/c", "../x", "a/../c"] {
            assert!(bad.parse::<RepoSlug>().is_err(), "{bad}");
        }
    }

    #[test]
    fn root_is_found_upwards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".ralph")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(find_root(Some(&root.join("src/deep"))).unwrap(), root);
        let err = find_root(Some(&root.join("missing"))).unwrap_err();
        assert!(err.message.contains("no such directory"));
    }

    #[test]
    fn the_tracker_flag_overrides_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".ralph")).unwrap();
        std::fs::write(
            dir.path().join(".ralph/config.toml"),
            "tracker = \"local\"\n",
        )
        .unwrap();
        let s = Settings::load(dir.path().into(), None, None).unwrap();
        assert_eq!(s.tracker, TrackerKind::Local);
        let s = Settings::load(dir.path().into(), None, Some(TrackerKind::Github)).unwrap();
        assert_eq!(s.tracker, TrackerKind::Github);
    }
}
