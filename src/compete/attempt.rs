//! Phase 3: the implementer's attempts on the winning proposal (each one a call of the
//! `implementer`). No attempt is taken on an agent's word: each one is verified by ralph's own
//! checks (something must run, a test among it, the change must not be empty), then the
//! `verify` role (`verify_role`) decides which open checkboxes the change satisfies — none
//! satisfied fails the attempt —, then the change is committed, and a failing pre-commit hook
//! fails the attempt too. Whatever failed goes to the next attempt; between attempts the
//! worktree is reset. The run's caps are checked before every attempt.

use super::crew::{Bench, Book, Contest, Crew, Purpose, Selection, Target};
use super::findings::{
    failures_for_prompt, findings, name_some, Attempts, Findings, Found, Passed,
};
use super::implementer::{implement_once, Implemented};
use super::prepare::refresh_environment;
use super::propose::FailedCheck;
use super::verify_role::verify_requirements;
use crate::agent::protocol::ImplementAnswer;
use crate::checks::CheckPlan;
use crate::render::plain::inert;
use crate::verify::reuse::Name;
use crate::verify::{verify, Earlier, Reuse, VerificationReport};
use crate::workspace::{CommitInfo, WorkspaceError, Worktree};
use anyhow::Result;

/// The most of a failed attempt's diff kept for the escalation comment.
pub const MAX_FAILED_DIFF: usize = 20_000;

/// What ralph's checks made of a change.
struct Checked {
    verification: VerificationReport,
    native_failed: Option<String>,
    /// What running the checks changed in git's own files (restored).
    by_checks: Option<String>,
    /// What the run report should say about it (what the checks wrote, put back).
    note: Option<String>,
}

/// A native build's outcome: how long it took, or why it failed; `None` when nothing had to be
/// built.
type NativeBuild = Option<Result<std::time::Duration, String>>;

/// Up to the round's budget of attempts on the winner; stops at the first that passes
/// everything and is committed, or at a run cap.
pub(super) async fn implement(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    contest: &Contest,
    sel: &Selection,
) -> Result<Attempts> {
    let target = Target {
        wt: &bench.wt,
        plan: &bench.plan,
        proposal: &sel.winner,
        budget: sel.budget,
        purpose: Purpose::Winner,
    };
    attempts(crew, book, bench, contest, &target).await
}

/// Up to `target.budget` attempts on `target.proposal` in `target.wt`; stops at the first
/// that passes everything (committed when the purpose keeps it), or at a run cap.
pub(super) async fn attempts(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
) -> Result<Attempts> {
    let (wt, budget) = (target.wt, target.budget);
    // How the console names the attempts.
    let label = target.purpose.label();
    let printer = crew.input.printer;
    if let Err(why) = &crew.input.agents.implementer.backend {
        return Err(anyhow::anyhow!("the implementer cannot start: {why}"));
    }
    let mut out = Attempts::default();
    let mut previous: Vec<FailedCheck> = Vec::new();
    for attempt in 1..=budget {
        if let Some(cap) = crew
            .accounts
            .cap_reached(&crew.input.settings.config.limits)
        {
            out.cap = Some(cap.to_string());
            break;
        }
        out.used = attempt;
        if attempt > 1 {
            crew.input.workspace.reset_worktree(wt).await?;
        }
        let mut tried = try_change(crew, book, bench, contest, target, attempt, &previous).await?;
        if let Some(passed) =
            accept(crew, book, bench, contest, target, &mut tried, &mut out).await?
        {
            printer.status(&format!(
                "- {label} {attempt}/{budget}: verification passed"
            ));
            out.passed = Some(passed);
            out.verification = Some(tried.verification);
            return Ok(out);
        }
        previous = record_failure(crew, target, tried, &mut out).await;
        // The environment is no attempt's fault, and no further attempt can mend it.
        if out.environment.is_some() {
            break;
        }
    }
    Ok(out)
}

/// How the timeline names attempt `attempt` of round `round`'s phases: `attempt r1.2`,
/// `checks r1.2`, `audit r1.2`.
fn attempt_tag(purpose: Purpose, round: u32, attempt: u32) -> String {
    format!(
        "{}r{round}.{attempt}",
        match purpose {
            Purpose::Winner => "",
            Purpose::Audit => "audit ",
            Purpose::Revision => "revision ",
        }
    )
}

/// One attempt's change as ralph's checks left it: which attempt it is and how the timeline
/// names it, the implementer's answer (none when it failed), the verification, and why the
/// attempt fails so far (no reasons: it passed ralph's checks).
struct Tried {
    attempt: u32,
    tag: String,
    answer: Option<ImplementAnswer>,
    verification: VerificationReport,
    findings: Findings,
}

/// Attempt `attempt`'s change: the implementer's call, ralph's checks on the result, what
/// either changed in git's own files (recorded in the report), and the findings. The notes on
/// by-products and on what the checks wrote go to the report's warnings.
async fn try_change(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    attempt: u32,
    previous: &[FailedCheck],
) -> Result<Tried> {
    let label = target.purpose.label();
    let tag = attempt_tag(target.purpose, contest.site.round, attempt);
    let Implemented {
        answer,
        by_agent,
        result,
        note,
    } = implement_once(crew, bench, contest, target, attempt, previous, &tag).await?;
    book.report.warnings.extend(note);
    let name = Name {
        label: label.to_owned(),
        round: contest.site.round,
        attempt,
    };
    let Checked {
        verification,
        native_failed,
        by_checks,
        note,
    } = check_change(crew, bench, target, &result, &tag, name, previous).await?;
    if let Some(taken) = &verification.taken {
        crew.input.printer.status(&format!("- {}", taken.note));
        book.report.warnings.push(taken.note.clone());
    }
    book.report.warnings.extend(note);
    for (who, changes) in [("the implementer", &by_agent), ("the checks", &by_checks)] {
        if let Some(changes) = changes {
            book.report.git_tampering.push(format!(
                "{who}, {} {attempt}: {changes}",
                label.to_lowercase()
            ));
        }
    }
    let findings = findings(&Found {
        verification: &verification,
        answered: answer.is_some(),
        native_failed,
        by_agent: by_agent.as_deref(),
        by_checks: by_checks.as_deref(),
    });
    Ok(Tried {
        attempt,
        tag,
        answer,
        verification,
        findings,
    })
}

/// The rest of a change that answered and passed ralph's checks: the `verify` role must find
/// an open checkbox satisfied (its reasons for the others go to `out`), then the change is
/// committed when the purpose keeps it. What fails the attempt (none satisfied, a failing
/// pre-commit hook) is added to `tried`'s findings; `None` then, or when there was nothing to
/// accept.
async fn accept(
    crew: &mut Crew<'_>,
    book: &mut Book,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    tried: &mut Tried,
    out: &mut Attempts,
) -> Result<Option<Passed>> {
    let Findings { reasons, other } = &mut tried.findings;
    let Some(answer) = tried.answer.take().filter(|_| reasons.is_empty()) else {
        return Ok(None);
    };
    let started = std::time::Instant::now();
    let verdict =
        verify_requirements(crew, bench, contest, target, &answer, &tried.verification).await?;
    crew.timeline
        .since(format!("verify {}", tried.tag), started);
    out.unsatisfied = verdict.unsatisfied.clone();
    if verdict.satisfied.is_empty() {
        let why = verdict
            .unsatisfied
            .iter()
            .map(|(id, r)| format!("{id}: {r}"))
            .collect::<Vec<_>>()
            .join("\n");
        reasons.push("the verify role found none of the open checkboxes satisfied".into());
        other.push(("verify role".into(), why));
        return Ok(None);
    }
    let committed = if target.purpose.keep() {
        commit(crew, book, target, contest, &answer).await
    } else {
        Ok(String::new())
    };
    match committed {
        Ok(commit) => Ok(Some(Passed {
            summary: crate::spec::strip_for_prompt(answer.summary.trim()),
            verdict,
            commit,
        })),
        Err(WorkspaceError::Hook { code, output }) => {
            reasons.push(format!("the pre-commit hook failed (exit {code})"));
            other.push(("pre-commit hook".into(), output));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Records a failed attempt: says why on the console, keeps its reasons, verification and
/// diff (bounded) in `out`, and its environment failure when the environment alone failed it.
/// Returns the failures the next attempt's prompt is told.
async fn record_failure(
    crew: &Crew<'_>,
    target: &Target<'_>,
    tried: Tried,
    out: &mut Attempts,
) -> Vec<FailedCheck> {
    let Tried {
        attempt,
        verification: v,
        findings: Findings { reasons, other },
        ..
    } = tried;
    crew.input.printer.status(&format!(
        "- {} {attempt}/{}: {}",
        target.purpose.label(),
        target.budget,
        reasons.join("; ")
    ));
    let environment = (reasons.len() == v.reasons().len())
        .then(|| v.environment_failure())
        .flatten();
    let previous = failures_for_prompt(Some(&v), &other);
    out.last_diff = crew
        .input
        .workspace
        .patch_text(target.wt, MAX_FAILED_DIFF)
        .await
        .ok();
    out.last_reasons = reasons;
    out.verification = Some(v);
    out.environment = environment;
    previous
}

/// Runs ralph's checks on the implementer's change (attempt `name`): the environment made
/// again when a manifest changed, native code rebuilt, the verification — the verdicts on a
/// tree already judged taken —, what the checks wrote put back (`result` is the
/// implementer's), git's files checked. The checks that failed the `previous` attempt run
/// first.
async fn check_change(
    crew: &mut Crew<'_>,
    bench: &Bench,
    target: &Target<'_>,
    result: &crate::workspace::Snapshot,
    tag: &str,
    name: Name,
    previous: &[FailedCheck],
) -> Result<Checked> {
    let first = first_checks(crew, previous);
    let started = std::time::Instant::now();
    let attempt = name.attempt;
    let (verification, native) = run_checks(crew, bench, target, name, &first).await?;
    learn_from(crew, &verification);
    if let Err(e) = crew.trees.save() {
        crew.input
            .printer
            .warn(&format!("cannot keep the trees judged for --resume: {e:#}"));
    }
    // No check ran when every verdict was taken: not a run of the checks.
    let phase = match &verification.taken {
        Some(t) if t.nothing_ran => "taken",
        _ => "checks",
    };
    crew.timeline.since(format!("{phase} {tag}"), started);
    let name = format!("{} {attempt}", target.purpose.label());
    let note = put_back(crew, target.wt, result, &name).await?;
    // The checks ran the change's code: it may not write git's files either.
    let by_checks = super::guard::sealed(
        crew.input.workspace,
        crew.input.printer,
        target.wt,
        "Running the checks on the change",
    )
    .await?;
    Ok(Checked {
        verification,
        native_failed: native.and_then(Result::err),
        by_checks,
        note,
    })
}

/// The checks to run first, those the last failure failed: this round's last attempt's
/// (`previous`), else the last round's.
fn first_checks(crew: &Crew<'_>, previous: &[FailedCheck]) -> Vec<String> {
    if previous.is_empty() {
        crew.last_failed.clone()
    } else {
        previous.iter().map(|f| f.name.clone()).collect()
    }
}

/// Makes the environment again when the change touched a dependency manifest, builds the
/// native code it touches again, and verifies the change of attempt `name` with the checks in
/// `first` run first, taking the verdicts of a tree already judged. Returns the verification
/// (a failed environment among its setup failures) and the native build's outcome (`None`
/// when nothing had to be built).
async fn run_checks(
    crew: &mut Crew<'_>,
    bench: &Bench,
    target: &Target<'_>,
    name: Name,
    first: &[String],
) -> Result<(VerificationReport, NativeBuild)> {
    let (wt, plan) = (target.wt, target.plan);
    let settings = crew.input.settings;
    // The tree is the implementer's, taken before anything is built or run in it.
    let tree = match crew.input.workspace.tree(wt).await {
        Ok(tree) => Some(tree),
        Err(e) => {
            tracing::debug!("the worktree's tree is unknown, so no verdict is taken: {e}");
            None
        }
    };
    let attempt = name.attempt;
    let after = super::prepare::after_change(settings, wt);
    // A detected setup that failed on the base is not run after the change either.
    let setup = match &crew.baseline.setup_failed {
        Some(_) => Ok(None),
        None => refresh_environment(settings, wt, plan, bench.timeout, Some(&after)).await,
    };
    // Native code the change touches is built again (a reset took the last build with
    // it): the checks must test the change's code, not the base's library.
    let native = rebuild_native(crew, wt, plan, bench, attempt > 1).await?;
    let mut v = verify(
        crew.input.workspace,
        wt,
        plan,
        Some(&crew.baseline),
        bench.timeout,
        &crate::checks::live::Watch::attempt(
            &crew.input.progress,
            &crew.baseline,
            crew.input.printer.paint_err(),
        ),
        Earlier {
            first,
            reuse: tree.map(|tree| Reuse {
                judged: &mut crew.trees.judged,
                tree,
                name,
            }),
        },
    )
    .await?;
    if let Err(why) = setup {
        v.setup.push(why);
    }
    Ok((v, native))
}

/// Keeps what a verification taught the next attempts: the tests it found flaky (cached with
/// the baseline, so they judge no later attempt from this commit) and the checks that failed
/// (run first next time).
fn learn_from(crew: &mut Crew<'_>, v: &VerificationReport) {
    if crew.baseline.note_flaky(&v.checks) {
        if let Err(e) = crew
            .baseline
            .save(&super::prepare::cache_dir(crew.input.settings))
        {
            crew.input
                .printer
                .warn(&format!("cannot cache the baseline: {e}"));
        }
    }
    let failed: Vec<String> = v.failing_checks().map(|c| c.name.clone()).collect();
    if !failed.is_empty() {
        crew.last_failed = failed;
    }
}

/// Puts back what the checks wrote into `wt`, so that exactly what the implementer left
/// (`result`) is judged and committed: the checks' own writes go before the verify role, the
/// review or the commit see the worktree. Returns what the run report says about it (`name`
/// is the attempt's), when the checks wrote anything.
async fn put_back(
    crew: &Crew<'_>,
    wt: &Worktree,
    result: &crate::workspace::Snapshot,
    name: &str,
) -> Result<Option<String>> {
    let by_checks = crew.input.workspace.tidy(wt, result).await?;
    Ok((!by_checks.is_empty()).then(|| {
        let note = format!(
            "{}: the checks wrote into the worktree; put back as the implementer left it: {}",
            name.to_lowercase(),
            name_some(&by_checks)
        );
        crew.input.printer.status(&format!("- {note}"));
        note
    }))
}

/// Builds the project's native code again when the change touches its sources, or when
/// `reset` (the worktree was reset, taking the last build's files). `None` when nothing
/// had to be built.
async fn rebuild_native(
    crew: &Crew<'_>,
    wt: &Worktree,
    plan: &CheckPlan,
    bench: &Bench,
    reset: bool,
) -> Result<NativeBuild> {
    // ralph's own build failed on the base: the checks' own steps build the change.
    let Some(native) = plan
        .native
        .as_ref()
        .filter(|_| crew.baseline.native_unbuilt.is_none())
    else {
        return Ok(None);
    };
    let touched = crew
        .input
        .workspace
        .diff(wt)
        .await?
        .files
        .iter()
        .any(|f| crate::checks::environment::touches_native(&f.path, native));
    let after = super::prepare::after_change(crew.input.settings, wt);
    if !touched && !reset {
        // No build of an earlier attempt's change may stand in for the base's.
        if let Err(e) = crate::checks::environment::clear_native_site(&after) {
            crew.input.printer.warn(&e);
        }
        return Ok(None);
    }
    let built = crate::checks::environment::build_native(
        native,
        &wt.path,
        bench.timeout,
        &plan.env,
        Some(&after),
    )
    .await;
    if let Ok(took) = &built {
        let how = match &native.rebuild {
            Some(_) => format!(
                "its wheel, unpacked beside the read-only environment ({})",
                crate::checks::environment::native_site(&after.cache).display()
            ),
            None => format!("`{}`", native.command),
        };
        crew.input.printer.status(&format!(
            "- Native code built again: {how} ({:.1}s)",
            took.as_secs_f64()
        ));
    }
    Ok(Some(built))
}

/// Commits the passing attempt on the branch, with the trailers.
async fn commit(
    crew: &mut Crew<'_>,
    book: &mut Book,
    target: &Target<'_>,
    contest: &Contest,
    answer: &ImplementAnswer,
) -> Result<String, WorkspaceError> {
    let (wt, winner) = (target.wt, target.proposal);
    let config = &crew.input.settings.config;
    // A revision says so in its subject: the branch already holds the issue's commit.
    let revision = match target.purpose {
        Purpose::Revision => format!(": revision {}", contest.site.round),
        Purpose::Winner | Purpose::Audit => String::new(),
    };
    // A forge reads a commit message wherever it lands: neither the issue's title nor the
    // implementer's summary may close, link or mention anything (only the `(#N)` is ralph's).
    let message = format!(
        "{} (#{}){revision}\n\n{}",
        inert(&contest.issue.title.replace(['\n', '\r'], " ")),
        crew.input.issue,
        inert(answer.summary.trim())
    );
    let id = crew
        .input
        .workspace
        .commit(
            wt,
            &CommitInfo {
                message: &message,
                author_name: &config.git.author_name,
                author_email: &config.git.author_email,
                bot: &winner.bot_id,
                run_id: &book.state.run_id,
            },
        )
        .await?;
    book.state.commits += 1;
    Ok(id)
}
