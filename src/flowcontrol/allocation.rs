//! Borrowing between priority levels (kube's `computeConcurrencyAllocation`): every period
//! each level's current concurrency limit is set from its recent seat demand, between the
//! level's lower bound (what it may not lend) and upper bound (what it may borrow), so that
//! the limits add up to the sum of the nominal ones. Levels get the same fraction of their
//! targets (the "fair fraction"), clamped to their bounds.

/// One level's part of the problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item {
    pub lower: f64,
    pub upper: f64,
    pub target: f64,
}

/// The allocation for `items` that sums to `total`, and the fair fraction it used.
pub fn allocate(total: f64, items: &[Item]) -> (Vec<f64>, f64) {
    let at = |frac: f64| -> Vec<f64> {
        items
            .iter()
            .map(|i| (i.target * frac).clamp(i.lower, i.upper.max(i.lower)))
            .collect()
    };
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let lowers: Vec<f64> = items.iter().map(|i| i.lower).collect();
    if sum(&lowers) >= total || items.iter().all(|i| i.target <= 0.0) {
        return (lowers, 0.0);
    }
    let uppers: Vec<f64> = items.iter().map(|i| i.upper.max(i.lower)).collect();
    if sum(&uppers) <= total {
        return (uppers, f64::INFINITY);
    }
    // The sum grows with the fraction: bisect.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while sum(&at(hi)) < total && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if sum(&at(mid)) < total {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (at(hi), hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_add_up_and_respect_bounds() {
        let items = [
            Item {
                lower: 5.0,
                upper: 600.0,
                target: 5.0,
            },
            Item {
                lower: 10.0,
                upper: 20.0,
                target: 100.0,
            },
            Item {
                lower: 0.0,
                upper: 600.0,
                target: 0.0,
            },
        ];
        let (a, _) = allocate(40.0, &items);
        assert!((a.iter().sum::<f64>() - 40.0).abs() < 1e-6, "{a:?}");
        assert_eq!(a[1], 20.0);
        assert_eq!(a[2], 0.0);
        // Below the lower bounds: the lower bounds.
        let (a, f) = allocate(1.0, &items);
        assert_eq!((a, f), (vec![5.0, 10.0, 0.0], 0.0));
    }
}
