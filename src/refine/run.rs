//! The work of `ralph refine N`: the issue read, the `refine` role asked (in a detached
//! worktree of the base branch when the repository is a git one, so a CLI agent reads the code
//! as it is on the base and never the user's checkout), then the draft posted: a comment, the
//! task list written into the body with `--write`, or nothing with `--dry-run`; the issue moved
//! to `in-refinement` (from `backlog-review` or `ready`).

use super::{comment, write_into, RefineAnswer};
use crate::agent::prompts::Prompts;
use crate::agent::protocol::{ask, AnswerContext};
use crate::agent::{AgentCall, Phase, Role};
use crate::compete::agents::Agent;
use crate::compete::extract::{prompt_json, PromptIssue};
use crate::error::UserError;
use crate::output::Printer;
use crate::settings::Settings;
use crate::spec::{read_guidance, ExplicitRequirement, Requirements};
use crate::tracker::workflow::{LABEL_BACKLOG_REVIEW, LABEL_IN_REFINEMENT};
use crate::tracker::{Issue, IssueState, IssueTracker};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// What `ralph refine N` was asked.
#[derive(Debug, Clone, Default)]
pub struct RefineOptions {
    pub issue: u64,
    /// Put the task list into the body between the markers.
    pub write: bool,
    /// Print the draft; change nothing.
    pub dry_run: bool,
    /// Record the agent's answer for replay.
    pub record: Option<PathBuf>,
    /// The live view of the agent's work.
    pub progress: crate::progress::Progress,
}

/// What refining did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Refined {
    pub issue: u64,
    /// The issue had open checkboxes: the answer is a review.
    pub review: bool,
    pub answer: RefineAnswer,
    /// The comment posted (or, with `--dry-run`, that would be).
    pub comment: String,
    /// The body was rewritten with the task list.
    pub body_written: bool,
    pub dry_run: bool,
}

/// Refines issue `opts.issue`.
pub async fn refine(
    settings: &Settings,
    tracker: &dyn IssueTracker,
    printer: &Printer,
    opts: &RefineOptions,
) -> Result<Refined> {
    let n = opts.issue;
    let issue = tracker.issue(n).await?;
    refinable(&issue, n)?;
    // ralph's own section is re-drafted, not reviewed, and the agent reads the author's words.
    let mut authored = issue.clone();
    authored.body = crate::refine::authored(&issue.body);
    let reqs = Requirements::from_body(&authored.body);
    let open: Vec<_> = reqs.open().collect();
    let review = !open.is_empty();
    let arbiter = Agent::build(
        "arbiter",
        &settings.config.arbiter,
        &settings.root,
        opts.record.as_deref(),
    );
    let backend = arbiter.backend.map_err(|why| {
        UserError::usage(format!("the arbiter cannot start: {why}"))
            .with_hint("`ralph doctor` checks the agents; the arbiter answers the refine role")
    })?;
    let prompt = refine_prompt(settings, &authored, review, &open)?;
    let ctx = AnswerContext {
        requirement_ids: open.iter().map(|r| r.id.clone()).collect(),
        ..AnswerContext::default()
    };
    let checkout = Checkout::at_base(settings, n).await;
    let mut call = refine_call(prompt, checkout.path().to_owned(), n, arbiter.timeout);
    printer.status(&format!(
        "Asking the arbiter to {} #{n}'s requirements…",
        if review { "review" } else { "draft" }
    ));
    let _heartbeat = opts.progress.heartbeat();
    let view = opts.progress.start("refine · arbiter");
    call.activity = Some(view.sink());
    let asked = ask::<RefineAnswer>(backend.as_ref(), &call, &ctx).await;
    drop(view);
    let tampered = checkout.sealed_changes().await;
    checkout.remove().await;
    if let Some(changes) = tampered {
        anyhow::bail!(
            "the refine role changed the repository's git directory, which nothing but ralph may: {changes} (restored); its answer is not used"
        );
    }
    let asked = asked.map_err(|e| anyhow::anyhow!("the refine role gave no usable answer: {e}"))?;
    for w in &asked.warnings {
        printer.warn(w);
    }
    let answer = asked.answer;
    let edited = crate::refine::section_edited(&issue.body);
    if opts.write && !review && edited {
        printer.warn(&format!(
            "ralph's section in #{n}'s body was edited by hand; it is left as it is (remove its markers to have ralph write a new one)"
        ));
    }
    let write = opts.write && !review && !edited;
    let text = comment(n, &answer, review, write);
    if !opts.dry_run {
        let body = write.then(|| write_into(&issue.body, &answer));
        let ready_label = settings.config.github.ready_label.as_str();
        post(tracker, &issue, n, body, &text, ready_label).await?;
    }
    Ok(Refined {
        issue: n,
        review,
        answer,
        comment: text,
        body_written: write && !opts.dry_run,
        dry_run: opts.dry_run,
    })
}

/// Refuses issue `n` when it is a pull request or closed.
fn refinable(issue: &Issue, n: u64) -> Result<()> {
    if issue.is_pull_request {
        return Err(UserError::usage(format!("#{n} is a pull request, not an issue")).into());
    }
    if issue.state == IssueState::Closed {
        return Err(UserError::usage(format!("issue #{n} is closed"))
            .with_hint("reopen it if it should be worked on")
            .into());
    }
    Ok(())
}

/// The `refine` role's prompt for the issue as its author wrote it (`authored`): a review of
/// its `open` requirements when `review`, else a draft.
fn refine_prompt(
    settings: &Settings,
    authored: &Issue,
    review: bool,
    open: &[&ExplicitRequirement],
) -> Result<String> {
    let prompts = Prompts::load(&settings.ralph_dir)?;
    Ok(prompts.render(
        Role::Refine,
        &serde_json::json!({
            "issue": PromptIssue::new(authored),
            "review": review,
            "explicit_json": prompt_json(&open),
            "guidance": read_guidance(&settings.root),
        }),
    )?)
}

/// The arbiter's call in the `refine` role on issue `issue`, in `workdir`.
fn refine_call(prompt: String, workdir: PathBuf, issue: u64, timeout: Duration) -> AgentCall {
    AgentCall {
        role: Role::Refine,
        prompt,
        workdir,
        bot_id: None,
        issue,
        round: 1,
        phase: Phase::Initial,
        timeout,
        attempt: 0,
        speaker: None,
        variant: None,
        activity: None,
    }
}

/// Posts the draft on `issue` (number `n`): its `body` rewritten (when there is one), the
/// comment `text`, the `in-refinement` label added, and `backlog-review` and the `ready_label`
/// taken off.
async fn post(
    tracker: &dyn IssueTracker,
    issue: &Issue,
    n: u64,
    body: Option<String>,
    text: &str,
    ready_label: &str,
) -> Result<()> {
    if let Some(body) = body {
        tracker.set_body(n, &body).await?;
    }
    tracker.comment(n, text).await?;
    if !issue.has_label(LABEL_IN_REFINEMENT) {
        tracker
            .add_labels(n, &[LABEL_IN_REFINEMENT.to_owned()])
            .await?;
    }
    for label in [LABEL_BACKLOG_REVIEW, ready_label] {
        if issue.has_label(label) {
            tracker.remove_label(n, label).await?;
        }
    }
    Ok(())
}

/// Where the agent reads the repository: a detached worktree of the base branch, else (not a
/// git repository, no base) the repository root.
struct Checkout {
    root: PathBuf,
    worktree: Option<PathBuf>,
    /// The git directory as it was before the agent ran.
    seal: Option<crate::workspace::seal::GitSeal>,
}

impl Checkout {
    async fn at_base(settings: &Settings, issue: u64) -> Checkout {
        let root = settings.root.clone();
        let git = &settings.config.git;
        let found = crate::workspace::inspect(&root, &git.remote, git.base.as_deref(), None).await;
        let Ok((base, _)) = found.base else {
            return Checkout {
                root,
                worktree: None,
                seal: None,
            };
        };
        let rev = if found.has_remote {
            format!("{}/{base}", git.remote)
        } else {
            base
        };
        let path = match settings.checkouts() {
            Ok(dir) => dir.join(format!("ralph-refine-{issue}")),
            Err(e) => {
                tracing::warn!("refining from the repository root: {e}");
                return Checkout {
                    root,
                    worktree: None,
                    seal: None,
                };
            }
        };
        match crate::workspace::add_detached(&root, &path, &rev).await {
            Ok(wt) => {
                let seal = crate::workspace::seal::take_async(&root, &wt).await;
                if let Err(e) = &seal {
                    tracing::warn!("could not seal the git directory: {e}");
                }
                Checkout {
                    root,
                    worktree: Some(path),
                    seal: seal.ok(),
                }
            }
            Err(e) => {
                tracing::warn!("refining from the repository root: {e}");
                Checkout {
                    root,
                    worktree: None,
                    seal: None,
                }
            }
        }
    }

    /// What the agent changed in the git directory since the seal (restored by now), in one
    /// line; `None` when nothing did.
    async fn sealed_changes(&self) -> Option<String> {
        let seal = self.seal.as_ref()?;
        match crate::workspace::seal::check_async(seal, self.path()).await {
            Ok(changes) if changes.is_empty() => None,
            Ok(changes) => Some(changes.join("; ")),
            Err(e) => Some(format!("the check itself failed: {e}")),
        }
    }

    fn path(&self) -> &std::path::Path {
        self.worktree.as_deref().unwrap_or(&self.root)
    }

    async fn remove(&self) {
        if let Some(wt) = &self.worktree {
            if let Err(e) = crate::workspace::remove_detached(&self.root, wt).await {
                tracing::warn!("could not remove {}: {e}", wt.display());
            }
        }
    }
}
