//! The doctor's look at the forge beyond the repository permission: what the token may do
//! where the forge lists its scopes (GitLab: `api` is needed for issues, notes and merge
//! requests), and — given an issue — the trust gate a CI run applies: who applied the ready
//! label, and whether they may write (GitLab: Developer or above).

use super::{Findings, Status};
use crate::settings::Settings;
use crate::tracker::IssueTracker;

/// The token's scopes, where the tracker can tell them.
pub(super) async fn token_findings(f: &mut Findings, t: &dyn IssueTracker) {
    match t.token_facts().await {
        Ok(None) => {}
        Ok(Some(token)) if !token.active => {
            f.add(
                "tracker",
                "token",
                Status::Fail,
                format!("`{}` is revoked or expired", token.name),
            );
            f.hint("create a new token and set it where ralph reads it");
        }
        Ok(Some(token)) if !token.missing.is_empty() => {
            f.add(
                "tracker",
                "token",
                Status::Fail,
                format!(
                    "`{}` has the scopes {}; a competition needs {}",
                    token.name,
                    listed(&token.scopes),
                    token.missing.join(", ")
                ),
            );
            f.hint(token.renew.clone());
        }
        Ok(Some(token)) => f.add(
            "tracker",
            "token",
            Status::Ok,
            format!(
                "`{}`: scopes {}{}",
                token.name,
                listed(&token.scopes),
                token
                    .expires
                    .map(|d| format!(", expires {d}"))
                    .unwrap_or_default()
            ),
        ),
        Err(e) => {
            f.add(
                "tracker",
                "token",
                Status::Warn,
                format!("cannot read its scopes: {e}"),
            );
            f.hint(e.hint().unwrap_or_default());
        }
    }
}

fn listed(scopes: &[String]) -> String {
    if scopes.is_empty() {
        "(none)".into()
    } else {
        scopes.join(", ")
    }
}

/// The trust gate for issue `n`: who last applied the ready label, and their permission. A
/// failure in CI (where it refuses the run), a warning elsewhere.
pub(super) async fn gate_finding(
    f: &mut Findings,
    settings: &Settings,
    t: &dyn IssueTracker,
    n: u64,
) {
    let ready = &settings.config.github.ready_label;
    let in_ci = crate::action::ActionEnv::detect(crate::env::get).is_some();
    let short = if in_ci { Status::Fail } else { Status::Warn };
    let login = match t.label_applied(n, ready).await {
        Ok(Some(l)) => l.by,
        Ok(None) => None,
        Err(e) => {
            f.add(
                "issue",
                "gate",
                Status::Warn,
                format!("cannot read who applied `{ready}`: {e}"),
            );
            return;
        }
    };
    let Some(login) = login else {
        if t.pulls().is_some_and(|p| p.has_users()) {
            f.add(
                "issue",
                "gate",
                short,
                format!("nobody on record applied `{ready}` to #{n}"),
            );
            f.hint(format!("a maintainer should remove and re-apply `{ready}`"));
        }
        return;
    };
    match t.permission(&login).await {
        Ok(p) if p.can_write() => f.add(
            "issue",
            "gate",
            Status::Ok,
            format!(
                "`{ready}` applied by {login} ({} access)",
                super::permission_word(p)
            ),
        ),
        Ok(p) => {
            f.add(
                "issue",
                "gate",
                short,
                format!(
                    "`{ready}` applied by {login}, who has {} access: a CI run refuses it",
                    super::permission_word(p)
                ),
            );
            f.hint(format!("someone with write access (GitLab: Developer or above) should apply `{ready}` themselves"));
        }
        Err(e) => f.add(
            "issue",
            "gate",
            Status::Warn,
            format!("cannot read {login}'s permission: {e}"),
        ),
    }
}
