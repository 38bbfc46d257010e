use super::*;

fn params() -> SeatingParams {
    SeatingParams {
        merge_weight: 2.0,
        other_labels: 0.5,
        memory: 1.0,
        cost_window: 20,
        value_per_merge: 10.0,
        value_multiple: 5.0,
        drift_window: 3,
        drift_odds: 10.0,
        stale_after: 8,
        suspect_odds: 2.0,
        misjudge: 0.05,
    }
}

fn ev(issue: u64, round: u32, bot: &str, outcome: Outcome, cost: Option<f64>) -> Event {
    let mut e = Event::new(issue, bot, outcome, 0.0);
    e.run_id = Some(format!("run-{issue}"));
    e.round = Some(round);
    e.cost_usd = cost;
    e
}

fn records(events: &[Event], labels: &[&str]) -> Vec<SeatRecord> {
    let refs: Vec<&Event> = events.iter().collect();
    let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    let bots = ["a", "b", "c"].map(String::from);
    seat_records(&params(), &bots, &refs, &labels)
}

fn ab(r: &SeatRecord) -> (f64, f64) {
    (r.alpha, r.beta)
}

/// A seating of `seated` among a, b, c for `issue`, labelled `labels`.
fn seating(issue: u64, seated: &[&str], labels: &[&str]) -> Seating {
    crate::fixtures::seating(&["a", "b", "c"], seated, labels, issue)
}

#[test]
fn a_round_is_one_observation_per_bot() {
    let events = vec![
        ev(1, 1, "a", Outcome::Success, Some(0.5)),
        ev(1, 1, "b", Outcome::NotSelected, Some(0.2)),
        ev(2, 1, "a", Outcome::Failure, None),
        ev(2, 2, "b", Outcome::ReplanFailure, None),
        ev(2, 2, "b", Outcome::CollectiveFailure, None),
        ev(2, 2, "c", Outcome::CollectiveFailure, None),
    ];
    let r = records(&events, &[]);
    assert_eq!(ab(&r[0]), (2.0, 2.0));
    assert_eq!(
        ab(&r[1]),
        (1.0, 3.0),
        "replan_failure and collective_failure: one loss"
    );
    assert_eq!(ab(&r[2]), (1.0, 2.0));
    assert_eq!((r[0].history, r[1].history, r[2].history), (2, 2, 1));
    assert_eq!(r[0].cost_per_proposal, Some(0.5));
    assert_eq!(r[2].cost_per_proposal, None);
    assert_eq!(r[0].seats_won, 0, "no seating recorded: no seat counted");
}

#[test]
fn merges_weigh_most() {
    let mut merged = ev(1, 1, "a", Outcome::Merged, None);
    merged.round = None;
    let mut closed = ev(2, 1, "b", Outcome::ClosedUnmerged, None);
    closed.round = None;
    let events = vec![
        ev(1, 1, "a", Outcome::Success, None),
        ev(2, 1, "b", Outcome::Success, None),
        merged,
        closed,
    ];
    let r = records(&events, &[]);
    assert_eq!(ab(&r[0]), (4.0, 1.0));
    assert_eq!(ab(&r[1]), (2.0, 3.0));
    assert_eq!((r[0].merged, r[1].merged), (1, 0));
}

#[test]
fn a_seated_bot_without_an_event_lost_and_seats_are_counted() {
    // a, b, c seated; a won; b outranked; c was skipped (no event), its proposal's cost known.
    let mut s = seating(1, &["a", "b", "c"], &[]);
    for b in &mut s.bots {
        b.spent_usd = Some(if b.bot_id == "c" { 0.7 } else { 0.1 });
    }
    let mut won = ev(1, 1, "a", Outcome::Success, Some(1.0));
    won.seating = Some(s.clone());
    let mut lost = ev(1, 1, "b", Outcome::NotSelected, Some(0.5));
    lost.seating = Some(s);
    // A failed round seating a and c: only the winner has an event.
    let s2 = seating(2, &["a", "c"], &[]);
    let mut failed = ev(2, 1, "a", Outcome::Failure, None);
    failed.seating = Some(s2);
    let r = records(&[won, lost, failed], &[]);
    assert_eq!(ab(&r[0]), (2.0, 2.0));
    assert_eq!(ab(&r[1]), (1.0, 2.0));
    assert_eq!(
        ab(&r[2]),
        (1.0, 3.0),
        "skipped in round 1, outranked in round 2"
    );
    assert_eq!((r[0].seats_won, r[1].seats_won, r[2].seats_won), (2, 1, 2));
    // The seating's spend is the cost, and the events' own is not counted again.
    assert_eq!(r[2].cost_per_proposal, Some(0.7));
    assert_eq!(
        (r[0].cost_per_proposal, r[0].proposal_cost_usd),
        (Some(0.1), 0.1)
    );
}

#[test]
fn issues_sharing_a_label_count_fully_the_rest_half() {
    let mut bug = ev(1, 1, "a", Outcome::Success, None);
    bug.seating = Some(seating(1, &["a"], &["bug"]));
    let mut docs = ev(2, 1, "a", Outcome::Failure, None);
    docs.seating = Some(seating(2, &["a"], &["docs"]));
    // An issue whose labels no event recorded.
    let unknown = ev(3, 1, "a", Outcome::Failure, None);
    let events = [bug, docs, unknown];
    assert_eq!(ab(&records(&events, &["bug"])[0]), (2.0, 2.0));
    assert_eq!(ab(&records(&events, &["docs", "ui"])[0]), (1.5, 2.5));
    assert_eq!(
        ab(&records(&events, &[])[0]),
        (2.0, 3.0),
        "unlabelled: all alike"
    );
}

#[test]
fn memory_bounds_the_evidence_so_a_loser_keeps_a_chance_and_a_change_shows() {
    // Memory alone: no departure test.
    let p = SeatingParams {
        memory: 0.9,
        drift_odds: f64::INFINITY,
        ..params()
    };
    let never = SeatingParams {
        drift_odds: f64::INFINITY,
        ..params()
    };
    let losses: Vec<Event> = (0..200)
        .map(|i| ev(i, 1, "a", Outcome::NotSelected, None))
        .collect();
    let refs: Vec<&Event> = losses.iter().collect();
    let r = &seat_records(&p, &["a".into()], &refs, &[])[0];
    assert_eq!(r.history, 200);
    assert!(r.beta < 1.0 + 1.0 / (1.0 - 0.9) + 1e-9, "{}", r.beta);
    assert!(r.beta > 10.9, "{}", r.beta);
    // Ten wins after the two hundred losses move the mean more than a forgetful-free tally would.
    let mut changed = losses.clone();
    changed.extend((200..210).map(|i| ev(i, 1, "a", Outcome::Success, None)));
    let refs: Vec<&Event> = changed.iter().collect();
    let fresh = &seat_records(&p, &["a".into()], &refs, &[])[0];
    let stale = &seat_records(&never, &["a".into()], &refs, &[])[0];
    let mean = |r: &SeatRecord| r.alpha / (r.alpha + r.beta);
    assert!(
        mean(fresh) > 0.45 && mean(stale) < 0.06,
        "{} {}",
        mean(fresh),
        mean(stale)
    );
}

/// `a`'s record: `before` rounds (true: won), then `after`, with no forgetting.
fn departed(before: &[bool], after: &[bool]) -> SeatRecord {
    let outcome = |won: bool| {
        if won {
            Outcome::Success
        } else {
            Outcome::NotSelected
        }
    };
    let events: Vec<Event> = before
        .iter()
        .chain(after)
        .enumerate()
        .map(|(i, &won)| ev(i as u64, 1, "a", outcome(won), None))
        .collect();
    let refs: Vec<&Event> = events.iter().collect();
    seat_records(&params(), &["a".into()], &refs, &[]).remove(0)
}

#[test]
fn latest_rounds_that_depart_from_the_record_set_it_aside() {
    let lost = vec![false; 40];
    // A bot that lost forty rounds wins one: a win is 0.5 likely for a bot of unknown chance
    // and 1/42 for this record — 21 times likelier: the record is set aside.
    let r = departed(&lost, &[true]);
    assert_eq!(r.departed, Some(1));
    assert_eq!(
        (r.alpha, r.beta),
        (2.0, 1.0),
        "only the departing round counts"
    );
    assert_eq!(r.history, 41, "the history is still the bot's");
    // Two wins after the losses: both are kept, the likelier departure.
    let r = departed(&lost, &[true, true]);
    assert_eq!((r.departed, r.alpha, r.beta), (Some(2), 3.0, 1.0));
    // A bot that wins one round in ten wins again: 0.5 against about 0.1 is not 10 to 1.
    let tenth: Vec<bool> = (0..40).map(|i| i % 10 == 0).collect();
    let r = departed(&tenth, &[true]);
    assert_eq!(r.departed, None);
    assert_eq!((r.alpha, r.beta), (6.0, 37.0));
    // But it is a suspect: its win is 0.5 / (5 / 42) = 4.2 times likelier for a changed bot
    // than for its record before it (Beta(5, 37)).
    assert!(
        (r.surprise - 0.5 / (5.0 / 42.0)).abs() < 1e-9,
        "{}",
        r.surprise
    );
    // A bot that won nine rounds in ten loses three in a row: only a run better than the
    // record departs — a bot that got worse is still seated, and its record says so soon
    // enough — and a worse run is no surprise either.
    let strong: Vec<bool> = (0..40).map(|i| i % 10 != 0).collect();
    let r = departed(&strong, &[false, false, false]);
    assert_eq!((r.departed, r.surprise), (None, 1.0));
    assert_eq!((r.alpha, r.beta), (37.0, 8.0));
    // A departed record leaves no suspicion behind: the bot is explored afresh already.
    assert_eq!(departed(&lost, &[true]).surprise, 1.0);
    // Nothing before the latest rounds: nothing to depart from.
    assert_eq!(departed(&[], &[true, true]).departed, None);
}

#[test]
fn a_longer_window_waits_for_more_evidence_and_keeps_it() {
    let p = SeatingParams {
        drift_window: 10,
        drift_odds: 50.0,
        ..params()
    };
    let record = |after: &[bool]| {
        let events: Vec<Event> = (0..40)
            .map(|_| false)
            .chain(after.iter().copied())
            .enumerate()
            .map(|(i, won)| {
                let outcome = if won {
                    Outcome::Success
                } else {
                    Outcome::NotSelected
                };
                ev(i as u64, 1, "a", outcome, None)
            })
            .collect();
        let refs: Vec<&Event> = events.iter().collect();
        seat_records(&p, &["a".into()], &refs, &[]).remove(0)
    };
    // One win after forty losses is 21 to 1: not yet.
    assert_eq!(record(&[true]).departed, None);
    // Two in three is: and a loss between the wins does not undo it.
    let r = record(&[true, false, true]);
    assert_eq!((r.departed, r.alpha, r.beta), (Some(3), 3.0, 2.0));
    let r = record(&[true, false, true, false, true, true]);
    assert_eq!(r.departed, Some(6));
}

#[test]
fn a_bot_is_idle_for_the_seated_rounds_since_its_last_seat() {
    let events = vec![
        {
            let mut e = ev(1, 1, "a", Outcome::Success, None);
            e.seating = Some(seating(1, &["a", "b"], &[]));
            e
        },
        ev(1, 1, "b", Outcome::NotSelected, None),
        {
            let mut e = ev(2, 1, "a", Outcome::Success, None);
            e.seating = Some(seating(2, &["a"], &[]));
            e
        },
        {
            let mut e = ev(3, 1, "a", Outcome::Failure, None);
            e.seating = Some(seating(3, &["a"], &[]));
            e
        },
    ];
    let r = records(&events, &[]);
    assert_eq!((r[0].idle, r[1].idle), (0, 2));
    assert_eq!(r[2].idle, 3, "never seated: every seated round");
}

#[test]
fn the_cost_per_proposal_is_the_mean_of_the_latest_window() {
    let p = SeatingParams {
        cost_window: 2,
        ..params()
    };
    let events = [
        ev(1, 1, "a", Outcome::NotSelected, Some(1.0)),
        ev(2, 1, "a", Outcome::NotSelected, Some(0.2)),
        ev(3, 1, "a", Outcome::ReplanFailure, Some(0.4)),
        // The same round's second event of the bot repeats the round's spend: not counted.
        ev(3, 1, "a", Outcome::CollectiveFailure, Some(0.4)),
    ];
    let refs: Vec<&Event> = events.iter().collect();
    let r = &seat_records(&p, &["a".into()], &refs, &[])[0];
    assert!((r.cost_per_proposal.unwrap() - 0.3).abs() < 1e-12);
    assert!((r.proposal_cost_usd - 1.6).abs() < 1e-12);
}

#[test]
fn the_board_ranks_by_posterior_and_prices_a_merged_pull_request() {
    let s = seating(1, &["a", "b"], &["bug"]);
    let mut won = ev(1, 1, "a", Outcome::Success, Some(0.3));
    won.seating = Some(s.clone());
    let mut lost = ev(1, 1, "b", Outcome::NotSelected, Some(0.1));
    lost.seating = Some(s.clone());
    let mut merged = ev(1, 1, "a", Outcome::Merged, None);
    merged.round = None;
    let events = [won, lost, merged];
    let refs: Vec<&Event> = events.iter().collect();
    let bots = ["a", "b", "c"].map(String::from);
    let b = board(2, &params(), &bots, &refs);
    assert_eq!((b.seats, b.rounds), (2, 1));
    let ids: Vec<&str> = b.bots.iter().map(|s| s.bot_id.as_str()).collect();
    assert_eq!(ids, ["a", "c", "b"]);
    assert_eq!(b.bots[0].cost_per_merged_pr, Some(0.3));
    assert_eq!(b.bots[0].seats_won, 1);
    assert_eq!(b.bots[2].cost_per_merged_pr, None);
    let latest = b.latest.unwrap();
    assert_eq!((latest.issue, latest.seating), (1, s));
    assert_eq!(latest.run_id.as_deref(), Some("run-1"));
}
