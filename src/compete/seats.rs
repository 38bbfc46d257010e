//! A round's seats (docs/specification.md §8.6), with `[marketplace] seats`: each bot's record
//! from the ledger for the issue's topic labels (`ledger::seats`), the value of a merge (the
//! configured one, else the one the ledger tunes), what is left of the cost caps, the draw
//! (`market::seating`), and the lines that say who was seated and why. Without `seats` nothing
//! here runs and every bot proposes.

use super::agents::Agents;
use crate::agent::accounts::Accounts;
use crate::agent::Role;
use crate::config::Config;
use crate::ledger::seats::{proposal_tokens, seat_records, tuned_value, SeatRecord};
use crate::ledger::{Event, Loaded};
use crate::market::seating::value::ValueFit;
use crate::market::seating::{draw, SeatAsk, SeatReason, Seating};
use crate::market::tables;
use crate::output::Printer;
use crate::tracker::workflow::topic_labels;
use crate::tracker::Issue;

/// What a round's draw needs besides the configuration.
pub struct SeatInput<'a> {
    pub config: &'a Config,
    pub agents: &'a Agents,
    pub issue: &'a Issue,
    pub round: u32,
    /// The run's seed.
    pub seed: u64,
    /// What the run has spent so far.
    pub accounts: &'a Accounts,
    /// The ledger as it is now.
    pub ledger: &'a Loaded,
}

/// The run's seed for the seats: `--seed`, else `[marketplace] seed`, else a fresh one.
pub fn run_seed(flag: Option<u64>, config: &Config) -> u64 {
    flag.or(config.marketplace.seed)
        .unwrap_or_else(super::site::random_seed)
}

/// The round's seating; `None` without `[marketplace] seats` (every bot proposes).
pub fn seat(input: &SeatInput<'_>) -> Option<Seating> {
    let config = input.config;
    let seats = config.marketplace.seats?;
    let labels = topic_labels(input.issue, &config.github.ready_label);
    let events: Vec<&Event> = input.ledger.events.iter().map(|l| &l.event).collect();
    let bots = config.bot_ids();
    let records = seat_records(&tables().seating, &bots, &events, &labels);
    let tokens = proposal_tokens(&events);
    let candidates: Vec<_> = records
        .iter()
        .map(|r| {
            let unavailable = input
                .agents
                .bots
                .iter()
                .find(|a| a.name == r.bot_id)
                .and_then(|a| a.backend.as_ref().err().cloned());
            let mut candidate = r.candidate(unavailable);
            if r.cost_per_proposal.is_none() {
                candidate.cost_estimate_usd = estimate(config, &records, &r.bot_id, tokens);
            }
            candidate
        })
        .collect();
    let misjudge = misjudge(&events);
    let (value_per_merge, value_tuned) = value_per_merge(config, &events, seats, misjudge);
    let mut seating = draw(
        &candidates,
        &SeatAsk {
            seats,
            value_per_merge,
            stale_after: tables().seating.stale_after,
            suspect_odds: tables().seating.suspect_odds,
            anchor: true,
            misjudge,
            budget_usd: budget(config, input.accounts),
            seed: input.seed,
            issue: input.issue.number,
            round: input.round,
            labels,
        },
    );
    if let Some(fit) = value_tuned {
        seating.notes.insert(0, fit.line());
        seating.value_tuned = Some(fit);
    }
    Some(seating)
}

/// What a merged pull request is worth to the draw: `[marketplace] value_per_merge`; else,
/// once the ledger has [`crate::ledger::seats::MIN_VALUE_ROUNDS`] seated rounds, the value it
/// tunes from its latest ones (with how); else `scoring/seating.toml`'s.
pub fn value_per_merge(
    config: &Config,
    events: &[&Event],
    seats: u32,
    misjudge: f64,
) -> (f64, Option<ValueFit>) {
    if let Some(value) = config.marketplace.value_per_merge {
        return (value, None);
    }
    let params = tables().seating;
    match tuned_value(&params, &config.bot_ids(), events, seats, misjudge) {
        Some(fit) => (fit.value_usd, Some(fit)),
        None => (params.value_per_merge, None),
    }
}

/// Audited rounds with a passing proposal among the top two that the ledger needs before its
/// selection efficiency replaces `scoring/seating.toml`'s `misjudge`.
pub const MIN_AUDITS: u64 = 10;

/// The chance that the judges pick a failing proposal over one that delivers: 1 − the
/// selection efficiency the ledger's audits measured (`[marketplace] audit_rate`) once
/// [`MIN_AUDITS`] rounds had a passing proposal among their top two; else the table's.
pub fn misjudge(events: &[&Event]) -> f64 {
    let audits = crate::ledger::decisions::decisions(events.iter().copied()).audits;
    match audits.selection_efficiency {
        Some(efficiency) if audits.either_passed >= MIN_AUDITS => {
            (1.0 - efficiency).clamp(0.0, 1.0)
        }
        _ => tables().seating.misjudge,
    }
}

/// What a proposal of `bot`, which has no measured cost of its own, should cost by what its
/// backend and model are known to cost: the mean measure of the other bots on the same
/// backend and model; else its configured `price` for the ledger's mean tokens per proposal;
/// else nothing is known.
pub fn estimate(
    config: &Config,
    records: &[SeatRecord],
    bot: &str,
    tokens: Option<(f64, f64)>,
) -> Option<f64> {
    let agent = |id: &str| config.bots.iter().find(|b| b.id == id).map(|b| &b.agent);
    let own = agent(bot)?;
    let peers: Vec<f64> = records
        .iter()
        .filter(|r| r.bot_id != bot)
        .filter(|r| {
            agent(&r.bot_id).is_some_and(|a| a.backend == own.backend && a.model == own.model)
        })
        .filter_map(|r| r.cost_per_proposal)
        .collect();
    if !peers.is_empty() {
        return Some(peers.iter().sum::<f64>() / peers.len() as f64);
    }
    let (input, output) = tokens?;
    own.price
        .map(|p| p.cost(input.round() as u64, 0, output.round() as u64))
}

/// What the round's proposals may cost: what is left of `[marketplace] max_cost_per_issue`
/// after the run's proposals so far, and of `[limits] max_cost_usd` after everything the run
/// spent, whichever is less; `None` when neither is set.
pub fn budget(config: &Config, accounts: &Accounts) -> Option<f64> {
    let proposals: f64 = accounts
        .rows()
        .iter()
        .filter(|r| r.role == Role::Propose)
        .filter_map(|r| r.spend.cost_usd)
        .sum();
    let run = accounts.total().cost_usd.unwrap_or(0.0);
    let per_issue = config
        .marketplace
        .max_cost_per_issue
        .map(|cap| (cap - proposals).max(0.0));
    let per_run = config.limits.max_cost_usd.map(|cap| (cap - run).max(0.0));
    match (per_issue, per_run) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// With seats and `[marketplace] max_cost_per_issue`: the warning that names the bots whose
/// proposals' cost the cap cannot count (their backend reports none and they have no `price`).
pub fn unseen_cost(config: &Config, agents: &Agents) -> Option<String> {
    let cap = config.marketplace.max_cost_per_issue?;
    config.marketplace.seats?;
    let unseen: Vec<&str> = agents
        .bots
        .iter()
        .filter(|a| a.backend.as_ref().is_ok_and(|b| !b.reports_cost()))
        .map(|a| a.name.as_str())
        .collect();
    (!unseen.is_empty()).then(|| {
        format!(
            "`marketplace.max_cost_per_issue` = {cap} cannot count what the proposals of {} cost: their backend reports no cost; set `price` on them",
            unseen.join(", ")
        )
    })
}

/// Prints who was seated and why, who was not, and any note.
pub fn announce(printer: &Printer, seating: &Seating) {
    printer.status(&format!("- {}", seating.line()));
    if let Some(line) = seating.left_out_line() {
        printer.status(&format!("- {line}"));
    }
    for note in &seating.notes {
        printer.status(&format!("- seats: {note}"));
    }
}

/// Why a round with no seat ends: no bot can start (each says why), or the money left pays
/// for no bot's proposal.
pub fn no_seat(seating: &Seating) -> String {
    let all_down = !seating.bots.is_empty()
        && seating
            .bots
            .iter()
            .all(|b| b.reason == SeatReason::Unavailable);
    if all_down {
        return "no bot could be seated: none of them can start (`ralph doctor` says why for each)"
            .to_owned();
    }
    let left = seating
        .budget_usd
        .map_or_else(|| "nothing".to_owned(), |b| format!("${b:.2}"));
    format!(
        "no bot could be seated: what is left of the cost caps ({left}) pays for no bot's proposal (`marketplace.max_cost_per_issue`, `limits.max_cost_usd`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Usage;
    use std::time::Duration;

    fn config(text: &str) -> Config {
        Config::from_toml(std::path::Path::new("config.toml"), text).unwrap()
    }

    #[test]
    fn a_round_without_a_seat_says_whether_no_bot_can_start_or_no_money_is_left() {
        let mut s = crate::fixtures::seating(&["a", "b"], &[], &[], 1);
        s.budget_usd = Some(0.05);
        for b in &mut s.bots {
            b.seated = false;
            b.reason = SeatReason::OverBudget;
        }
        assert!(no_seat(&s).contains("cost caps ($0.05)"), "{}", no_seat(&s));
        for b in &mut s.bots {
            b.reason = SeatReason::Unavailable;
        }
        assert!(
            no_seat(&s).contains("none of them can start"),
            "{}",
            no_seat(&s)
        );
    }

    fn spend(accounts: &mut Accounts, who: &str, role: Role, cost: f64) {
        let usage = Usage {
            input_tokens: 1,
            cached_input_tokens: 0,
            output_tokens: 1,
            cost_usd: Some(cost),
        };
        accounts.record(who, role, usage, Duration::from_secs(1));
    }

    #[test]
    fn the_budget_is_what_is_left_of_the_tighter_cap() {
        let mut accounts = Accounts::default();
        spend(&mut accounts, "a", Role::Propose, 0.4);
        spend(&mut accounts, "implementer", Role::Implement, 2.0);
        assert_eq!(budget(&Config::default(), &accounts), None);
        let per_issue = config("[marketplace]\nmax_cost_per_issue = 1.0\n");
        assert!((budget(&per_issue, &accounts).unwrap() - 0.6).abs() < 1e-12);
        let both =
            config("[marketplace]\nmax_cost_per_issue = 1.0\n[limits]\nmax_cost_usd = 3.0\n");
        assert!((budget(&both, &accounts).unwrap() - 0.6).abs() < 1e-12);
        let run = config("[limits]\nmax_cost_usd = 2.5\n");
        assert!(budget(&run, &accounts).unwrap() < 0.1 + 1e-12);
        let spent = config("[marketplace]\nmax_cost_per_issue = 0.3\n");
        assert_eq!(budget(&spent, &accounts), Some(0.0));
    }

    #[test]
    fn a_cap_on_proposals_names_the_bots_whose_cost_it_cannot_see() {
        let text = "[defaults]\nbackend = \"command\"\ncommand = [\"sh\"]\n[[bots]]\nid = \"a\"\n[[bots]]\nid = \"b\"\nprice = { input_per_mtok = 1.0, output_per_mtok = 2.0 }\n[marketplace]\nseats = 1\n";
        let root = std::env::temp_dir();
        let plain = config(text);
        assert_eq!(
            unseen_cost(&plain, &Agents::build(&plain, &root, None)),
            None
        );
        let capped = config(&format!("{text}max_cost_per_issue = 1.5\n"));
        let warning = unseen_cost(&capped, &Agents::build(&capped, &root, None)).unwrap();
        assert!(
            warning.contains("= 1.5 cannot count what the proposals of a cost"),
            "{warning}"
        );
        assert!(!warning.contains(", b"), "b has a price: {warning}");
    }

    #[test]
    fn a_newcomer_is_priced_from_its_backend_and_model() {
        let c = config(
            "[[bots]]\nid = \"a\"\nbackend = \"claude\"\nmodel = \"m\"\n[[bots]]\nid = \"b\"\nbackend = \"claude\"\nmodel = \"m\"\n[[bots]]\nid = \"c\"\nbackend = \"claude\"\nmodel = \"other\"\nprice = { input_per_mtok = 3.0, output_per_mtok = 15.0 }\n",
        );
        let record = |id: &str, cost| crate::fixtures::seat_record(id, 0, cost);
        let records = [record("a", Some(0.4)), record("b", None), record("c", None)];
        // The same backend and model: what the other bot's proposals cost.
        assert_eq!(estimate(&c, &records, "b", None), Some(0.4));
        // Another model with a price: the ledger's mean proposal at that price.
        let priced = estimate(&c, &records, "c", Some((10_000.0, 2_000.0))).unwrap();
        assert!((priced - 0.06).abs() < 1e-12, "{priced}");
        // No peer, no tokens measured yet, or no price: nothing is known.
        assert_eq!(estimate(&c, &records, "c", None), None);
        let unpriced = [record("a", None), record("b", None), record("c", None)];
        assert_eq!(estimate(&c, &unpriced, "b", Some((1.0, 1.0))), None);
    }

    #[test]
    fn the_audits_measure_what_one_more_proposal_risks_once_there_are_enough() {
        use crate::ledger::AuditOutcome;
        use crate::market::Outcome;
        let round = |n: usize, winner_passed: bool| {
            let outcome = if winner_passed {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            let mut e = Event::new(n as u64, "a", outcome, 0.0);
            e.run_id = Some(format!("r{n}"));
            e.round = Some(1);
            e.audit = Some(AuditOutcome {
                runner_up: "b".into(),
                proposal_scores: None,
                passed: true,
                attempts: 1,
                cost_usd: None,
                tokens: None,
                duration_ms: None,
            });
            e
        };
        // Twelve audited rounds where the runner-up passed; the winner failed in three.
        let events: Vec<Event> = (0..12).map(|n| round(n, n % 4 != 0)).collect();
        let refs: Vec<&Event> = events.iter().collect();
        assert!((misjudge(&refs) - 0.25).abs() < 1e-12);
        // Too few: the table's.
        assert_eq!(misjudge(&refs[..5]), tables().seating.misjudge);
    }

    #[test]
    fn the_value_of_a_merge_is_the_configured_one_else_the_ledgers_once_it_can() {
        use crate::market::Outcome;
        let round = |issue: u64, bot: &str, outcome: Outcome, cost: f64| {
            let mut e = Event::new(issue, bot, outcome, 0.0);
            e.run_id = Some(format!("run-{issue}"));
            e.round = Some(1);
            e.cost_usd = Some(cost);
            e.seating = Some(crate::fixtures::seating(&["a", "b"], &["a", "b"], &[], 1));
            e
        };
        let events: Vec<Event> = (1..=40)
            .flat_map(|n| {
                [
                    round(n, "a", Outcome::Success, 1.0),
                    round(n, "b", Outcome::NotSelected, 0.2),
                ]
            })
            .collect();
        let refs: Vec<&Event> = events.iter().collect();
        let bots = "[defaults]\nbackend = \"command\"\ncommand = [\"sh\"]\n[[bots]]\nid = \"a\"\n[[bots]]\nid = \"b\"\n[marketplace]\nseats = 2\n";
        let set = config(&format!("{bots}value_per_merge = 40.0\n"));
        assert_eq!(value_per_merge(&set, &refs, 2, 0.05), (40.0, None));
        let unset = config(bots);
        let few = &refs[..2 * (crate::ledger::seats::MIN_VALUE_ROUNDS - 1)];
        assert_eq!(
            value_per_merge(&unset, few, 2, 0.05),
            (tables().seating.value_per_merge, None)
        );
        let (value, fit) = value_per_merge(&unset, &refs, 2, 0.05);
        let fit = fit.expect("tuned from 40 rounds");
        assert_eq!(fit.value_usd, value);
        assert_eq!(fit.rounds, 40);
        assert_eq!(fit.multiple, tables().seating.value_multiple);
        assert!(fit
            .line()
            .contains("a merge costs when every bot proposes, over the latest 40 seated rounds"));
    }

    #[test]
    fn the_flag_then_the_configuration_seed_the_run() {
        let seeded = config("[marketplace]\nseed = 5\n");
        assert_eq!(run_seed(Some(9), &seeded), 9);
        assert_eq!(run_seed(None, &seeded), 5);
    }
}
