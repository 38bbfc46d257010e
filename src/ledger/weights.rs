//! Keeping bot weights a distribution within bounds (docs/specification.md §8.3).
//!
//! After an event's delta is applied, the weights must sum to 1 and each must lie in
//! `[min, max]`. Alternating "normalise, clamp, normalise…" depends on how many rounds one
//! runs; its fixed point is `w_i' = clamp(s · w_i, min, max)` for the one scale `s` that makes
//! the weights sum to 1. [`project`] computes that point directly, by eliminating the bots that
//! must sit at a bound (at most one pass per bot): it is exact, independent of any iteration
//! count, and keeps the proportions between the bots that are not at a bound.

/// The bounds actually enforced for `n` bots: `[min, max]` widened to contain `1/n`, since no
/// distribution over `n` bots can otherwise satisfy them (one bot cannot weigh at most 0.6).
pub fn effective_bounds(n: usize, min: f64, max: f64) -> (f64, f64) {
    if n == 0 {
        return (min, max);
    }
    let even = 1.0 / n as f64;
    (min.min(even), max.max(even))
}

/// Rescales and clamps `weights` in place so that they sum to 1 and lie within the effective
/// bounds. Negative or non-finite weights count as zero. A zero weight scales like an
/// infinitesimal one: it sits at `min` unless the other bots, all at `max`, leave more.
pub fn project(weights: &mut [f64], min: f64, max: f64) {
    let n = weights.len();
    if n == 0 {
        return;
    }
    let (lo, hi) = effective_bounds(n, min, max);
    for w in weights.iter_mut() {
        if !w.is_finite() || *w < 0.0 {
            *w = 0.0;
        }
    }
    let positives = weights.iter().filter(|&&w| w > 0.0).count();
    let zeros = n - positives;
    if positives == 0 {
        weights.fill(1.0 / n as f64);
        return;
    }
    // The most the weights can add up to when every positive weight is scaled up to `max`
    // and the zero ones stay at `min`. Below 1, the zero-weight bots share what is left.
    let saturated = positives as f64 * hi + zeros as f64 * lo;
    if saturated < 1.0 {
        let share = (1.0 - positives as f64 * hi) / zeros as f64;
        for w in weights.iter_mut() {
            *w = if *w > 0.0 { hi } else { share.clamp(lo, hi) };
        }
        return;
    }
    // Zero weights sit at the floor for every scale; the others are found by elimination.
    // With s = (free mass) / (Σ free weights) and f(s) = Σ clamp(s·wᵢ): if f(s) > 1, the
    // solution's scale is smaller, so every free weight with s·wᵢ ≤ min is at the floor there
    // too; if f(s) < 1, every one with s·wᵢ ≥ max is at the cap. Fix those and repeat: each
    // pass fixes at least one bot, so at most n passes, and the result is exact.
    let mut fixed: Vec<Option<f64>> = weights
        .iter()
        .map(|&w| if w > 0.0 { None } else { Some(lo) })
        .collect();
    loop {
        let fixed_mass: f64 = fixed.iter().flatten().sum();
        let free_sum: f64 = (0..n)
            .filter(|&i| fixed[i].is_none())
            .map(|i| weights[i])
            .sum();
        if free_sum <= 0.0 {
            break;
        }
        let s = (1.0 - fixed_mass) / free_sum;
        let total: f64 = fixed_mass
            + (0..n)
                .filter(|&i| fixed[i].is_none())
                .map(|i| (s * weights[i]).clamp(lo, hi))
                .sum::<f64>();
        let mut changed = false;
        for i in 0..n {
            if fixed[i].is_some() {
                continue;
            }
            let scaled = s * weights[i];
            if total > 1.0 + 1e-15 && scaled <= lo {
                fixed[i] = Some(lo);
                changed = true;
            } else if total < 1.0 - 1e-15 && scaled >= hi {
                fixed[i] = Some(hi);
                changed = true;
            }
        }
        if !changed {
            for i in 0..n {
                weights[i] = fixed[i].unwrap_or_else(|| (s * weights[i]).clamp(lo, hi));
            }
            return;
        }
    }
    for i in 0..n {
        weights[i] = fixed[i].unwrap_or(lo);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn assert_close(actual: &[f64], expected: &[f64]) {
        assert_eq!(actual.len(), expected.len());
        for (a, e) in actual.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{actual:?} != {expected:?}");
        }
    }

    #[test]
    fn already_valid_weights_are_unchanged() {
        let mut w = [0.5, 0.3, 0.2];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[0.5, 0.3, 0.2]);
    }

    #[test]
    fn plain_renormalisation_keeps_proportions() {
        // 1/3 each, then +0.1 for the first bot: 0.4333.., 0.3333.., 0.3333.. (sum 1.1).
        let third = 1.0 / 3.0;
        let mut w = [third + 0.1, third, third];
        project(&mut w, 0.05, 0.6);
        let sum = 1.0 + 0.1;
        assert_close(&w, &[(third + 0.1) / sum, third / sum, third / sum]);
    }

    #[test]
    fn the_cap_binds_with_two_bots() {
        // 0.55 / 0.45, the first gains 0.15: 0.70 / 0.45 → 0.6087 / 0.3913 → cap at 0.60.
        let mut w = [0.55 + 0.15, 0.45];
        project(&mut w, 0.05, 0.60);
        assert_close(&w, &[0.60, 0.40]);
    }

    #[test]
    fn the_floor_binds_and_the_rest_keep_their_proportions() {
        // [0.9, 0.09, 0.01]: the first is capped at 0.6, the last floored at 0.05, and the
        // middle one takes the rest: 0.35.
        let mut w = [0.9, 0.09, 0.01];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[0.6, 0.35, 0.05]);
        // Two free bots keep their ratio 2:1 while the cap binds on the first.
        let mut w = [0.8, 0.1, 0.05];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[0.6, 0.4 * 2.0 / 3.0, 0.4 / 3.0]);
    }

    #[test]
    fn a_weight_pushed_below_zero_counts_as_zero() {
        // Three bots at 0.5 / 0.3 / 0.2; the last loses 0.25 → -0.05 → 0 → floor 0.05, and the
        // others share 0.95 in their ratio 5:3.
        let mut w = [0.5, 0.3, 0.2 - 0.25];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[0.95 * 5.0 / 8.0, 0.95 * 3.0 / 8.0, 0.05]);
    }

    #[test]
    fn a_zero_weight_takes_what_capped_bots_leave() {
        // Two bots, one at 0.6, the other pushed below zero: the cap keeps the first at 0.6, so
        // the second must hold 0.4.
        let mut w = [0.6, -0.1];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[0.6, 0.4]);
    }

    #[test]
    fn degenerate_inputs() {
        let mut w: [f64; 0] = [];
        project(&mut w, 0.05, 0.6);
        let mut w = [0.0, 0.0, f64::NAN];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[1.0 / 3.0; 3]);
        // One bot: the bounds widen to contain 1.
        let mut w = [0.2];
        project(&mut w, 0.05, 0.6);
        assert_close(&w, &[1.0]);
        // Twenty bots with min 0.05 is exactly feasible; twenty-five widens min to 0.04.
        let mut w = vec![1.0; 25];
        w[0] = 100.0;
        project(&mut w, 0.05, 0.6);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(w.iter().all(|x| *x >= 0.04 - 1e-12));
        assert_eq!(effective_bounds(25, 0.05, 0.6), (0.04, 0.6));
    }

    proptest! {
        #[test]
        fn weights_sum_to_one_and_stay_in_bounds(
            raw in proptest::collection::vec(-1.0f64..2.0, 1..12),
            min in 0.0f64..0.2,
            max in 0.2f64..1.0,
        ) {
            let mut w = raw.clone();
            project(&mut w, min, max);
            let (lo, hi) = effective_bounds(w.len(), min, max);
            let sum: f64 = w.iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-9, "sum {} for {:?} -> {:?}", sum, raw, w);
            for x in &w {
                prop_assert!(*x >= lo - 1e-12 && *x <= hi + 1e-12, "{} outside [{}, {}]", x, lo, hi);
            }
        }

        #[test]
        fn projection_preserves_order(raw in proptest::collection::vec(0.0f64..1.0, 2..10)) {
            let mut w = raw.clone();
            project(&mut w, 0.05, 0.6);
            for i in 0..raw.len() {
                for j in 0..raw.len() {
                    if raw[i] < raw[j] {
                        prop_assert!(w[i] <= w[j] + 1e-12);
                    }
                }
            }
        }
    }
}
