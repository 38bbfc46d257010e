//! The plan of a round's draw: who is a newcomer to explore, who may have changed and is tried
//! again (a suspect, an idle bot), the posterior each sample is drawn from, and the choice of
//! seats — the anchor by record, the seats that pay by their samples, the bots tried again in
//! the last seats — with why each bot was seated or not.

use super::{Candidate, SeatAsk, SeatReason};

/// The posterior a bot's sample is drawn from: its own; for a bot that may have changed — idle
/// `stale_after` seated rounds or more, or a suspect (its latest placings beat its record
/// `suspect_odds` to 1) — a uniform prior and two observations at its mean, so that the
/// draw can try it again: a bot passed over can have changed.
pub(super) fn held(c: &Candidate, ask: &SeatAsk) -> (f64, f64) {
    if c.history == 0 || !(c.idle >= ask.stale_after || suspect(c, ask)) {
        return (c.alpha, c.beta);
    }
    let mean = c.alpha / (c.alpha + c.beta);
    (1.0 + 2.0 * mean, 1.0 + 2.0 * (1.0 - mean))
}

/// Whether a bot with a history has latest placings that beat its record `suspect_odds` to 1.
pub(super) fn suspect(c: &Candidate, ask: &SeatAsk) -> bool {
    c.history > 0 && c.surprise >= ask.suspect_odds
}

/// The bots that can start, best sample first; the newcomers to explore; the rest; the bots to
/// try again; the seats there are at most.
pub(super) struct Plan {
    pub(super) available: Vec<usize>,
    exploring: Vec<usize>,
    /// The bots that may have changed, to be tried in the last seats: the suspects, most
    /// surprising first, and the bots idle past `stale_after` (no suspect among them),
    /// longest idle first.
    suspects: Vec<usize>,
    idle: Vec<usize>,
    rest: Vec<usize>,
    most: usize,
    /// Each bot's posterior mean, by its own record.
    mean: Vec<f64>,
    /// Whether the first drawn seat goes to the best by record (`SeatAsk::anchor`, and more
    /// than one seat: a single seat is drawn by the samples, so that the others are still
    /// tried).
    anchor: bool,
}

/// A choice of seats: the seated in the order they were seated, what each bot's seat was
/// worth (the value of a merge × the chance it adds), for every bot that can start, and the
/// bots tried again in the last seats.
#[derive(Clone)]
pub(super) struct Chosen {
    pub(super) seated: Vec<usize>,
    pub(super) worth: Vec<Option<f64>>,
    pub(super) tried: Vec<usize>,
}

impl Plan {
    pub(super) fn new(candidates: &[Candidate], samples: &[Option<f64>], ask: &SeatAsk) -> Plan {
        let most = ask.seats as usize;
        let sample = |i: usize| samples[i].unwrap_or(f64::NEG_INFINITY);
        let mut available: Vec<usize> = (0..candidates.len())
            .filter(|&i| samples[i].is_some())
            .collect();
        available.sort_by(|a, b| sample(*b).total_cmp(&sample(*a)).then(a.cmp(b)));
        // Newcomers are explored first, but while any bot has a history the anchor has a seat.
        let anyone_known = available.iter().any(|&i| candidates[i].history > 0);
        let explore = if anyone_known {
            most.saturating_sub(1)
        } else {
            most
        };
        let exploring: Vec<usize> = available
            .iter()
            .copied()
            .filter(|&i| candidates[i].history == 0)
            .take(explore)
            .collect();
        let rest: Vec<usize> = available
            .iter()
            .copied()
            .filter(|i| !exploring.contains(i))
            .collect();
        let mut suspects: Vec<usize> = rest
            .iter()
            .copied()
            .filter(|&i| suspect(&candidates[i], ask))
            .collect();
        suspects.sort_by(|&a, &b| {
            let surprise = |i: usize| candidates[i].surprise;
            surprise(b).total_cmp(&surprise(a)).then(a.cmp(&b))
        });
        let mut idle: Vec<usize> = rest
            .iter()
            .copied()
            .filter(|&i| candidates[i].idle >= ask.stale_after && !suspects.contains(&i))
            .collect();
        idle.sort_by_key(|&i| (std::cmp::Reverse(candidates[i].idle), i));
        Plan {
            available,
            exploring,
            suspects,
            idle,
            rest,
            most,
            mean: candidates
                .iter()
                .map(|c| c.alpha / (c.alpha + c.beta))
                .collect(),
            anchor: ask.anchor && most > 1,
        }
    }

    /// The seats, as many as pay. First the newcomers to explore, each while its price fits
    /// what is left of `budget`. Then the round's anchor: the bot whose seat is worth most by
    /// its record — `value` × its posterior mean, less its price — so that the round is never
    /// gambled on a sample. Then, one at a time, the bot whose seat adds the most by its
    /// sample, less its price, while that is more than nothing, it fits, and a seat is left.
    /// What a seat adds is `value` × (its sample θ × the chance `miss` that no bot seated so far
    /// delivers, less `misjudge` × the chance that one does × 1 − θ): a proposal rescues the
    /// round the others would lose, but it may also be picked over one that delivers and
    /// fail. Last, two bots to try again — the most surprising suspect, else the longest idle
    /// bot, and the longest idle bot after it — each take a last seat (in place of the last
    /// drawn bot when every seat is taken) when what it would add there pays for its price.
    /// Each bot's worth is what its seat added when it was taken, or would add after the last.
    pub(super) fn choose(
        &self,
        samples: &[Option<f64>],
        costs: &[(Option<f64>, bool)],
        rate: (f64, f64),
        budget: Option<f64>,
    ) -> Chosen {
        let (value, misjudge) = rate;
        let theta = |i: usize| samples[i].unwrap_or(0.0).clamp(0.0, 1.0);
        let adds = |i: usize, miss: f64| {
            value * (theta(i) * miss - misjudge * (1.0 - miss) * (1.0 - theta(i)))
        };
        let cost = |i: usize| costs[i].0.unwrap_or(0.0);
        let budget = budget.unwrap_or(f64::INFINITY);
        let mut seated: Vec<usize> = Vec::new();
        let mut worth = vec![None; samples.len()];
        // The chance that no seated bot delivers, and the money left.
        let miss = |seated: &[usize]| seated.iter().map(|&i| 1.0 - theta(i)).product::<f64>();
        let left = |seated: &[usize]| budget - seated.iter().map(|&i| cost(i)).sum::<f64>();
        let fits = |i: usize, seated: &[usize]| cost(i) <= left(seated) + 1e-12;
        for &i in &self.exploring {
            if fits(i, &seated) {
                worth[i] = Some(adds(i, miss(&seated)));
                seated.push(i);
            }
        }
        let net = |i: usize| value * self.mean[i] - cost(i);
        let anchor = self
            .rest
            .iter()
            .copied()
            .filter(|&i| self.anchor && seated.len() < self.most && fits(i, &seated))
            .max_by(|a, b| {
                net(*a)
                    .total_cmp(&net(*b))
                    .then(self.mean[*a].total_cmp(&self.mean[*b]))
                    .then(b.cmp(a))
            });
        if let Some(i) = anchor {
            worth[i] = Some(adds(i, miss(&seated)));
            seated.push(i);
        }
        // Two bots to try again: the most surprising suspect, else the longest idle bot; and
        // the longest idle bot after it.
        let suspect = self.suspects.iter().copied().find(|i| !seated.contains(i));
        let mut idle = self.idle.iter().copied().filter(|i| !seated.contains(i));
        let to_try: Vec<usize> = match suspect {
            Some(s) => std::iter::once(s).chain(idle.next()).collect(),
            None => idle.take(2).collect(),
        };
        let kept = seated.len();
        while seated.len() < self.most {
            let m = miss(&seated);
            let gain = |i: usize| adds(i, m) - cost(i);
            let best = self
                .rest
                .iter()
                .copied()
                .filter(|&i| !seated.contains(&i) && fits(i, &seated) && !to_try.contains(&i))
                .max_by(|a, b| {
                    gain(*a)
                        .total_cmp(&gain(*b))
                        .then(theta(*a).total_cmp(&theta(*b)))
                        .then(b.cmp(a))
                });
            match best {
                Some(i) if gain(i) > 0.0 || seated.is_empty() => {
                    worth[i] = Some(adds(i, m));
                    seated.push(i);
                }
                _ => break,
            }
        }
        // Each bot to try again, held loosely, takes a last seat — in place of the last drawn
        // bot when every seat is taken, never the anchor's or a newcomer's — when what it
        // would add there pays for its price.
        let mut tried = Vec::new();
        for t in to_try {
            let drawn = seated.len() - kept - tried.len();
            let mut with = seated.clone();
            if with.len() >= self.most && drawn > 0 {
                with.remove(kept + drawn - 1);
            }
            let m = miss(&with);
            if with.len() < self.most && fits(t, &with) && adds(t, m) > cost(t) {
                worth[t] = Some(adds(t, m));
                with.push(t);
                seated = with;
                tried.push(t);
            }
        }
        let m = miss(&seated);
        for &i in &self.available {
            if !seated.contains(&i) {
                worth[i] = Some(adds(i, m));
            }
        }
        Chosen {
            seated,
            worth,
            tried,
        }
    }

    /// Why bot `i` was seated or not, `free` being the seats had there been no cap.
    pub(super) fn reason(
        &self,
        i: usize,
        sample: Option<f64>,
        chosen: &Chosen,
        free: &[usize],
    ) -> SeatReason {
        match (chosen.seated.contains(&i), sample) {
            (_, None) => SeatReason::Unavailable,
            (true, _) if self.exploring.contains(&i) || chosen.tried.contains(&i) => {
                SeatReason::Exploring
            }
            (true, _) => SeatReason::Drawn,
            (false, _) if free.contains(&i) => SeatReason::OverBudget,
            (false, _) => SeatReason::Outdrawn,
        }
    }
}
