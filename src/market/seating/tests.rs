use super::*;
use proptest::prelude::*;

fn bot(id: &str, alpha: f64, beta: f64, history: u32, cost: Option<f64>) -> Candidate {
    Candidate {
        bot_id: id.to_owned(),
        alpha,
        beta,
        history,
        cost_usd: cost,
        unavailable: None,
    }
}

fn ask(seats: u32, seed: u64) -> SeatAsk {
    SeatAsk {
        seats,
        budget_usd: None,
        seed,
        round: 1,
        labels: vec!["bug".into()],
    }
}

fn seated(s: &Seating) -> Vec<&str> {
    s.seated().map(|b| b.bot_id.as_str()).collect()
}

/// How often `who` is seated over `n` seeds.
fn rate(candidates: &[Candidate], seats: u32, who: &str, n: u64) -> f64 {
    let hits = (0..n)
        .filter(|&seed| draw(candidates, &ask(seats, seed)).is_seated(who))
        .count();
    hits as f64 / n as f64
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

/// The best value of a subset by brute force, with every cost rounded up to a thousandth of
/// the budget as the knapsack counts it.
fn brute(items: &[(f64, f64)], k: usize, budget: f64) -> (f64, f64) {
    let step = budget / 1000.0;
    let units = |c: f64| {
        if c <= 0.0 {
            0.0
        } else {
            ((c / step) - 1e-9).ceil()
        }
    };
    let mut best = (0.0, 0.0);
    for mask in 0u32..(1 << items.len()) {
        let picked: Vec<usize> = (0..items.len()).filter(|i| mask & (1 << i) != 0).collect();
        let cost: f64 = picked.iter().map(|&i| items[i].1).sum();
        let steps: f64 = picked.iter().map(|&i| units(items[i].1)).sum();
        if picked.len() > k || cost > budget || steps > 1000.0 {
            continue;
        }
        let value: f64 = picked.iter().map(|&i| items[i].0).sum();
        if value > best.0 + 1e-9 {
            best = (value, cost);
        }
    }
    best
}

proptest! {
    /// The knapsack never overspends or takes too many, and finds the best value of the
    /// costs as it counts them (each rounded up to a thousandth of the budget).
    #[test]
    fn the_knapsack_is_exact_on_its_grid(
        items in proptest::collection::vec((0.01f64..3.0, 0u32..150), 0..9),
        k in 0usize..6,
        dollars in 0u32..4,
    ) {
        let items: Vec<(f64, f64)> = items.iter().map(|&(v, c)| (v, f64::from(c) / 100.0)).collect();
        let budget = f64::from(dollars);
        let chosen = knapsack(&items, k, budget);
        let cost: f64 = chosen.iter().map(|&i| items[i].1).sum();
        let value: f64 = chosen.iter().map(|&i| items[i].0).sum();
        prop_assert!(chosen.len() <= k);
        prop_assert!(cost <= budget + 1e-9);
        prop_assert!(chosen.windows(2).all(|w| w[0] < w[1]));
        let (best, _) = brute(&items, k, budget);
        prop_assert!((value - best).abs() < 1e-9, "{value} vs {best}");
    }

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
