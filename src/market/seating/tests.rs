use super::*;
use proptest::prelude::*;

fn bot(id: &str, alpha: f64, beta: f64, history: u32, cost: Option<f64>) -> Candidate {
    Candidate {
        bot_id: id.to_owned(),
        alpha,
        beta,
        history,
        idle: 0,
        departed: None,
        surprise: 1.0,
        cost_usd: cost,
        cost_estimate_usd: None,
        unavailable: None,
    }
}

fn ask(seats: u32, seed: u64) -> SeatAsk {
    SeatAsk {
        seats,
        value_per_merge: 1e9,
        stale_after: 8,
        suspect_odds: 2.0,
        anchor: true,
        misjudge: 0.0,
        budget_usd: None,
        seed,
        issue: 0,
        round: 1,
        labels: vec!["bug".into()],
    }
}

fn seated(s: &Seating) -> Vec<&str> {
    s.seated().map(|b| b.bot_id.as_str()).collect()
}

/// How many of the draws asked by `ask` for seeds `0..n` seat `who`.
fn seated_in(candidates: &[Candidate], who: &str, n: u64, ask: impl Fn(u64) -> SeatAsk) -> usize {
    (0..n)
        .filter(|&seed| draw(candidates, &ask(seed)).is_seated(who))
        .count()
}

/// How often `who` is seated over `n` seeds.
fn rate(candidates: &[Candidate], seats: u32, who: &str, n: u64) -> f64 {
    seated_in(candidates, who, n, |seed| ask(seats, seed)) as f64 / n as f64
}

/// An ask of the draw before anchors: every seat by the samples.
fn unanchored(seats: u32, seed: u64, value: f64) -> SeatAsk {
    SeatAsk {
        anchor: false,
        ..priced(seats, seed, value)
    }
}

#[test]
fn a_bot_that_always_loses_is_seated_ever_less_but_never_never() {
    // Three bots that win about a third of their rounds, and one that lost every round it had.
    let field = |losses: f64| {
        vec![
            bot("a", 4.0, 8.0, 10, None),
            bot("b", 3.0, 7.0, 8, None),
            bot("c", 5.0, 9.0, 12, None),
            bot("loser", 1.0, 1.0 + losses, losses as u32, None),
        ]
    };
    let rates: Vec<f64> = [1.0, 5.0, 10.0, 20.0]
        .iter()
        .map(|&l| rate(&field(l), 2, "loser", 20_000))
        .collect();
    for pair in rates.windows(2) {
        assert!(pair[1] < pair[0], "seated ever less: {rates:?}");
    }
    assert!(rates[0] > 0.2, "{rates:?}");
    assert!(rates[3] > 0.0, "never never: {rates:?}");
    assert!(rates[3] < 0.01, "{rates:?}");
}

#[test]
fn a_new_bot_is_explored() {
    let field = vec![
        bot("a", 20.0, 5.0, 30, None),
        bot("b", 18.0, 6.0, 30, None),
        bot("c", 15.0, 9.0, 30, None),
        bot("new", 1.0, 1.0, 0, None),
    ];
    for seed in 0..200 {
        let s = draw(&field, &ask(2, seed));
        let new = s.bots.iter().find(|b| b.bot_id == "new").unwrap();
        assert!(new.seated, "seed {seed}: {}", s.line());
        assert_eq!(new.reason, SeatReason::Exploring);
        assert_eq!(s.seated().count(), 2);
        assert!(s.line().contains("new (exploring)"), "{}", s.line());
    }
    // One seat: it stays drawn while another bot has a history; the newcomer's uniform
    // prior still wins it now and then.
    let one = rate(&field, 1, "new", 4000);
    assert!(one > 0.02 && one < 0.5, "{one}");
    // Nobody has a history: every seat explores.
    let fresh: Vec<Candidate> = ["p", "q", "r", "s"]
        .iter()
        .map(|id| bot(id, 1.0, 1.0, 0, None))
        .collect();
    let s = draw(&fresh, &ask(3, 7));
    assert!(s.seated().all(|b| b.reason == SeatReason::Exploring));
    assert_eq!(s.seated().count(), 3);
}

#[test]
fn a_seed_reproduces_the_draw_and_a_replan_draws_afresh() {
    let field: Vec<Candidate> = (0..8)
        .map(|i| {
            bot(
                &format!("b{i}"),
                2.0 + i as f64,
                5.0,
                10,
                Some(0.1 * i as f64),
            )
        })
        .collect();
    let first = draw(&field, &ask(3, 42));
    assert_eq!(first, draw(&field, &ask(3, 42)));
    assert_eq!(first.seed, 42);
    let others = (0..20).any(|seed| seated(&draw(&field, &ask(3, seed))) != seated(&first));
    assert!(others, "another seed draws other seats");
    let mut replan = ask(3, 42);
    replan.round = 2;
    let second = draw(&field, &replan);
    assert_ne!(
        first.bots.iter().map(|b| b.sample).collect::<Vec<_>>(),
        second.bots.iter().map(|b| b.sample).collect::<Vec<_>>()
    );
    // Under one configured seed another issue draws afresh, and the same issue the same.
    let on = |issue: u64| {
        let a = SeatAsk {
            issue,
            ..ask(3, 42)
        };
        draw(&field, &a)
            .bots
            .iter()
            .map(|b| b.sample)
            .collect::<Vec<_>>()
    };
    assert_ne!(on(7), on(8));
    assert_eq!(on(7), on(7));
    assert_eq!(
        draw(
            &field,
            &SeatAsk {
                issue: 7,
                ..ask(3, 42)
            }
        )
        .seed,
        42
    );
    // Recorded and read back, it is the same seating.
    let json = serde_json::to_string(&first).unwrap();
    assert_eq!(serde_json::from_str::<Seating>(&json).unwrap(), first);
}

#[test]
fn a_cost_cap_binds() {
    // A strong, expensive bot and three cheap, middling ones; $1 for two seats.
    let field = vec![
        bot("strong", 30.0, 10.0, 40, Some(2.0)),
        bot("c1", 10.0, 10.0, 20, Some(0.2)),
        bot("c2", 10.0, 10.0, 20, Some(0.3)),
        bot("c3", 9.0, 11.0, 20, Some(0.25)),
    ];
    assert!(
        rate(&field, 2, "strong", 500) > 0.95,
        "uncapped it is seated"
    );
    for seed in 0..300 {
        let mut a = ask(2, seed);
        a.budget_usd = Some(1.0);
        let s = draw(&field, &a);
        let spent: f64 = s.seated().filter_map(|b| b.cost_usd).sum();
        assert!(spent <= 1.0 + 1e-9, "{}", s.line());
        assert_eq!(s.seated().count(), 2, "{}", s.line());
        let strong = s.bots.iter().find(|b| b.bot_id == "strong").unwrap();
        assert!(!strong.seated);
        if strong.sample > s.bots[1].sample {
            assert_eq!(
                strong.reason,
                SeatReason::OverBudget,
                "{:?}",
                s.left_out_line()
            );
        }
        assert!(
            s.line().starts_with("seated: 2 of 4 within $1.00 — "),
            "{}",
            s.line()
        );
    }
    // With $2.30 the strong bot and one cheap one fit, and that beats two cheap ones.
    let mut a = ask(2, 3);
    a.budget_usd = Some(2.3);
    let s = draw(&field, &a);
    assert!(s.is_seated("strong"), "{}", s.line());
    // Nothing fits: nobody is seated, and the line says so.
    a.budget_usd = Some(0.1);
    let s = draw(&field, &a);
    assert_eq!(s.seated().count(), 0);
    assert!(s.line().ends_with("— nobody"), "{}", s.line());
}

#[test]
fn unknown_costs_are_the_lowest_known_and_no_cost_known_leaves_the_cap_out() {
    let mut field = vec![
        bot("a", 5.0, 5.0, 5, Some(0.1)),
        bot("b", 5.0, 5.0, 5, Some(0.3)),
        bot("c", 5.0, 5.0, 5, None),
    ];
    let mut a = ask(3, 1);
    a.budget_usd = Some(10.0);
    let s = draw(&field, &a);
    let c = s.bots.iter().find(|b| b.bot_id == "c").unwrap();
    assert_eq!((c.cost_usd, c.cost_assumed), (Some(0.1), true));
    assert!(s.line().contains("≈$0.10"), "{}", s.line());
    // One expensive measure prices out the known bots, not a newcomer: it is seated to learn
    // what it costs.
    let mut a = ask(2, 1);
    a.budget_usd = Some(1.0);
    let priced = vec![
        bot("dear", 1.0, 3.0, 1, Some(1.2)),
        bot("unpriced", 1.0, 1.5, 1, None),
        bot("new", 1.0, 1.0, 0, None),
    ];
    let s = draw(&priced, &a);
    assert_eq!(seated(&s), ["new"], "{}", s.line());
    assert!(s.line().contains("new ≈$0.00 (exploring)"), "{}", s.line());
    let mut cheaper = priced.clone();
    cheaper.push(bot("cheap", 1.0, 2.0, 1, Some(0.3)));
    let s = draw(&cheaper, &a);
    assert_eq!(s.seated().count(), 2, "{}", s.line());
    assert!(s.is_seated("new") && !s.is_seated("dear"));
    for b in &mut field {
        b.cost_usd = None;
    }
    let mut a = ask(3, 1);
    a.budget_usd = Some(1.0);
    let s = draw(&field, &a);
    assert_eq!(s.budget_usd, None);
    assert_eq!(s.seated().count(), 3);
    assert!(
        s.notes.iter().any(|n| n.contains("cannot shape")),
        "{:?}",
        s.notes
    );
}

#[test]
fn a_bot_that_cannot_start_is_never_seated_and_listed_last() {
    let mut field = vec![
        bot("a", 1.0, 1.0, 0, None),
        bot("b", 1.0, 1.0, 0, None),
        bot("c", 1.0, 1.0, 0, None),
    ];
    field[0].unavailable = Some("program not found".into());
    let s = draw(&field, &ask(3, 9));
    assert_eq!(s.seated().count(), 2);
    let last = s.bots.last().unwrap();
    assert_eq!(
        (last.bot_id.as_str(), last.reason),
        ("a", SeatReason::Unavailable)
    );
    assert_eq!(last.sample, None);
    assert_eq!(s.left_out_line().unwrap(), "not seated: a (cannot start)");
    assert!(s.notes.iter().any(|n| n.contains("every bot")));
}

#[test]
fn the_line_names_the_seated_with_their_samples() {
    let field = vec![
        bot("alpha", 30.0, 10.0, 40, None),
        bot("beta", 2.0, 30.0, 40, None),
        bot("gamma", 20.0, 15.0, 40, None),
        bot("delta", 1.0, 1.0, 0, None),
    ];
    let s = draw(&field, &ask(3, 5));
    let line = s.line();
    assert!(line.starts_with("seated: 3 of 4 — "), "{line}");
    assert!(
        line.ends_with("delta (exploring)") || line.contains("delta (exploring),"),
        "{line}"
    );
    let alpha = s.bots.iter().find(|b| b.bot_id == "alpha").unwrap();
    assert!(
        line.contains(&format!("alpha {:.2}", alpha.sample.unwrap())),
        "{line}"
    );
    assert!(s
        .left_out_line()
        .unwrap()
        .starts_with("not seated: beta 0."));
    assert!((alpha.mean - 0.75).abs() < 1e-12);
}

#[test]
fn beta_samples_have_the_posterior_mean() {
    let mut rng = SplitMix64::new(11);
    for (a, b) in [(1.0, 1.0), (2.0, 8.0), (30.5, 10.25), (0.5, 0.5)] {
        let n = 20_000;
        let mean = (0..n).map(|_| beta_sample(&mut rng, a, b)).sum::<f64>() / n as f64;
        assert!((mean - a / (a + b)).abs() < 0.01, "Beta({a}, {b}): {mean}");
    }
}

/// An ask that prices the seats at `value` a merge.
fn priced(seats: u32, seed: u64, value: f64) -> SeatAsk {
    SeatAsk {
        value_per_merge: value,
        ..ask(seats, seed)
    }
}

#[test]
fn a_cheap_bot_as_good_as_a_dear_one_takes_the_seat() {
    let field = vec![
        bot("dear", 20.0, 20.0, 40, Some(2.0)),
        bot("cheap", 20.0, 20.0, 40, Some(0.1)),
    ];
    let cheap = seated_in(&field, "cheap", 500, |seed| priced(1, seed, 10.0));
    // The dear one wins only when its sample is higher by its $1.90 more over $10 a merge.
    assert!(cheap > 450, "{cheap} of 500");
    // With two seats the first is the round's anchor, the better by record: as good, the
    // cheaper, always.
    for seed in 0..100 {
        let s = draw(&field, &priced(2, seed, 10.0));
        assert_eq!(s.seated().next().unwrap().bot_id, "cheap", "{}", s.line());
    }
    // Filled regardless of price (a merge worth a fortune) and without the anchor (the draw
    // before anchors), the samples alone decide.
    let filled = seated_in(&field, "cheap", 500, |seed| unanchored(1, seed, 1e9));
    assert!((150..350).contains(&filled), "{filled} of 500");
}

#[test]
fn the_anchor_is_the_best_bot_by_record_not_by_a_lucky_sample() {
    // A bot known to deliver 60% of the time, and a newcomer-like one that could be anything.
    let field = vec![
        bot("known", 60.0, 40.0, 100, Some(0.5)),
        bot("vague", 1.2, 1.0, 2, Some(0.5)),
    ];
    for seed in 0..300 {
        let s = draw(&field, &priced(2, seed, 10.0));
        let first = s.seated().next().unwrap();
        assert_eq!(first.bot_id, "known", "{}", s.line());
        assert_eq!(first.reason, SeatReason::Drawn);
    }
    // Without the anchor, one seat goes to the vague bot whenever its sample is higher.
    let vague = seated_in(&field, "vague", 300, |seed| unanchored(1, seed, 10.0));
    assert!((60..200).contains(&vague), "{vague} of 300");
    // A dear bot anchors only while its record pays for its price: $10 × (0.6 − 0.55) < $1.
    let dear = vec![
        bot("dear", 60.0, 40.0, 100, Some(1.5)),
        bot("cheap", 55.0, 45.0, 100, Some(0.5)),
    ];
    let s = draw(&dear, &priced(2, 1, 10.0));
    assert_eq!(s.seated().next().unwrap().bot_id, "cheap", "{}", s.line());
    // A single seat has no anchor: it is drawn by the samples, so that the others are tried.
    let one = seated_in(&field, "vague", 300, |seed| priced(1, seed, 10.0));
    assert!(one > 30, "{one} of 300");
}

#[test]
fn a_suspect_is_tried_before_the_idle_ones_and_both_when_seats_allow() {
    // Two good bots; one idle for long; one whose latest placings beat its weak record.
    let mut field = vec![
        bot("a", 60.0, 40.0, 100, Some(0.1)),
        bot("b", 55.0, 45.0, 100, Some(0.1)),
        bot("idle", 2.0, 30.0, 30, Some(0.1)),
        bot("suspect", 3.0, 30.0, 32, Some(0.1)),
    ];
    field[2].idle = 8;
    field[3].surprise = 5.0;
    let (mut suspect, mut idle, mut both) = (0, 0, 0);
    for seed in 0..300 {
        let s = draw(&field, &priced(2, seed, 10.0));
        assert_eq!(s.seated().next().unwrap().bot_id, "a", "{}", s.line());
        assert!(
            !(s.is_seated("idle") && s.is_seated("suspect")),
            "two seats: one is the anchor's: {}",
            s.line()
        );
        for d in s
            .seated()
            .filter(|d| d.bot_id == "suspect" || d.bot_id == "idle")
        {
            assert_eq!(d.reason, SeatReason::Exploring);
        }
        let said = s
            .notes
            .iter()
            .any(|n| n == "suspect: its latest rounds beat its record 5.0 to 1: it is tried again");
        assert_eq!(said, s.is_seated("suspect"), "{:?}", s.notes);
        suspect += usize::from(s.is_seated("suspect"));
        idle += usize::from(s.is_seated("idle"));
        let s = draw(&field, &priced(3, seed, 10.0));
        both += usize::from(s.is_seated("idle") && s.is_seated("suspect"));
    }
    // The suspect has the first try; the idle bot the seat the suspect's sample did not pay
    // for.
    assert!(
        suspect > 150,
        "the suspect is held loosely and tried: {suspect} of 300"
    );
    assert!(suspect > 2 * idle, "{suspect} against {idle}");
    assert!(both > 100, "with three seats both are tried: {both} of 300");
    // Below `suspect_odds` it is no suspect: its own record keeps it out.
    field[3].surprise = 1.5;
    field[2].idle = 0;
    let tried = seated_in(&field, "suspect", 300, |seed| priced(2, seed, 10.0));
    assert!(tried < 10, "{tried}");
}

#[test]
fn seats_are_taken_while_they_pay_one_when_the_ledger_is_sure() {
    // One bot that almost always delivers, two middling ones; $1 a proposal, $10 a merge.
    let sure = vec![
        bot("sure", 900.0, 100.0, 1000, Some(1.0)),
        bot("m1", 50.0, 50.0, 100, Some(1.0)),
        bot("m2", 50.0, 50.0, 100, Some(1.0)),
    ];
    // After `sure`, a middling bot adds 10 × 0.5 × 0.1 = $0.50 for $1: not worth it.
    for seed in 0..100 {
        let s = draw(&sure, &priced(3, seed, 10.0));
        assert_eq!(seated(&s), ["sure"], "{}", s.line());
        assert!(
            s.line().starts_with("seated: 1 of 3 (at most 3) — sure 0.")
                && s.line().ends_with(" $1.00"),
            "{}",
            s.line()
        );
        let left = s.left_out_line().unwrap();
        assert!(
            left.contains("m1 0.") && left.contains("$1.00 (adds $0."),
            "{left}"
        );
        let m1 = s.bots.iter().find(|b| b.bot_id == "m1").unwrap();
        assert_eq!(m1.reason, SeatReason::Outdrawn);
        assert!(m1.worth_usd.unwrap() < 1.0);
    }
    // Unsure of everyone, more seats pay: 10 × 0.5 × 0.5 = $2.50 for the second.
    let unsure = vec![
        bot("u1", 5.0, 5.0, 8, Some(1.0)),
        bot("u2", 5.0, 5.0, 8, Some(1.0)),
        bot("u3", 5.0, 5.0, 8, Some(1.0)),
    ];
    let mean_seats = |field: &[Candidate]| {
        (0..400)
            .map(|seed| draw(field, &priced(3, seed, 10.0)).seated().count())
            .sum::<usize>() as f64
            / 400.0
    };
    assert!(mean_seats(&unsure) > 2.0, "{}", mean_seats(&unsure));
    // Nothing pays for itself: the round still has its one seat, the best of a bad lot.
    let dear = vec![
        bot("x", 1.0, 9.0, 10, Some(5.0)),
        bot("y", 1.0, 9.0, 10, Some(6.0)),
    ];
    let s = draw(&dear, &priced(2, 1, 10.0));
    assert_eq!(seated(&s), ["x"], "{}", s.line());
    // Without any known cost each seat costs nothing, and the notes say why.
    let unknown = vec![bot("p", 9.0, 1.0, 10, None), bot("q", 9.0, 1.0, 10, None)];
    let s = draw(&unknown, &priced(2, 1, 10.0));
    assert_eq!(s.seated().count(), 2);
    assert!(
        s.notes.iter().any(|n| n.contains("no bot's cost")),
        "{:?}",
        s.notes
    );
}

#[test]
fn a_weak_proposal_beside_a_sure_one_risks_more_than_it_adds() {
    // A bot sure to deliver, and a weak one that costs next to nothing.
    let field = vec![
        bot("sure", 90.0, 10.0, 100, Some(1.0)),
        bot("weak", 10.0, 90.0, 100, Some(0.01)),
    ];
    let seats = |misjudge: f64| {
        (0..200)
            .filter(|&seed| {
                let a = SeatAsk {
                    misjudge,
                    ..priced(2, seed, 10.0)
                };
                draw(&field, &a).is_seated("weak")
            })
            .count()
    };
    // If the judges never erred, its 10% of the rounds the sure bot loses would pay for a cent.
    assert!(seats(0.0) > 190, "{}", seats(0.0));
    // With one mistake in twenty, picking it over a delivering proposal costs more.
    assert_eq!(seats(0.05), 0);
    let a = SeatAsk {
        misjudge: 0.05,
        ..priced(2, 1, 10.0)
    };
    let s = draw(&field, &a);
    assert!(
        s.left_out_line().unwrap().contains("weak 0.")
            && s.left_out_line().unwrap().contains("(adds −$0."),
        "{:?}",
        s.left_out_line()
    );
}

#[test]
fn a_newcomer_counts_what_its_backend_and_model_are_known_to_cost() {
    let mut new = bot("new", 1.0, 1.0, 0, None);
    new.cost_estimate_usd = Some(0.8);
    let field = vec![bot("a", 5.0, 5.0, 10, Some(0.3)), new];
    let mut a = priced(2, 3, 10.0);
    a.budget_usd = Some(0.5);
    let s = draw(&field, &a);
    let n = s.bots.iter().find(|b| b.bot_id == "new").unwrap();
    assert_eq!((n.cost_usd, n.cost_assumed), (Some(0.8), true));
    assert!(
        !n.seated,
        "its estimate does not fit the $0.50 left: {}",
        s.line()
    );
    assert_eq!(n.reason, SeatReason::OverBudget);
    a.budget_usd = Some(2.0);
    let s = draw(&field, &a);
    assert!(s.is_seated("new"), "{}", s.line());
    assert!(s.line().contains("new ≈$0.80 (exploring)"), "{}", s.line());
}

#[test]
fn a_bot_idle_too_long_is_tried_in_the_last_seat_when_it_would_pay_there() {
    // Two good bots and one that lost thirty rounds; two seats, $10 a merge.
    let mut field = vec![
        bot("a", 6.0, 4.0, 50, Some(0.1)),
        bot("b", 6.0, 4.0, 50, Some(0.1)),
        bot("idle", 1.0, 30.0, 30, Some(0.1)),
    ];
    let tried = |field: &[Candidate]| seated_in(field, "idle", 1000, |seed| priced(2, seed, 10.0));
    assert!(tried(&field) < 10, "{}", tried(&field));
    // Idle for `stale_after` rounds, its record is held loosely and it is tried in the last
    // seat, as an exploration, whenever what it would add there pays for it.
    field[2].idle = 8;
    let now = tried(&field);
    assert!(now > 500, "{now}");
    for seed in 0..50 {
        let s = draw(&field, &priced(2, seed, 10.0));
        if let Some(d) = s.bots.iter().find(|b| b.bot_id == "idle" && b.seated) {
            assert_eq!(d.reason, SeatReason::Exploring);
            assert_eq!(s.seated().count(), 2, "{}", s.line());
            assert!(d.worth_usd.unwrap() > 0.1);
        }
    }
    // Without a suspect, two idle bots are tried when the seats allow: the longest idle first.
    let mut two = field.clone();
    two.push(bot("idle2", 1.0, 30.0, 30, Some(0.1)));
    two[3].idle = 8;
    let (mut first, mut both) = (0, 0);
    for seed in 0..300 {
        let s = draw(&two, &priced(3, seed, 10.0));
        first += usize::from(s.is_seated("idle"));
        both += usize::from(s.is_seated("idle") && s.is_seated("idle2"));
        let s = draw(&two, &priced(2, seed, 10.0));
        assert!(
            !(s.is_seated("idle") && s.is_seated("idle2")),
            "{}",
            s.line()
        );
    }
    assert!(first > 150 && both > 50, "{first} {both}");
    // Dear, it is tried less: what it adds must pay for its price.
    field[2].cost_usd = Some(1.5);
    let dear = tried(&field);
    assert!(dear < now / 2, "{dear} against {now}");
}

#[test]
fn a_departed_record_is_said() {
    let mut field = vec![bot("a", 5.0, 5.0, 10, None), bot("b", 2.0, 1.0, 40, None)];
    field[1].departed = Some(1);
    let s = draw(&field, &ask(1, 1));
    assert!(
        s.notes
            .iter()
            .any(|n| n.starts_with("b: its latest 1 round(s) depart from its record")),
        "{:?}",
        s.notes
    );
}

proptest! {
    /// Under any cap the seats fit it, and there are never more seats than asked.
    #[test]
    fn seats_fit_the_cap(
        costs in proptest::collection::vec(0.0f64..2.0, 1..10),
        seats in 1u32..6,
        budget in 0.0f64..4.0,
        seed in any::<u64>(),
    ) {
        let field: Vec<Candidate> = costs
            .iter()
            .enumerate()
            .map(|(i, &c)| bot(&format!("b{i}"), 1.0 + i as f64, 3.0, i as u32, Some(c)))
            .collect();
        let mut a = ask(seats, seed);
        a.budget_usd = Some(budget);
        let s = draw(&field, &a);
        let spent: f64 = s.seated().filter_map(|b| b.cost_usd).sum();
        prop_assert!(spent <= budget + 1e-9);
        prop_assert!(s.seated().count() <= seats as usize);
        prop_assert_eq!(s.bots.len(), field.len());
    }
}
