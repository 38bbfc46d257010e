//! [`IssueTracker`] over markdown files: `.ralph/issues/N.md` is issue N (format in
//! [`frontmatter`]), and the pull requests ralph "opens" for issue N are recorded in
//! `.ralph/issues/N.prs.json`. Every change is written atomically (a complete temporary file,
//! then a rename), so an interrupted run never leaves half a file. There are no users: nobody is
//! the current user, nobody is on record for a label, and whoever can edit the files has admin
//! permission.

pub mod frontmatter;
pub mod pulls;

use self::frontmatter::IssueFile;
use self::pulls::{LocalComment, LocalPull, RALPH_AUTHOR};
use super::{
    Issue, IssueQuery, IssueState, IssueTracker, LabelAction, LabelSpec, Labeled, NewPullRequest,
    Permission, PullRequest, Result, TrackerError,
};
use crate::fsutil::{read_regular, read_regular_text, write_atomic, Unreadable};
use crate::tracker::pulls::PullState;
use async_trait::async_trait;
use chrono::Utc;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The largest issue or pull-request file read (GitHub caps a body at 65,536 characters).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The local tracker rooted at a directory (normally `.ralph/issues`).
pub struct LocalTracker {
    dir: PathBuf,
    /// Serialises read-modify-write cycles within this process.
    write_lock: Mutex<()>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> TrackerError + '_ {
    move |source| TrackerError::LocalIo {
        path: path.to_owned(),
        source,
    }
}

impl LocalTracker {
    pub fn new(dir: PathBuf) -> LocalTracker {
        LocalTracker {
            dir,
            write_lock: Mutex::new(()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn issue_path(&self, number: u64) -> PathBuf {
        self.dir.join(format!("{number}.md"))
    }

    fn prs_path(&self, number: u64) -> PathBuf {
        self.dir.join(format!("{number}.prs.json"))
    }

    fn load(&self, number: u64) -> Result<(PathBuf, IssueFile)> {
        let path = self.issue_path(number);
        let text = match read_regular_text(&path, MAX_FILE_BYTES) {
            Ok(t) => t,
            Err(Unreadable::Missing) => {
                return Err(TrackerError::NotFound {
                    what: format!("issue #{number} ({})", path.display()),
                    forge: None,
                })
            }
            Err(Unreadable::Io(e)) => return Err(io_error(&path)(e)),
            Err(e) => {
                return Err(TrackerError::LocalFormat {
                    path,
                    message: e.to_string(),
                })
            }
        };
        let file = IssueFile::parse(&text).map_err(|message| TrackerError::LocalFormat {
            path: path.clone(),
            message,
        })?;
        Ok((path, file))
    }

    /// Loads issue `number`, applies `change`, and writes it back atomically.
    fn update(&self, number: u64, change: impl FnOnce(&mut IssueFile)) -> Result<()> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let (path, mut file) = self.load(number)?;
        let before = file.render();
        change(&mut file);
        let after = file.render();
        if after != before {
            write_atomic(&path, after.as_bytes()).map_err(io_error(&path))?;
        }
        Ok(())
    }

    fn to_issue(number: u64, file: &IssueFile) -> Issue {
        Issue {
            number,
            title: file.get("title").unwrap_or_default(),
            body: file.body.clone(),
            labels: file.get_list("labels"),
            state: match file.get("state").as_deref() {
                Some("closed") => IssueState::Closed,
                _ => IssueState::Open,
            },
            assignees: file.get_list("assignees"),
            author: file.get("author").filter(|a| !a.is_empty()),
            created_at: file.created(),
            is_pull_request: false,
            url: None,
        }
    }

    /// The issue numbers present, ascending.
    fn numbers(&self) -> Result<Vec<u64>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&self.dir)(e)),
        };
        let mut numbers: Vec<u64> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name();
                let stem = name.to_str()?.strip_suffix(".md")?;
                // Canonical names only: `012.md` would shadow `12.md`.
                (!stem.starts_with('0')).then_some(())?;
                stem.parse().ok()
            })
            .collect();
        numbers.sort_unstable();
        Ok(numbers)
    }

    fn load_pulls(&self, path: &Path) -> Result<Vec<LocalPull>> {
        match read_regular(path, MAX_FILE_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| TrackerError::LocalFormat {
                path: path.to_owned(),
                message: format!("not a list of pull requests: {e}"),
            }),
            Err(Unreadable::Missing) => Ok(Vec::new()),
            Err(Unreadable::Io(e)) => Err(io_error(path)(e)),
            Err(e) => Err(TrackerError::LocalFormat {
                path: path.to_owned(),
                message: e.to_string(),
            }),
        }
    }

    fn save_pulls(&self, path: &Path, pulls: &[LocalPull]) -> Result<()> {
        let mut json = serde_json::to_string_pretty(pulls).expect("pull requests serialise");
        json.push('\n');
        write_atomic(path, json.as_bytes()).map_err(io_error(path))
    }

    /// Every recorded pull request, with the issue whose file it is in.
    fn all_pulls(&self) -> Result<Vec<(u64, LocalPull)>> {
        let mut all = Vec::new();
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(all),
            Err(e) => return Err(io_error(&self.dir)(e)),
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let issue = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".prs.json"))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(issue) = issue {
                all.extend(self.load_pulls(&path)?.into_iter().map(|p| (issue, p)));
            }
        }
        Ok(all)
    }

    /// Whether `number` is an issue (its file exists) rather than a pull request.
    fn is_issue(&self, number: u64) -> bool {
        self.issue_path(number).is_file()
    }
}

#[async_trait]
impl IssueTracker for LocalTracker {
    fn pulls(&self) -> Option<&dyn super::pulls::PullRequestTracker> {
        Some(self)
    }

    fn describe(&self) -> String {
        format!("local issues in {}", self.dir.display())
    }

    async fn issue(&self, number: u64) -> Result<Issue> {
        let (_, file) = self.load(number)?;
        Ok(Self::to_issue(number, &file))
    }

    async fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>> {
        let mut out = Vec::new();
        for number in self.numbers()? {
            let (_, file) = self.load(number)?;
            let issue = Self::to_issue(number, &file);
            let state_ok = query.state.is_none_or(|s| s == issue.state);
            let labels_ok = query.labels.iter().all(|l| issue.has_label(l));
            if state_ok && labels_ok {
                out.push(issue);
            }
        }
        Ok(out)
    }

    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<()> {
        if !self.is_issue(number)
            && self.update_pull(number, |p| {
                for l in labels {
                    if !p.labels.iter().any(|c| c.eq_ignore_ascii_case(l)) {
                        p.labels.push(l.clone());
                    }
                }
            })?
        {
            return Ok(());
        }
        self.update(number, |file| {
            let mut current = file.get_list("labels");
            for l in labels {
                if !current.iter().any(|c| c.eq_ignore_ascii_case(l)) {
                    current.push(l.clone());
                }
            }
            file.set_list("labels", &current);
        })
    }

    async fn remove_label(&self, number: u64, label: &str) -> Result<bool> {
        let mut removed = false;
        if !self.is_issue(number)
            && self.update_pull(number, |p| {
                let before = p.labels.len();
                p.labels.retain(|c| !c.eq_ignore_ascii_case(label));
                removed = p.labels.len() != before;
            })?
        {
            return Ok(removed);
        }
        self.update(number, |file| {
            let mut current = file.get_list("labels");
            let before = current.len();
            current.retain(|c| !c.eq_ignore_ascii_case(label));
            removed = current.len() != before;
            if removed {
                file.set_list("labels", &current);
            }
        })?;
        Ok(removed)
    }

    async fn ensure_labels(&self, labels: &[LabelSpec]) -> Result<Vec<(String, LabelAction)>> {
        Ok(labels
            .iter()
            .map(|l| (l.name.clone(), LabelAction::NotNeeded))
            .collect())
    }

    async fn set_body(&self, number: u64, body: &str) -> Result<()> {
        self.update(number, |file| file.set_body(body))
    }

    async fn comment(&self, number: u64, body: &str) -> Result<()> {
        let body = &super::posted(body);
        if !self.is_issue(number)
            && self.update_pull(number, |p| {
                p.comments.push(LocalComment {
                    author: Some(RALPH_AUTHOR.into()),
                    at: Utc::now(),
                    body: body.to_owned(),
                })
            })?
        {
            return Ok(());
        }
        self.update(number, |file| file.push_comment(Utc::now(), body))
    }

    async fn comments(&self, number: u64) -> Result<Vec<String>> {
        let (_, file) = self.load(number)?;
        Ok(if file.comments.is_empty() {
            Vec::new()
        } else {
            vec![file.comments]
        })
    }

    async fn assign(&self, number: u64, logins: &[String]) -> Result<()> {
        self.update(number, |file| {
            let mut current = file.get_list("assignees");
            for l in logins {
                if !current.contains(l) {
                    current.push(l.clone());
                }
            }
            file.set_list("assignees", &current);
        })
    }

    async fn current_user(&self) -> Result<Option<String>> {
        Ok(None)
    }

    async fn create_pull_request(&self, pr: &NewPullRequest) -> Result<PullRequest> {
        let _guard = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        // The issue must exist, as on GitHub the branch must.
        self.load(pr.issue)?;
        let all = self.all_pulls()?;
        if let Some((_, existing)) = all.iter().find(|(_, p)| p.head == pr.head) {
            return Ok(existing.summary());
        }
        // Issues and pull requests share numbers, as on GitHub.
        let number = self
            .numbers()?
            .into_iter()
            .chain(all.iter().map(|(_, p)| p.number))
            .max()
            .unwrap_or(0)
            + 1;
        let created = PullRequest {
            number,
            title: super::posted(&pr.title),
            head: pr.head.clone(),
            base: pr.base.clone(),
            url: None,
        };
        let path = self.prs_path(pr.issue);
        let mut pulls = self.load_pulls(&path)?;
        pulls.push(LocalPull::opened(&created));
        self.save_pulls(&path, &pulls)?;
        // The body goes with the issue's record, where a reviewer looks.
        let body_path = self.dir.join(format!("{}.pr-{number}.md", pr.issue));
        let body = super::posted(&pr.body);
        write_atomic(&body_path, body.as_bytes()).map_err(io_error(&body_path))?;
        Ok(created)
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        Ok(self
            .all_pulls()?
            .into_iter()
            .find(|(_, p)| p.head == branch && p.state == PullState::Open)
            .map(|(_, p)| p.summary()))
    }

    async fn label_applied(&self, _number: u64, _label: &str) -> Result<Option<Labeled>> {
        Ok(None)
    }

    async fn permission(&self, _login: &str) -> Result<Permission> {
        Ok(Permission::Admin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> (tempfile::TempDir, LocalTracker) {
        let dir = tempfile::tempdir().unwrap();
        let t = LocalTracker::new(dir.path().join("issues"));
        std::fs::create_dir_all(t.dir()).unwrap();
        (dir, t)
    }

    fn write(t: &LocalTracker, n: u64, text: &str) {
        std::fs::write(t.issue_path(n), text).unwrap();
    }

    #[tokio::test]
    async fn reads_an_issue_file() {
        let (_d, t) = tracker();
        write(
            &t,
            12,
            "---\ntitle: Add a widget\nlabels: [ready]\nstate: open\nassignees: [alice]\nauthor: bob\ncreated: 2026-11-01T09:30:00Z\n---\n- [ ] one\n",
        );
        let i = t.issue(12).await.unwrap();
        assert_eq!(i.number, 12);
        assert_eq!(i.title, "Add a widget");
        assert_eq!(i.labels, ["ready"]);
        assert_eq!(i.state, IssueState::Open);
        assert_eq!(i.assignees, ["alice"]);
        assert_eq!(i.author.as_deref(), Some("bob"));
        assert_eq!(
            i.created_at.unwrap().to_rfc3339(),
            "2026-11-01T09:30:00+00:00"
        );
        assert_eq!(i.body, "- [ ] one\n");
    }

    #[tokio::test]
    async fn missing_and_malformed_issues_are_clear_errors() {
        let (_d, t) = tracker();
        let err = t.issue(3).await.unwrap_err();
        assert!(matches!(err, TrackerError::NotFound { forge: None, .. }));
        assert!(err.to_string().contains("3.md"));
        write(&t, 4, "no front matter\n");
        let err = t.issue(4).await.unwrap_err();
        assert!(matches!(err, TrackerError::LocalFormat { .. }), "{err}");
        assert!(err.to_string().contains("4.md"));
    }

    #[tokio::test]
    async fn labels_round_trip_and_nothing_else_changes() {
        let (_d, t) = tracker();
        let text =
            "---\ntitle: T\nlabels: [in-refinement, bug]\n# keep me\n---\nBody ✓\r\n- [ ] one\n";
        write(&t, 13, text);
        t.add_labels(13, &["ready".into(), "BUG".into()])
            .await
            .unwrap();
        assert!(t.remove_label(13, "in-refinement").await.unwrap());
        assert!(!t.remove_label(13, "in-refinement").await.unwrap());
        let after = std::fs::read_to_string(t.issue_path(13)).unwrap();
        assert_eq!(
            after,
            "---\ntitle: T\nlabels: [bug, ready]\n# keep me\n---\nBody ✓\r\n- [ ] one\n"
        );
        assert_eq!(t.issue(13).await.unwrap().labels, ["bug", "ready"]);
    }

    #[tokio::test]
    async fn body_edits_and_comments_keep_each_other() {
        let (_d, t) = tracker();
        write(&t, 5, "---\ntitle: T\n---\n- [ ] a\n- [ ] b\n");
        t.comment(5, "Round 1 failed:\n- [ ] tests").await.unwrap();
        let issue = t.issue(5).await.unwrap();
        assert_eq!(issue.body, "- [ ] a\n- [ ] b\n", "comments are not body");
        t.set_body(5, "- [x] a\n- [ ] b\n").await.unwrap();
        t.comment(5, "\x1b[1msecond\x1b[0m").await.unwrap();
        let text = std::fs::read_to_string(t.issue_path(5)).unwrap();
        assert!(
            text.starts_with("---\ntitle: T\n---\n- [x] a\n- [ ] b\n\n<!-- ralph comments -->\n")
        );
        assert!(text.contains("Round 1 failed:\n- [ ] tests\n"));
        assert!(
            text.ends_with("\nsecond\n"),
            "posted without escapes: {text:?}"
        );
        assert_eq!(t.issue(5).await.unwrap().body, "- [x] a\n- [ ] b\n");
        // No temporary files are left behind.
        let names: Vec<String> = std::fs::read_dir(t.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["5.md"]);
    }

    #[tokio::test]
    async fn lists_filter_by_state_and_labels() {
        let (_d, t) = tracker();
        write(&t, 1, "---\ntitle: A\nlabels: [ready]\n---\n");
        write(
            &t,
            2,
            "---\ntitle: B\nlabels: [ready]\nstate: closed\n---\n",
        );
        write(&t, 10, "---\ntitle: C\nlabels: [Ready, x]\n---\n");
        write(&t, 3, "---\ntitle: D\n---\n");
        std::fs::write(t.dir().join("notes.md"), "not an issue").unwrap();
        std::fs::write(t.dir().join("010.md"), "not canonical").unwrap();
        let q = IssueQuery {
            labels: vec!["ready".into()],
            state: Some(IssueState::Open),
        };
        let got: Vec<u64> = t
            .issues(&q)
            .await
            .unwrap()
            .iter()
            .map(|i| i.number)
            .collect();
        assert_eq!(got, [1, 10]);
        let all = IssueQuery {
            labels: vec![],
            state: None,
        };
        assert_eq!(t.issues(&all).await.unwrap().len(), 4);
        // A missing directory is an empty tracker.
        let empty = LocalTracker::new(t.dir().join("nope"));
        assert!(empty.issues(&all).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn pull_requests_are_recorded_once_per_branch() {
        let (_d, t) = tracker();
        write(&t, 7, "---\ntitle: T\n---\n");
        let new = NewPullRequest {
            issue: 7,
            title: "T".into(),
            head: "ralph/7-t".into(),
            base: "main".into(),
            body: "Fixes #7".into(),
        };
        let pr = t.create_pull_request(&new).await.unwrap();
        assert_eq!(pr.number, 8);
        assert_eq!(t.create_pull_request(&new).await.unwrap(), pr);
        assert_eq!(t.find_pull_request("ralph/7-t").await.unwrap(), Some(pr));
        assert_eq!(t.find_pull_request("other").await.unwrap(), None);
        let body = std::fs::read_to_string(t.dir().join("7.pr-8.md")).unwrap();
        assert_eq!(body, "Fixes #7");
        let missing = NewPullRequest { issue: 99, ..new };
        assert!(t.create_pull_request(&missing).await.is_err());
    }

    #[tokio::test]
    async fn assignment_and_users() {
        let (_d, t) = tracker();
        write(&t, 2, "---\ntitle: T\n---\n");
        t.assign(2, &["me".into()]).await.unwrap();
        t.assign(2, &["me".into()]).await.unwrap();
        assert_eq!(t.issue(2).await.unwrap().assignees, ["me"]);
        assert_eq!(t.current_user().await.unwrap(), None);
        assert_eq!(t.label_applied_by(2, "ready").await.unwrap(), None);
        assert_eq!(t.permission("anyone").await.unwrap(), Permission::Admin);
    }
}
