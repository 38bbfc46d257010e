//! Leaderboard statistics beyond the prototype (docs/specification.md §8.5), all pure:
//!
//! - the success rate when selected, as the mean of the Beta(1 + successes, 1 + failures)
//!   posterior with its central 90% interval;
//! - a rating of proposal skill from the per-round rankings, with the Weng–Lin Bayesian
//!   update for Bradley–Terry full pairings (the model behind OpenSkill), shown as the
//!   conservative `μ − 3σ`;
//! - the Brier score of a bot's `success_probability` against what happened;
//! - the arbiter's health: Spearman's rank correlation between proposal and implementation
//!   scores — does the judge's ranking predict what gets delivered?

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A Beta posterior summarised as its mean and central 90% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BetaSummary {
    pub mean: f64,
    /// 5th percentile.
    pub low: f64,
    /// 95th percentile.
    pub high: f64,
}

/// The success rate when selected: Beta(1 + successes, 1 + failures).
pub fn success_rate(successes: u32, failures: u32) -> BetaSummary {
    let (a, b) = (successes + 1, failures + 1);
    BetaSummary {
        mean: f64::from(a) / f64::from(a + b),
        low: beta_quantile(0.05, a, b),
        high: beta_quantile(0.95, a, b),
    }
}

/// `ln Γ(n) = ln (n − 1)!` for a positive integer: the exact sum of logarithms for small `n`,
/// Stirling's series beyond (its error there is below 1e-14).
fn ln_gamma_int(n: u32) -> f64 {
    if n <= 30 {
        return (2..n).map(|k| f64::from(k).ln()).sum();
    }
    let x = f64::from(n);
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    (x - 0.5) * x.ln() - x
        + 0.5 * (2.0 * std::f64::consts::PI).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
}

/// `ln B(a, b)`, the logarithm of the beta function.
fn ln_beta(a: u32, b: u32) -> f64 {
    ln_gamma_int(a) + ln_gamma_int(b) - ln_gamma_int(a + b)
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let clamp_tiny = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (sum, plus, minus) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / clamp_tiny(1.0 - sum * x / plus);
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((minus + 2.0 * m) * (a + 2.0 * m));
        d = 1.0 / clamp_tiny(1.0 + even * d);
        c = clamp_tiny(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (sum + m) * x / ((a + 2.0 * m) * (plus + 2.0 * m));
        d = 1.0 / clamp_tiny(1.0 + odd * d);
        c = clamp_tiny(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function `I_x(a, b)`: the Beta(a, b) CDF at `x`.
pub fn beta_cdf(x: f64, a: u32, b: u32) -> f64 {
    beta_cdf_with(x, a, b, ln_beta(a, b))
}

/// [`beta_cdf`] with `ln B(a, b)` already known.
fn beta_cdf_with(x: f64, a: u32, b: u32, ln_b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let (af, bf) = (f64::from(a), f64::from(b));
    let front = (af * x.ln() + bf * (1.0 - x).ln() - ln_b).exp();
    if x < (af + 1.0) / (af + bf + 2.0) {
        front * beta_continued_fraction(x, af, bf) / af
    } else {
        1.0 - front * beta_continued_fraction(1.0 - x, bf, af) / bf
    }
}

/// The `p` quantile of Beta(a, b), by bisection on the CDF (monotone, so always converges).
pub fn beta_quantile(p: f64, a: u32, b: u32) -> f64 {
    let ln_b = ln_beta(a, b);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if beta_cdf_with(mid, a, b, ln_b) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-15 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// A Weng–Lin rating: a belief N(μ, σ²) about a bot's proposal skill.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
    /// `μ − 3σ`: the skill the bot has with high confidence; what the leaderboard shows.
    pub conservative: f64,
}

/// Prior mean of a new bot's skill.
const RATING_MU: f64 = 25.0;
/// Prior standard deviation: μ / 3, so a new bot's conservative rating is 0.
const RATING_SIGMA: f64 = 25.0 / 3.0;
/// Performance noise β = σ₀ / 2.
const RATING_BETA: f64 = RATING_SIGMA / 2.0;
/// Lower bound of the variance shrink factor, keeping σ positive.
const RATING_KAPPA: f64 = 1e-4;

impl Default for Rating {
    fn default() -> Rating {
        Rating::new(RATING_MU, RATING_SIGMA)
    }
}

impl Rating {
    fn new(mu: f64, sigma: f64) -> Rating {
        Rating {
            mu,
            sigma,
            conservative: mu - 3.0 * sigma,
        }
    }
}

/// Applies one round's ranking to the ratings. `ranking` holds each participant once with its
/// place (smaller is better; equal places are ties). Weng & Lin (2011), Algorithm 1 with the
/// Bradley–Terry full-pair model: every pair of participants is a game.
pub fn update_ratings(ratings: &mut BTreeMap<String, Rating>, ranking: &[(&str, u32)]) {
    if ranking.len() < 2 {
        return;
    }
    let before: Vec<Rating> = ranking
        .iter()
        .map(|(bot, _)| ratings.get(*bot).copied().unwrap_or_default())
        .collect();
    let beta2 = RATING_BETA * RATING_BETA;
    for (i, (bot, place_i)) in ranking.iter().enumerate() {
        let ri = before[i];
        let var_i = ri.sigma * ri.sigma;
        let (mut omega, mut delta) = (0.0, 0.0);
        for (q, (_, place_q)) in ranking.iter().enumerate() {
            if q == i {
                continue;
            }
            let rq = before[q];
            let c = (var_i + rq.sigma * rq.sigma + 2.0 * beta2).sqrt();
            let e_i = (ri.mu / c).exp();
            let e_q = (rq.mu / c).exp();
            let p_iq = e_i / (e_i + e_q);
            let score = match place_i.cmp(place_q) {
                std::cmp::Ordering::Less => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Greater => 0.0,
            };
            let gamma = ri.sigma / c;
            omega += var_i / c * (score - p_iq);
            delta += gamma * var_i / (c * c) * p_iq * (1.0 - p_iq);
        }
        let mu = ri.mu + omega;
        let sigma = (var_i * (1.0 - delta).max(RATING_KAPPA)).sqrt();
        match ratings.get_mut(*bot) {
            Some(r) => *r = Rating::new(mu, sigma),
            None => {
                ratings.insert((*bot).to_owned(), Rating::new(mu, sigma));
            }
        }
    }
}

/// The mean squared error of forecasts `(probability, happened)`; `None` without any.
pub fn brier_score(sum_sq: f64, n: u32) -> Option<f64> {
    (n > 0).then(|| sum_sq / f64::from(n))
}

/// The fewest pairs a rank correlation is computed from.
pub const MIN_PAIRS: usize = 3;

/// Why a rank correlation is undefined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Undefined {
    /// Fewer than [`MIN_PAIRS`] pairs.
    TooFew,
    /// Every pair has the same first value.
    ConstantFirst,
    /// Every pair has the same second value.
    ConstantSecond,
    /// Both sides are constant.
    ConstantBoth,
}

/// Spearman's rank correlation of the pairs (average ranks for ties). `None` with fewer than
/// three pairs or when either side is constant.
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    spearman_or_why(pairs).ok()
}

/// Spearman's rank correlation, or why it is undefined.
pub fn spearman_or_why(pairs: &[(f64, f64)]) -> Result<f64, Undefined> {
    if pairs.len() < MIN_PAIRS {
        return Err(Undefined::TooFew);
    }
    let xs = average_ranks(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
    let ys = average_ranks(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(&ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    match (sxx > 0.0, syy > 0.0) {
        (true, true) => Ok((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)),
        (false, true) => Err(Undefined::ConstantFirst),
        (true, false) => Err(Undefined::ConstantSecond),
        (false, false) => Err(Undefined::ConstantBoth),
    }
}

/// 1-based ranks, ties sharing the mean of their positions.
fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn beta_quantiles_match_closed_forms() {
        // Beta(1,1) is uniform.
        let s = success_rate(0, 0);
        assert!(close(s.mean, 0.5, 1e-12));
        assert!(
            close(s.low, 0.05, 1e-9) && close(s.high, 0.95, 1e-9),
            "{s:?}"
        );
        // Beta(2,1): CDF x², quantile √p.
        let s = success_rate(1, 0);
        assert!(close(s.mean, 2.0 / 3.0, 1e-12));
        assert!(close(s.low, 0.05f64.sqrt(), 1e-9) && close(s.high, 0.95f64.sqrt(), 1e-9));
        // Beta(1,2): quantile 1 − √(1 − p).
        let s = success_rate(0, 1);
        assert!(close(s.low, 1.0 - 0.95f64.sqrt(), 1e-9));
        // Beta(3,3) is symmetric: CDF(0.5) = 0.5.
        assert!(close(beta_cdf(0.5, 3, 3), 0.5, 1e-12));
        // Beta(2,2): CDF 3x² − 2x³.
        let x: f64 = 0.3;
        assert!(close(
            beta_cdf(x, 2, 2),
            3.0 * x * x - 2.0 * x * x * x,
            1e-12
        ));
    }

    #[test]
    fn stirling_agrees_with_the_exact_sum() {
        for n in [31u32, 50, 200, 5000] {
            let exact: f64 = (2..n).map(|k| f64::from(k).ln()).sum();
            let approx = ln_gamma_int(n);
            assert!(
                (exact - approx).abs() < 1e-9 * exact.max(1.0),
                "{n}: {exact} vs {approx}"
            );
        }
    }

    #[test]
    fn the_interval_narrows_with_evidence() {
        let few = success_rate(3, 1);
        let many = success_rate(300, 100);
        assert!(few.low < many.low && many.high < few.high);
        assert!(close(many.mean, 301.0 / 402.0, 1e-12));
        assert!(many.low < 0.75 && 0.75 < many.high);
    }

    #[test]
    fn ratings_reward_the_winner_and_shrink_uncertainty() {
        let mut r = BTreeMap::new();
        let round = [("a", 1), ("b", 2), ("c", 3)];
        update_ratings(&mut r, &round);
        let (a, b, c) = (r["a"], r["b"], r["c"]);
        assert!(a.mu > b.mu && b.mu > c.mu);
        assert!(
            close(b.mu, RATING_MU, 1e-9),
            "the middle of three equals moves nowhere"
        );
        assert!(a.sigma < RATING_SIGMA && c.sigma < RATING_SIGMA);
        assert!(close(a.conservative, a.mu - 3.0 * a.sigma, 1e-12));
        // A two-way tie between equals changes no mean.
        let mut t = BTreeMap::new();
        update_ratings(&mut t, &[("x", 1), ("y", 1)]);
        assert!(close(t["x"].mu, RATING_MU, 1e-12));
        // One participant is no game.
        let mut solo = BTreeMap::new();
        update_ratings(&mut solo, &[("x", 1)]);
        assert!(solo.is_empty());
    }

    #[test]
    fn weng_lin_first_game_by_hand() {
        // Two new bots, a beats b. c² = 2σ² + 2β², p = 0.5, γ = σ/c.
        // μ_a = 25 + σ²/c · 0.5; σ_a² = σ² (1 − γ σ²/c² · 0.25).
        let mut r = BTreeMap::new();
        update_ratings(&mut r, &[("a", 1), ("b", 2)]);
        let s2 = RATING_SIGMA * RATING_SIGMA;
        let c = (2.0 * s2 + 2.0 * RATING_BETA * RATING_BETA).sqrt();
        let mu = RATING_MU + s2 / c * 0.5;
        let sigma = (s2 * (1.0 - (RATING_SIGMA / c) * s2 / (c * c) * 0.25)).sqrt();
        assert!(close(r["a"].mu, mu, 1e-12) && close(r["a"].sigma, sigma, 1e-12));
        assert!(close(r["b"].mu, 2.0 * RATING_MU - mu, 1e-12));
    }

    #[test]
    fn spearman_cases() {
        assert_eq!(spearman(&[(0.1, 0.2), (0.2, 0.3)]), None);
        let perfect = [(0.1, 0.5), (0.2, 0.6), (0.3, 0.9)];
        assert!(close(spearman(&perfect).unwrap(), 1.0, 1e-12));
        let reversed = [(0.1, 0.9), (0.2, 0.6), (0.3, 0.5)];
        assert!(close(spearman(&reversed).unwrap(), -1.0, 1e-12));
        assert_eq!(spearman(&[(0.5, 0.1), (0.5, 0.2), (0.5, 0.3)]), None);
        assert_eq!(
            spearman_or_why(&[(0.5, 0.1), (0.5, 0.2), (0.5, 0.3)]),
            Err(Undefined::ConstantFirst)
        );
        assert_eq!(
            spearman_or_why(&[(0.1, 0.5), (0.2, 0.5), (0.3, 0.5)]),
            Err(Undefined::ConstantSecond)
        );
        assert_eq!(
            spearman_or_why(&[(0.5, 0.5); 4]),
            Err(Undefined::ConstantBoth)
        );
        assert_eq!(spearman_or_why(&[(0.1, 0.2)]), Err(Undefined::TooFew));
        // Ranks x: 1,2,3,4; y: 2,1,4,3 → ρ = 1 − 6·4/(4·15) = 0.6.
        let mixed = [(1.0, 0.2), (2.0, 0.1), (3.0, 0.4), (4.0, 0.3)];
        assert!(close(spearman(&mixed).unwrap(), 0.6, 1e-12));
        assert_eq!(average_ranks(&[3.0, 1.0, 3.0]), [2.5, 1.0, 2.5]);
        assert_eq!(brier_score(0.5, 2), Some(0.25));
        assert_eq!(brier_score(0.0, 0), None);
    }
}
