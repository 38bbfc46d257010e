//! Phase 3: the implementer's attempts on the winning proposal. No attempt is taken on an
//! agent's word: each one is verified by ralph's own checks (something must run, a test among
//! it, the change must not be empty), then the `verify` role decides which open checkboxes the
//! change satisfies — none satisfied fails the attempt —, then the change is committed, and a
//! failing pre-commit hook fails the attempt too. Whatever failed goes to the next attempt;
//! between attempts the worktree is reset. The run's caps are checked before every attempt.

use super::crew::{Bench, Book, Contest, Crew, Selection};
use super::extract::{prompt_json, PromptIssue};
use super::findings::{
    failures_for_prompt, findings, name_some, Attempts, Findings, Found, Passed, Verdict,
};
use super::prepare::refresh_environment;
use super::propose::FailedCheck;
use super::round::Arrived;
use crate::agent::protocol::{ask, AnswerContext, ImplementAnswer, VerifyAnswer};
use crate::agent::Role;
use crate::checks::CheckPlan;
use crate::verify::{verify, VerificationReport};
use crate::workspace::{CommitInfo, WorkspaceError, Worktree};
use anyhow::Result;
use std::collections::BTreeMap;

/// The most diff text the `verify` role is shown.
const MAX_VERIFY_DIFF: usize = 200_000;
/// The most of a failed attempt's diff kept for the escalation comment.
pub const MAX_FAILED_DIFF: usize = 20_000;

/// One call of the implementer: its answer (none when it failed), what it changed in git's
/// files (restored), and its result.
struct Implemented {
    answer: Option<ImplementAnswer>,
    by_agent: Option<String>,
    result: crate::workspace::Snapshot,
    /// What the run report should say about it (by-products left out).
    note: Option<String>,
}

/// What ralph's checks made of a change.
struct Checked {
    verification: VerificationReport,
    native_failed: Option<String>,
    /// What running the checks changed in git's own files (restored).
    by_checks: Option<String>,
    /// What the run report should say about it (what the checks wrote, put back).
    note: Option<String>,
}

/// What the attempts implement, and where.
pub(super) struct Target<'t> {
    pub wt: &'t Worktree,
    pub plan: &'t CheckPlan,
    pub proposal: &'t Arrived,
    pub budget: u32,
    pub purpose: Purpose,
}

/// Why the attempts are made: the round's winner (committed on the branch), an audit (in a
/// scratch checkout, never kept) or a revision of a pull request (committed on its branch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Winner,
    Audit,
    Revision,
}

impl Purpose {
    /// Whether a passing attempt is committed.
    pub fn keep(self) -> bool {
        self != Purpose::Audit
    }

    /// How the console names an attempt (`Attempt 2`).
    fn label(self) -> &'static str {
        match self {
            Purpose::Winner => "Attempt",
            Purpose::Audit => "Audit attempt",
            Purpose::Revision => "Revision attempt",
        }
    }

    /// The agent call's variant (recordings and fakes tell the calls apart by it).
    fn variant(self) -> Option<&'static str> {
        match self {
            Purpose::Winner => None,
            Purpose::Audit => Some("audit"),
            Purpose::Revision => Some("revision"),
        }
    }

    /// How the timeline and the live view name the work.
    fn word(self) -> &'static str {
        match self {
            Purpose::Winner => "implement",
            Purpose::Audit => "audit",
            Purpose::Revision => "revise",
        }
    }
}

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
    let Target {
        wt,
        proposal,
        budget,
        purpose,
        ..
    } = *target;
    let keep = purpose.keep();
    // How the console names the attempts.
    let label = purpose.label();
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
        // How the timeline names this attempt's phases: `attempt r1.2`, `checks r1.2`.
        let tag = format!(
            "{}r{}.{attempt}",
            match purpose {
                Purpose::Winner => "",
                Purpose::Audit => "audit ",
                Purpose::Revision => "revision ",
            },
            contest.site.round
        );
        let Implemented {
            answer,
            by_agent,
            result,
            note,
        } = implement_once(crew, bench, contest, target, attempt, &previous, &tag).await?;
        book.report.warnings.extend(note);
        let Checked {
            verification: v,
            native_failed,
            by_checks,
            note,
        } = check_change(
            crew,
            bench,
            target,
            &result,
            &tag,
            &format!("{label} {attempt}"),
            attempt,
        )
        .await?;
        book.report.warnings.extend(note);
        for (who, changes) in [("the implementer", &by_agent), ("the checks", &by_checks)] {
            if let Some(changes) = changes {
                book.report.git_tampering.push(format!(
                    "{who}, {} {attempt}: {changes}",
                    label.to_lowercase()
                ));
            }
        }
        let Findings {
            mut reasons,
            mut other,
        } = findings(&Found {
            verification: &v,
            answered: answer.is_some(),
            native_failed,
            by_agent: by_agent.as_deref(),
            by_checks: by_checks.as_deref(),
        });
        let outcome = match answer {
            Some(answer) if reasons.is_empty() => {
                let started = std::time::Instant::now();
                let verdict =
                    verify_requirements(crew, bench, contest, target, &answer, &v).await?;
                crew.timeline.since(format!("verify {tag}"), started);
                out.unsatisfied = verdict.unsatisfied.clone();
                if verdict.satisfied.is_empty() {
                    let why = verdict
                        .unsatisfied
                        .iter()
                        .map(|(id, r)| format!("{id}: {r}"))
                        .collect::<Vec<_>>()
                        .join("\n");
                    reasons
                        .push("the verify role found none of the open checkboxes satisfied".into());
                    other.push(("verify role".into(), why));
                    None
                } else {
                    Some((answer, verdict))
                }
            }
            _ => None,
        };
        if let Some((answer, verdict)) = outcome {
            let committed = if keep {
                commit(crew, book, wt, contest, proposal, &answer).await
            } else {
                Ok(String::new())
            };
            match committed {
                Ok(commit) => {
                    printer.status(&format!(
                        "- {label} {attempt}/{budget}: verification passed"
                    ));
                    out.passed = Some(Passed {
                        summary: crate::spec::strip_for_prompt(answer.summary.trim()),
                        verdict,
                        commit,
                    });
                    out.verification = Some(v);
                    return Ok(out);
                }
                Err(WorkspaceError::Hook { code, output }) => {
                    reasons.push(format!("the pre-commit hook failed (exit {code})"));
                    other.push(("pre-commit hook".into(), output));
                }
                Err(e) => return Err(e.into()),
            }
        }
        printer.status(&format!(
            "- {label} {attempt}/{budget}: {}",
            reasons.join("; ")
        ));
        // The environment is no attempt's fault, and no further attempt can mend it.
        let environment = (reasons.len() == v.reasons().len())
            .then(|| v.environment_failure())
            .flatten();
        previous = failures_for_prompt(Some(&v), &other);
        out.last_diff = crew
            .input
            .workspace
            .patch_text(wt, MAX_FAILED_DIFF)
            .await
            .ok();
        out.last_reasons = reasons;
        out.verification = Some(v);
        if environment.is_some() {
            out.environment = environment;
            break;
        }
    }
    Ok(out)
}

/// One call of the implementer on the worktree: the prompt (with the previous attempts'
/// failures), the answer, what it changed in git's files (restored), and its result as the
/// commit will take it; by-products it generated are named and left out.
async fn implement_once(
    crew: &mut Crew<'_>,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    attempt: u32,
    previous: &[FailedCheck],
    tag: &str,
) -> Result<Implemented> {
    let Target {
        wt,
        plan,
        proposal,
        budget,
        purpose,
    } = *target;
    let label = purpose.label().to_lowercase();
    let printer = crew.input.printer;
    let implementer = &crew.input.agents.implementer;
    let backend = match &implementer.backend {
        Ok(b) => b.clone(),
        Err(why) => return Err(anyhow::anyhow!("the implementer cannot start: {why}")),
    };
    let prompt = bench.prompts.render(
        Role::Implement,
        &serde_json::json!({
            "issue": PromptIssue::new(&contest.issue),
            "branch": wt.branch,
            "scratch": !purpose.keep(),
            "revision": purpose == Purpose::Revision,
            "checks": plan.checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            "requirements_json": prompt_json(&contest.reqs),
            "proposal_json": prompt_json(&proposal.proposal),
            "previous_failures": previous,
            "attempt": attempt,
            "budget": budget,
        }),
    )?;
    let mut call = contest
        .site
        .call(Role::Implement, prompt, implementer.timeout);
    call.workdir = wt.path.clone();
    call.attempt = (attempt - 1) * 2;
    call.variant = purpose.variant();
    let view = crew.input.progress.start(format!(
        "{} · {} · attempt {attempt}/{budget}",
        purpose.word(),
        proposal.bot_id
    ));
    call.activity = Some(view.sink());
    let ctx = AnswerContext {
        requirement_ids: contest
            .reqs
            .explicit_requirements
            .iter()
            .map(|r| r.id.clone())
            .collect(),
        ..AnswerContext::default()
    };
    // The by-products already there (the environment, earlier checks): not the
    // implementer's.
    let present: std::collections::BTreeSet<String> = crew
        .input
        .workspace
        .left_out(wt)
        .await?
        .into_iter()
        .collect();
    let started = std::time::Instant::now();
    let answer = match ask::<ImplementAnswer>(backend.as_ref(), &call, &ctx).await {
        Ok(asked) => {
            crew.accounts
                .record("implementer", Role::Implement, asked.usage, asked.duration);
            Some(asked.answer)
        }
        Err(e) => {
            printer.warn(&format!("{label} {attempt}: the implementer failed: {e}"));
            None
        }
    };
    drop(view);
    crew.timeline.since(format!("attempt {tag}"), started);
    // Whatever the implementer wrote outside its worktree in git's own files is undone
    // before anything else runs, and fails the attempt.
    let by_agent =
        super::guard::sealed(crew.input.workspace, printer, wt, "The implementer").await?;
    // The implementer's result, as the commit will take it: whatever the checks change in
    // it afterwards is put back.
    let result = crew.input.workspace.snapshot(wt).await?;
    let generated: Vec<String> = crew
        .input
        .workspace
        .left_out(wt)
        .await?
        .into_iter()
        .filter(|p| !present.contains(p))
        .collect();
    let note = (!generated.is_empty()).then(|| {
        let note = format!(
            "{label} {attempt}: left out of the commit as by-products: {}",
            name_some(&generated)
        );
        printer.status(&format!("- {note}"));
        note
    });
    Ok(Implemented {
        answer,
        by_agent,
        result,
        note,
    })
}

/// Runs ralph's checks on the implementer's change: the environment made again when a
/// manifest changed, native code rebuilt, the verification, what the checks wrote put back
/// (`result` is the implementer's), git's files checked. `name` names the attempt.
async fn check_change(
    crew: &mut Crew<'_>,
    bench: &Bench,
    target: &Target<'_>,
    result: &crate::workspace::Snapshot,
    tag: &str,
    name: &str,
    attempt: u32,
) -> Result<Checked> {
    let (wt, plan) = (target.wt, target.plan);
    let printer = crew.input.printer;
    // A change to the dependency manifests makes the environment again.
    let started = std::time::Instant::now();
    let settings = crew.input.settings;
    let setup = refresh_environment(settings, wt, plan, bench.timeout).await;
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
            printer.paint_err(),
        ),
    )
    .await?;
    if let Err(why) = setup {
        v.setup.push(why);
    }
    let native_failed = native.and_then(Result::err);
    crew.timeline.since(format!("checks {tag}"), started);
    // Exactly what the implementer left is judged and committed: the checks' own writes
    // go before the verify role, the review or the commit see the worktree.
    let by_checks = crew.input.workspace.tidy(wt, result).await?;
    let note = (!by_checks.is_empty()).then(|| {
        let note = format!(
            "{}: the checks wrote into the worktree; put back as the implementer left it: {}",
            name.to_lowercase(),
            name_some(&by_checks)
        );
        printer.status(&format!("- {note}"));
        note
    });
    // The checks ran the change's code: it may not write git's files either.
    let by_checks = super::guard::sealed(
        crew.input.workspace,
        printer,
        wt,
        "Running the checks on the change",
    )
    .await?;
    Ok(Checked {
        verification: v,
        native_failed,
        by_checks,
        note,
    })
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
) -> Result<Option<Result<std::time::Duration, String>>> {
    let Some(native) = &plan.native else {
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
    if !touched && !reset {
        return Ok(None);
    }
    let built =
        crate::checks::environment::build_native(native, &wt.path, bench.timeout, &plan.env).await;
    if let Ok(took) = &built {
        crew.input.printer.status(&format!(
            "- Native code built again: `{}` ({:.1}s)",
            native.command,
            took.as_secs_f64()
        ));
    }
    Ok(Some(built))
}

/// Commits the passing attempt on the branch, with the trailers.
async fn commit(
    crew: &mut Crew<'_>,
    book: &mut Book,
    wt: &Worktree,
    contest: &Contest,
    winner: &Arrived,
    answer: &ImplementAnswer,
) -> Result<String, WorkspaceError> {
    let config = &crew.input.settings.config;
    let message = format!(
        "{} (#{})\n\n{}",
        contest.issue.title,
        crew.input.issue,
        answer.summary.trim()
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

/// Which open checkboxes the change satisfies: the `verify` role's answer, limited to the
/// open ones; only when the arbiter cannot answer, the checkboxes both the proposal and the
/// implementer claim (every check passed, so the claim has their support).
async fn verify_requirements(
    crew: &mut Crew<'_>,
    bench: &Bench,
    contest: &Contest,
    target: &Target<'_>,
    answer: &ImplementAnswer,
    verification: &VerificationReport,
) -> Result<Verdict> {
    let printer = crew.input.printer;
    let open = &contest.open;
    let wt = target.wt;
    let diff = crew.input.workspace.patch_text(wt, MAX_VERIFY_DIFF).await?;
    let checks: Vec<serde_json::Value> = verification
        .checks
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "passed": c.passed()}))
        .collect();
    let prompt = bench.prompts.render(
        Role::Verify,
        &serde_json::json!({
            "issue": PromptIssue::new(&contest.issue),
            "requirements_json": prompt_json(&contest.reqs),
            "checks": checks,
            "diff": crate::spec::strip_for_prompt(&diff),
        }),
    )?;
    let fallback = || {
        Verdict {
            satisfied: target
                .proposal
                .proposal
                .spec_alignment
                .checkboxes_addressed
                .iter()
                .filter(|id| open.contains(*id) && answer.checkboxes_completed.contains(id))
                .map(|id| {
                    (
                        id.clone(),
                        "claimed by the proposal and the implementer (the verify role could not answer); every check passed"
                            .to_owned(),
                    )
                })
                .collect(),
            unsatisfied: BTreeMap::new(),
            by_verify_role: false,
        }
    };
    let arbiter = &crew.input.agents.arbiter;
    let Ok(backend) = &arbiter.backend else {
        printer.warn("no arbiter to verify the requirements: using the claims the checks support");
        return Ok(fallback());
    };
    let mut call = contest.site.call(Role::Verify, prompt, arbiter.timeout);
    call.variant = target.purpose.variant();
    let view = contest.site.watch(&mut call, "verify · arbiter");
    let ctx = AnswerContext {
        requirement_ids: open.clone(),
        ..AnswerContext::default()
    };
    // The verify role reads the change in the worktree; it must leave it as it is.
    let snap = super::guard::watch(crew.input.workspace, wt).await?;
    let asked = ask::<VerifyAnswer>(backend.as_ref(), &call, &ctx).await;
    drop(view);
    if super::guard::changed(crew.input.workspace, printer, wt, &snap, "The verify role")
        .await?
        .is_some()
    {
        if let Ok(a) = &asked {
            crew.accounts
                .record("arbiter", Role::Verify, a.usage, a.duration);
        }
        printer.warn("the verify role's answer is discarded: using the claims the checks support");
        return Ok(fallback());
    }
    match asked {
        Ok(asked) => {
            crew.accounts
                .record("arbiter", Role::Verify, asked.usage, asked.duration);
            let strip = crate::spec::strip_for_prompt;
            Ok(Verdict {
                satisfied: asked
                    .answer
                    .satisfied
                    .into_iter()
                    .filter(|s| open.contains(&s.id))
                    .map(|s| (s.id, strip(&s.evidence)))
                    .collect(),
                unsatisfied: asked
                    .answer
                    .unsatisfied
                    .into_iter()
                    .filter(|u| open.contains(&u.id))
                    .map(|u| (u.id, strip(&u.reason)))
                    .collect(),
                by_verify_role: true,
            })
        }
        Err(e) => {
            printer.warn(&format!(
                "the verify role failed ({e}): using the claims the checks support"
            ));
            Ok(fallback())
        }
    }
}
