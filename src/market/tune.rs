//! Fitting the six scoring weights to the ledger's outcomes (`ralph tune`).
//!
//! Model: `P(pass | x) = sigmoid(a + b · Σ_d w_d x_d)` over a proposal's six scores `x`, with
//! the weights `w` on the simplex (`w_d ≥ 0`, `Σ w_d = 1`), a scale `b ≥ 0` and a free
//! intercept `a`. The fit minimises the mean negative log-likelihood plus
//! `λ · Σ_d (w_d − current_d)²`, so that outcomes carrying no signal leave the weights near
//! the current ones. It is deterministic projected gradient descent on `w` (sort-based
//! Euclidean projection onto the simplex, backtracking steps), with `(a, b)` re-solved by
//! Newton's method at every trial `w`, started from the current weights and from the one
//! dimension most correlated with passing (the lower objective wins). The current weights are
//! calibrated the same way, with only `(a, b)` fitted. Both are evaluated by stratified
//! k-fold cross-validation (log-loss and Brier score on held-out outcomes). Tuning refuses
//! fewer than [`MIN_OUTCOMES`] outcomes or fewer than [`MIN_PER_CLASS`] passes or failures.

use std::fmt;

use serde::Serialize;

use super::{Dimension, Scores};

/// Fewest implemented proposals with an outcome that tuning accepts: below it, six weights
/// fitted to the outcomes would mostly fit noise.
pub const MIN_OUTCOMES: usize = 30;
/// Fewest passes, and fewest failures, that tuning accepts.
pub const MIN_PER_CLASS: usize = 5;

const MAX_ITERATIONS: usize = 400;
/// The fit stops when a step moves the weights less than this (Euclidean norm).
const TOLERANCE: f64 = 1e-7;
/// Bounds the scale so perfectly separable outcomes still give finite numbers.
const MAX_SCALE: f64 = 100.0;
/// Held-out probabilities are clamped to `[P_CLAMP, 1 − P_CLAMP]` before the log-loss.
const P_CLAMP: f64 = 1e-6;

/// One implemented proposal: its six proposal scores (each in [0, 1]) and its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    pub scores: Scores,
    pub passed: bool,
}

/// How many outcomes the pull toward the current weights is worth (see [`Options::lambda`]).
const PRIOR_OUTCOMES: usize = 240;

/// How to fit: the pull toward the current weights and the number of folds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Options {
    /// `λ` of the penalty `λ · Σ_d (w_d − current_d)²`, against the mean log-likelihood per
    /// sample, up to [`PRIOR_OUTCOMES`] outcomes; beyond, it shrinks as `λ · 240 / n`: the
    /// pull toward the current weights is worth a fixed number of outcomes, so a large ledger
    /// speaks for itself. The default 0.3 keeps pure noise over 240 outcomes within about 0.05
    /// of the current weights, while one dimension that drives the outcomes still comes out on
    /// top.
    pub lambda: f64,
    /// Cross-validation folds; fewer are used when a class has fewer samples, at least 2.
    pub folds: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lambda: 0.3,
            folds: 5,
        }
    }
}

/// Cross-validated quality of a set of weights: lower is better for both.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quality {
    /// Mean negative log-likelihood of the held-out outcomes, in nats.
    pub log_loss: f64,
    /// Mean squared error of the held-out predicted pass probabilities.
    pub brier: f64,
}

/// The result of tuning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tuned {
    pub samples: usize,
    pub passes: usize,
    /// Cross-validation folds used.
    pub folds: usize,
    pub current: Quality,
    /// The fit on all samples, rounded to 3 decimals and summing to exactly 1.
    pub suggested_weights: Scores,
    pub suggested: Quality,
    /// `a` and `b` of the model calibrated on all samples with `suggested_weights`.
    pub intercept: f64,
    pub scale: f64,
}

/// Why tuning declined to suggest weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Refusal {
    /// Fewer than `need` samples (`passes` of them passed).
    TooFew {
        have: usize,
        need: usize,
        passes: usize,
    },
    /// Fewer than `need` passes or fewer than `need` failures.
    OneSided {
        passes: usize,
        failures: usize,
        need: usize,
    },
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::TooFew { have, need, passes } => {
                write!(
                    f,
                    "{} with an outcome; tune needs at least {need} ({} more",
                    plural(have, "implemented proposal", "implemented proposals"),
                    need.saturating_sub(have)
                )?;
                // The other rule, when it will not be met by then either.
                let short: Vec<String> = [
                    (passes < MIN_PER_CLASS)
                        .then(|| plural(MIN_PER_CLASS - passes, "more pass", "more passes")),
                    (have - passes < MIN_PER_CLASS).then(|| {
                        plural(
                            MIN_PER_CLASS - (have - passes),
                            "more failure",
                            "more failures",
                        )
                    }),
                ]
                .into_iter()
                .flatten()
                .collect();
                if short.is_empty() {
                    f.write_str(")")
                } else {
                    write!(
                        f,
                        ", among them {}: at least {MIN_PER_CLASS} of each)",
                        short.join(" and ")
                    )
                }
            }
            Refusal::OneSided {
                passes,
                failures,
                need,
            } => {
                let short: Vec<String> = [
                    (passes < need).then(|| plural(need - passes, "more pass", "more passes")),
                    (failures < need)
                        .then(|| plural(need - failures, "more failure", "more failures")),
                ]
                .into_iter()
                .flatten()
                .collect();
                write!(
                    f,
                    "{} and {}; tune needs at least {need} of each ({})",
                    plural(passes, "pass", "passes"),
                    plural(failures, "failure", "failures"),
                    short.join(" and ")
                )
            }
        }
    }
}

impl std::error::Error for Refusal {}

type Vec6 = [f64; 6];
type Data = [(Vec6, bool)];

fn to_vec(s: &Scores) -> Vec6 {
    Dimension::ALL.map(|d| s.get(d))
}

fn to_scores(v: &Vec6) -> Scores {
    let mut s = Scores::default();
    for (d, x) in Dimension::ALL.into_iter().zip(v) {
        s.set(d, *x);
    }
    s
}

fn vectors(samples: &[Sample]) -> Vec<(Vec6, bool)> {
    samples
        .iter()
        .map(|s| (to_vec(&s.scores), s.passed))
        .collect()
}

fn label(y: bool) -> f64 {
    f64::from(u8::from(y))
}

fn dot(u: &Vec6, v: &Vec6) -> f64 {
    u.iter().zip(v).map(|(a, b)| a * b).sum()
}

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp()) // exp overflowing to ∞ gives 0, as it should
}

/// `ln(1 + e^t)` without overflow.
fn softplus(t: f64) -> f64 {
    if t > 0.0 {
        t + (-t).exp().ln_1p()
    } else {
        t.exp().ln_1p()
    }
}

/// The Euclidean projection of `v` onto the simplex (sort-based, Duchi et al. 2008).
fn project_simplex(v: &Vec6) -> Vec6 {
    let mut u = *v;
    u.sort_by(|x, y| y.total_cmp(x));
    let (mut sum, mut theta) = (0.0, 0.0);
    for (i, ui) in u.iter().enumerate() {
        sum += ui;
        let t = (sum - 1.0) / (i + 1) as f64;
        if ui - t > 0.0 {
            theta = t;
        }
    }
    v.map(|x| (x - theta).max(0.0))
}

/// Mean NLL, its gradient in `(a, b)` and Hessian `(aa, ab, bb)` for the linear scores `z`.
fn nll_ab(data: &Data, z: &[f64], a: f64, b: f64) -> (f64, [f64; 2], [f64; 3]) {
    let (mut f, mut g, mut h) = (0.0, [0.0; 2], [0.0; 3]);
    for ((_, y), zi) in data.iter().zip(z) {
        let eta = a + b * zi;
        let (p, y) = (sigmoid(eta), label(*y));
        f += softplus(eta) - y * eta;
        let (r, s) = (p - y, p * (1.0 - p));
        g[0] += r;
        g[1] += r * zi;
        h[0] += s;
        h[1] += s * zi;
        h[2] += s * zi * zi;
    }
    let n = data.len() as f64;
    (f / n, g.map(|x| x / n), h.map(|x| x / n + 1e-12))
}

/// Newton's method for `(a, b)` with `w` fixed (`b` kept in `[0, MAX_SCALE]`), from `start`.
/// Returns `a`, `b` and the mean NLL.
fn fit_ab(data: &Data, w: &Vec6, start: (f64, f64)) -> (f64, f64, f64) {
    let z: Vec<f64> = data.iter().map(|(x, _)| dot(w, x)).collect();
    let (mut a, mut b) = start;
    let (mut f, mut g, mut h) = nll_ab(data, &z, a, b);
    for _ in 0..50 {
        let (da, db) = if b <= 0.0 && g[1] >= 0.0 {
            (g[0] / h[0], 0.0) // b = 0 is optimal for this a: move a alone
        } else {
            let det = h[0] * h[2] - h[1] * h[1];
            (
                (h[2] * g[0] - h[1] * g[1]) / det,
                (h[0] * g[1] - h[1] * g[0]) / det,
            )
        };
        if da * g[0] + db * g[1] < 1e-14 {
            break; // the Newton decrement: close enough to the optimum
        }
        let mut t = 1.0;
        let mut moved = false;
        for _ in 0..30 {
            let (na, nb) = (a - t * da, (b - t * db).clamp(0.0, MAX_SCALE));
            let next = nll_ab(data, &z, na, nb);
            if next.0 <= f {
                moved = (na - a).abs() + (nb - b).abs() > 1e-12;
                (a, b, f, g, h) = (na, nb, next.0, next.1, next.2);
                break;
            }
            t *= 0.5;
        }
        if !moved {
            break;
        }
    }
    (a, b, f)
}

/// The penalised fit: `(a, b, w)` minimising mean NLL + `λ‖w − current‖²`, `current` on the
/// simplex.
///
/// Where the current weights' total correlates negatively with passing, `b = 0, w = current`
/// is a local minimum (the likelihood does not depend on `w` when `b = 0`), so the descent
/// also starts from the dimension most correlated with passing; the better end wins.
fn fit(data: &Data, current: &Vec6, lambda: f64) -> (f64, f64, Vec6) {
    let mean_y = data.iter().filter(|(_, y)| *y).count() as f64 / data.len() as f64;
    let mut cov = [0.0; 6];
    for (x, y) in data {
        for (c, xd) in cov.iter_mut().zip(x) {
            *c += (label(*y) - mean_y) * xd;
        }
    }
    let best = (0..6).fold(0, |m, d| if cov[d] > cov[m] { d } else { m });
    let vertex: Vec6 = std::array::from_fn(|d| f64::from(u8::from(d == best)));
    let (o1, a1, b1, w1) = descend(data, current, lambda, *current);
    let (o2, a2, b2, w2) = descend(data, current, lambda, vertex);
    if o2 < o1 {
        (a2, b2, w2)
    } else {
        (a1, b1, w1)
    }
}

/// Projected gradient descent on `w` from `start`, with `(a, b)` profiled out by Newton's
/// method; returns the objective, `a`, `b` and `w` it ends at.
fn descend(data: &Data, current: &Vec6, lambda: f64, start: Vec6) -> (f64, f64, f64, Vec6) {
    let penalty = |w: &Vec6| {
        let d: Vec6 = std::array::from_fn(|i| w[i] - current[i]);
        lambda * dot(&d, &d)
    };
    let mut w = start;
    let (mut a, mut b, nll) = fit_ab(data, &w, (0.0, 0.0));
    let mut obj = nll + penalty(&w);
    let mut step = 1.0;
    for _ in 0..MAX_ITERATIONS {
        // Gradient in w of the objective with (a, b) profiled out (envelope theorem).
        let mut grad = [0.0; 6];
        for (x, y) in data {
            let r = sigmoid(a + b * dot(&w, x)) - label(*y);
            for (gd, xd) in grad.iter_mut().zip(x) {
                *gd += r * xd;
            }
        }
        for ((gd, wd), cd) in grad.iter_mut().zip(&w).zip(current) {
            *gd = b * *gd / data.len() as f64 + 2.0 * lambda * (wd - cd);
        }
        let mut accepted = None;
        for _ in 0..40 {
            let cand = project_simplex(&std::array::from_fn(|d| w[d] - step * grad[d]));
            let diff: Vec6 = std::array::from_fn(|d| cand[d] - w[d]);
            let (na, nb, nll) = fit_ab(data, &cand, (a, b));
            let next = nll + penalty(&cand);
            if next <= obj + dot(&grad, &diff) + dot(&diff, &diff) / (2.0 * step) {
                accepted = Some((cand, na, nb, next, dot(&diff, &diff).sqrt()));
                break;
            }
            step *= 0.5;
        }
        let Some((cand, na, nb, next, moved)) = accepted else {
            break;
        };
        let gain = obj - next;
        (w, a, b, obj) = (cand, na, nb, next);
        step = (step * 2.0).min(1e3);
        if moved < TOLERANCE || gain.abs() < 1e-12 {
            break;
        }
    }
    (obj, a, b, w)
}

/// Rounds to thousandths, putting the rounding residue on the largest weight.
fn round_weights(w: &Vec6) -> Vec6 {
    let mut k = w.map(|x| (x * 1000.0).round() as i64);
    let largest = (0..6).fold(0, |m, i| if w[i] > w[m] { i } else { m });
    k[largest] += 1000 - k.iter().sum::<i64>();
    k.map(|x| x as f64 / 1000.0)
}

/// Fold of each sample: stratified by outcome, then round-robin in input order.
fn fold_of(samples: &[Sample], passes: usize, k: usize) -> Vec<usize> {
    let (mut p, mut q) = (0, passes);
    samples
        .iter()
        .map(|s| {
            let counter = if s.passed { &mut p } else { &mut q };
            *counter += 1;
            (*counter - 1) % k
        })
        .collect()
}

/// Log-loss and Brier score of predicted pass probabilities against the outcomes.
fn quality(predictions: &[(f64, bool)]) -> Quality {
    let n = predictions.len() as f64;
    let (mut log_loss, mut brier) = (0.0, 0.0);
    for &(p, y) in predictions {
        let (p, y) = (p.clamp(P_CLAMP, 1.0 - P_CLAMP), label(y));
        log_loss -= (y * p.ln() + (1.0 - y) * (1.0 - p).ln()) / n;
        brier += (p - y) * (p - y) / n;
    }
    Quality { log_loss, brier }
}

/// Fits the six weights to `samples`, regularised toward `current`, and compares both by
/// cross-validation. Scores are expected in [0, 1]; `current` should sum to 1.
pub fn tune(samples: &[Sample], current: &Scores, opts: &Options) -> Result<Tuned, Refusal> {
    let n = samples.len();
    if n < MIN_OUTCOMES {
        return Err(Refusal::TooFew {
            have: n,
            need: MIN_OUTCOMES,
            passes: samples.iter().filter(|s| s.passed).count(),
        });
    }
    let passes = samples.iter().filter(|s| s.passed).count();
    let failures = n - passes;
    if passes < MIN_PER_CLASS || failures < MIN_PER_CLASS {
        return Err(Refusal::OneSided {
            passes,
            failures,
            need: MIN_PER_CLASS,
        });
    }
    let lambda = if opts.lambda > 0.0 {
        // A prior worth PRIOR_OUTCOMES outcomes: it weakens as the ledger grows past them.
        opts.lambda.min(1e6) * (PRIOR_OUTCOMES as f64 / n as f64).min(1.0)
    } else {
        0.0
    }; // NaN: 0
    let cur = project_simplex(&to_vec(current));
    let data = vectors(samples);

    let k = opts.folds.min(passes).min(failures).max(2);
    let fold = fold_of(samples, passes, k);
    let (mut cur_pred, mut sug_pred) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for f in 0..k {
        let train: Vec<(Vec6, bool)> = (0..n).filter(|&i| fold[i] != f).map(|i| data[i]).collect();
        let (ca, cb, _) = fit_ab(&train, &cur, (0.0, 0.0));
        let (sa, sb, sw) = fit(&train, &cur, lambda);
        for i in (0..n).filter(|&i| fold[i] == f) {
            let (x, y) = &data[i];
            cur_pred.push((sigmoid(ca + cb * dot(&cur, x)), *y));
            sug_pred.push((sigmoid(sa + sb * dot(&sw, x)), *y));
        }
    }

    let (a, b, w) = fit(&data, &cur, lambda);
    let rounded = round_weights(&w);
    let (intercept, scale, _) = fit_ab(&data, &rounded, (a, b));
    Ok(Tuned {
        samples: n,
        passes,
        folds: k,
        current: quality(&cur_pred),
        suggested_weights: to_scores(&rounded),
        suggested: quality(&sug_pred),
        intercept,
        scale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn defaults() -> Scores {
        crate::market::tables().default_weights
    }

    /// A synthetic ledger: scores uniform in [0, 1]; `pass_probability` of the scores.
    fn ledger(seed: u64, n: usize, pass_probability: impl Fn(&Vec6) -> f64) -> Vec<Sample> {
        let mut rng = crate::mix::SplitMix64::new(seed ^ 0x9e37_79b9_7f4a_7c15);
        let mut uniform = move || rng.unit();
        (0..n)
            .map(|_| {
                let x: Vec6 = std::array::from_fn(|_| uniform());
                let passed = uniform() < pass_probability(&x);
                Sample {
                    scores: to_scores(&x),
                    passed,
                }
            })
            .collect()
    }

    #[test]
    fn projection_keeps_simplex_points_and_clips_the_rest() {
        let on = [0.3, 0.2, 0.15, 0.2, 0.1, 0.05];
        let p = project_simplex(&on);
        assert!(p.iter().zip(&on).all(|(a, b)| (a - b).abs() < 1e-12));
        let p = project_simplex(&[2.0, -1.0, 0.0, 0.5, -3.0, 0.1]);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(p.iter().all(|&x| x >= 0.0));
        assert_eq!((p[1], p[4]), (0.0, 0.0));
        assert_eq!(project_simplex(&[5.0, 0.0, 0.0, 0.0, 0.0, 0.0])[0], 1.0);
        let p = project_simplex(&[0.0; 6]);
        assert!(p.iter().all(|&x| (x - 1.0 / 6.0).abs() < 1e-12));
    }

    #[test]
    fn rounding_sums_to_exactly_one() {
        // 6 × 0.167 = 1.002: the largest (the first of equals) gives back the 0.002.
        assert_eq!(
            round_weights(&[1.0 / 6.0; 6]),
            [0.165, 0.167, 0.167, 0.167, 0.167, 0.167]
        );
        let r = round_weights(&[0.4004, 0.2004, 0.1004, 0.1004, 0.1004, 0.098]);
        assert_eq!(r, [0.402, 0.2, 0.1, 0.1, 0.1, 0.098]);
    }

    #[test]
    fn refuses_too_few_and_one_sided_ledgers() {
        let twelve = ledger(1, 12, |_| 0.5);
        let passes = twelve.iter().filter(|s| s.passed).count();
        assert!((5..=7).contains(&passes), "{passes}");
        let err = tune(&twelve, &defaults(), &Options::default()).unwrap_err();
        assert_eq!(
            err,
            Refusal::TooFew {
                have: 12,
                need: 30,
                passes
            }
        );
        assert_eq!(
            err.to_string(),
            "12 implemented proposals with an outcome; tune needs at least 30 (18 more)"
        );
        // Three outcomes, all passes: the other rule is named too.
        let three = Refusal::TooFew {
            have: 3,
            need: 30,
            passes: 3,
        };
        assert_eq!(
            three.to_string(),
            "3 implemented proposals with an outcome; tune needs at least 30 (27 more, among them 2 more passes and 5 more failures: at least 5 of each)"
        );
        let mut lopsided = ledger(2, 40, |_| 1.0);
        for s in lopsided.iter_mut().take(3) {
            s.passed = false;
        }
        let err = tune(&lopsided, &defaults(), &Options::default()).unwrap_err();
        assert_eq!(
            err,
            Refusal::OneSided {
                passes: 37,
                failures: 3,
                need: 5
            }
        );
        assert_eq!(
            err.to_string(),
            "37 passes and 3 failures; tune needs at least 5 of each (2 more failures)"
        );
    }

    #[test]
    fn escapes_current_weights_that_predict_backwards() {
        // Under the defaults (x0 0.30, x5 0.05) passes anti-correlate with the total: b = 0
        // there and the likelihood is flat in w, so a descent from them alone would stay put.
        let samples = ledger(11, 200, |x| sigmoid(10.0 * (x[5] - x[0])));
        let flat = fit_ab(&vectors(&samples), &to_vec(&defaults()), (0.0, 0.0));
        assert_eq!(flat.1, 0.0, "the current weights' best scale");
        let t = tune(&samples, &defaults(), &Options::default()).unwrap();
        let w = t.suggested_weights;
        assert!(w.specialist_validation > w.spec_alignment, "{t:?}");
        assert!(t.suggested.log_loss < t.current.log_loss - 0.05, "{t:?}");
    }

    #[test]
    fn same_input_gives_the_same_output() {
        let samples = ledger(7, 120, |x| sigmoid(6.0 * (x[2] - 0.5)));
        let first = tune(&samples, &defaults(), &Options::default()).unwrap();
        let second = tune(&samples, &defaults(), &Options::default()).unwrap();
        assert_eq!(first, second);
        assert_eq!((first.samples, first.folds), (120, 5));
        assert!(first.scale > 0.0);
    }

    proptest! {
        // Statistical properties: they hold for nearly every ledger, not for all of them (pure
        // noise over 1,200 outcomes from seed 2658119964949524648 strays 0.101 from a current
        // weight), so the cases are drawn from a fixed seed: the same 16 ledgers on every run.
        #![proptest_config(ProptestConfig {
            cases: 16,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7a11_5eed),
            ..ProptestConfig::default()
        })]

        #[test]
        fn one_driving_dimension_gets_the_largest_weight(
            seed in any::<u64>(), driver in 0usize..6, k in 8.0f64..12.0,
        ) {
            let samples = ledger(seed, 240, |x| sigmoid(k * (x[driver] - 0.5)));
            let t = tune(&samples, &defaults(), &Options::default()).unwrap();
            let w = to_vec(&t.suggested_weights);
            prop_assert!((0..6).all(|d| d == driver || w[d] < w[driver]), "{:?}", w);
            prop_assert!(t.suggested.log_loss < t.current.log_loss, "{:?}", t);
            prop_assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }

        #[test]
        fn pure_noise_keeps_the_current_weights(seed in any::<u64>(), n in prop_oneof![Just(240usize), Just(1200)]) {
            // The pull weakens past 240 outcomes, but so does the noise: still near.
            let samples = ledger(seed, n, |_| 0.5);
            let t = tune(&samples, &defaults(), &Options::default()).unwrap();
            let (w, c) = (to_vec(&t.suggested_weights), to_vec(&defaults()));
            prop_assert!(w.iter().zip(&c).all(|(a, b)| (a - b).abs() <= 0.1), "{:?}", w);
        }
    }
}
