//! Iteration budgets (docs/specification.md §8.4): the pool split over the bots in proportion to
//! `weight × efficiency`, at least 1 each, rounded by the largest-remainder method so that
//! the shares always add up to the pool.

/// Splits `pool` over bots with the given shares (any non-negative numbers; only their
/// proportions matter). Every bot gets at least 1. Bots whose proportional quota is below 1
/// are fixed at 1 and the rest is split again among the others. Ties in the rounding go to the
/// larger share, then to the earlier bot. With `pool` smaller than the number of bots, every
/// bot gets 1 (the configuration rules out that case).
pub fn allocate(pool: u32, shares: &[f64]) -> Vec<u32> {
    let n = shares.len();
    if n == 0 {
        return Vec::new();
    }
    if (pool as usize) <= n {
        return vec![1; n];
    }
    let clean: Vec<f64> = shares
        .iter()
        .map(|&s| if s.is_finite() && s > 0.0 { s } else { 0.0 })
        .collect();
    let mut fixed = vec![false; n];
    let mut quotas = vec![0.0; n];
    let mut remaining;
    loop {
        let fixed_count = fixed.iter().filter(|f| **f).count();
        remaining = pool as usize - fixed_count;
        let free: Vec<usize> = (0..n).filter(|&i| !fixed[i]).collect();
        let total: f64 = free.iter().map(|&i| clean[i]).sum();
        for &i in &free {
            quotas[i] = if total > 0.0 {
                remaining as f64 * clean[i] / total
            } else {
                remaining as f64 / free.len() as f64
            };
        }
        let under: Vec<usize> = free.iter().copied().filter(|&i| quotas[i] < 1.0).collect();
        if under.is_empty() {
            break;
        }
        for i in under {
            fixed[i] = true;
            quotas[i] = 1.0;
        }
    }
    let mut budgets: Vec<u32> = (0..n)
        .map(|i| {
            if fixed[i] {
                1
            } else {
                quotas[i].floor() as u32
            }
        })
        .collect();
    let given: usize = budgets.iter().map(|&b| b as usize).sum();
    let mut left = pool as usize - given.min(pool as usize);
    let mut order: Vec<usize> = (0..n).filter(|&i| !fixed[i]).collect();
    order.sort_by(|&a, &b| {
        let fa = quotas[a] - quotas[a].floor();
        let fb = quotas[b] - quotas[b].floor();
        fb.total_cmp(&fa)
            .then(clean[b].total_cmp(&clean[a]))
            .then(a.cmp(&b))
    });
    while left > 0 && !order.is_empty() {
        for &i in &order {
            if left == 0 {
                break;
            }
            budgets[i] += 1;
            left -= 1;
        }
    }
    budgets
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_bots_split_evenly() {
        assert_eq!(allocate(30, &[1.0, 1.0, 1.0]), [10, 10, 10]);
        assert_eq!(allocate(30, &[0.0, 0.0, 0.0]), [10, 10, 10]);
    }

    #[test]
    fn proportional_with_largest_remainder() {
        // Quotas 15, 9, 6.
        assert_eq!(allocate(30, &[0.5, 0.3, 0.2]), [15, 9, 6]);
        // Quotas 14.28, 8.57, 7.14: floors 14 + 8 + 7 = 29, the largest remainder (0.57) wins.
        assert_eq!(allocate(30, &[0.5, 0.3, 0.25]), [14, 9, 7]);
        // Ties in the remainder go to the larger share, then the earlier bot: quotas 3.33 each.
        assert_eq!(allocate(10, &[1.0, 1.0, 1.0]), [4, 3, 3]);
    }

    #[test]
    fn every_bot_gets_at_least_one() {
        // The last bot has efficiency 0: quota 0 → fixed at 1; the others split 29 as 0.6:0.3 (19.33, 9.67).
        assert_eq!(allocate(30, &[0.6, 0.3, 0.0]), [19, 10, 1]);
        assert_eq!(allocate(3, &[0.9, 0.05, 0.05]), [1, 1, 1]);
        assert_eq!(allocate(2, &[0.9, 0.05, 0.05]), [1, 1, 1]);
        assert_eq!(allocate(5, &[]), Vec::<u32>::new());
    }

    proptest! {
        #[test]
        fn budgets_sum_to_the_pool_with_at_least_one_each(
            shares in proptest::collection::vec(0.0f64..1.0, 1..12),
            extra in 0u32..200,
        ) {
            let pool = shares.len() as u32 + extra;
            let b = allocate(pool, &shares);
            prop_assert_eq!(b.len(), shares.len());
            prop_assert_eq!(b.iter().sum::<u32>(), pool);
            prop_assert!(b.iter().all(|&x| x >= 1));
        }

        #[test]
        fn a_larger_share_never_gets_less(
            shares in proptest::collection::vec(0.0f64..1.0, 2..8),
            extra in 0u32..100,
        ) {
            let pool = shares.len() as u32 + extra;
            let b = allocate(pool, &shares);
            for i in 0..shares.len() {
                for j in 0..shares.len() {
                    if shares[i] > shares[j] {
                        prop_assert!(b[i] >= b[j], "{:?} -> {:?}", shares, b);
                    }
                }
            }
        }
    }
}
