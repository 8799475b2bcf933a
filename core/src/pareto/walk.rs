//! The frontier over input price vs p50 throughput, and the greedy value walk along it.
//!
//! Points are sorted by price (then faster first) and grouped into price tiers: a point within
//! 1% of its tier's first price joins the tier, and the tier keeps its fastest. The frontier
//! keeps each tier's best when it is strictly faster than every cheaper one. The walk starts at
//! the cheapest frontier point and moves to the next when the throughput gain plus the
//! tolerance is at least the price increase (both relative; a tie moves to the pricier).

/// A provider reduced to what the frontier and the walk read.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub slug: Box<str>,
    /// US dollars per million input tokens (> 0).
    pub input_price_m: f64,
    /// p50 tokens per second (> 0).
    pub tps: f64,
}

/// Indexes into `points` of the frontier, cheapest first. `order` is scratch.
fn frontier(points: &[&Point], order: &mut Vec<usize>, out: &mut Vec<usize>) {
    out.clear();
    order.clear();
    order.extend(0..points.len());
    order.sort_by(|&a, &b| {
        points[a].input_price_m.total_cmp(&points[b].input_price_m).then(points[b].tps.total_cmp(&points[a].tps))
    });
    // Tiers: (first price, best index).
    let mut tier: Option<(f64, usize)> = None;
    let mut fastest = f64::NEG_INFINITY;
    let close = |best: usize, out: &mut Vec<usize>, fastest: &mut f64| {
        if points[best].tps > *fastest {
            out.push(best);
            *fastest = points[best].tps;
        }
    };
    for &i in order.iter() {
        let p = points[i];
        tier = match tier {
            None => Some((p.input_price_m, i)),
            Some((price, best)) if (p.input_price_m - price).abs() / price > 0.01 => {
                close(best, out, &mut fastest);
                Some((p.input_price_m, i))
            }
            Some((price, best)) if p.tps > points[best].tps => Some((price, i)),
            same => same,
        };
    }
    if let Some((_, best)) = tier {
        close(best, out, &mut fastest);
    }
}

/// The walk's terminal along `frontier` (indexes into `points`).
fn walk(points: &[&Point], frontier: &[usize], tolerance: f64) -> Option<usize> {
    let (&first, rest) = frontier.split_first()?;
    Some(rest.iter().fold(first, |winner, &candidate| {
        let (w, c) = (points[winner], points[candidate]);
        let price_increase = (c.input_price_m - w.input_price_m) / w.input_price_m;
        let speed_gain = (c.tps - w.tps) / w.tps;
        if speed_gain + tolerance >= price_increase {
            candidate
        } else {
            winner
        }
    }))
}

/// The value walk's winner over `points` (`None` for none).
pub fn value_winner<'p>(points: &[&'p Point], tolerance: f64) -> Option<&'p Point> {
    let (mut order, mut front) = (Vec::new(), Vec::new());
    frontier(points, &mut order, &mut front);
    walk(points, &front, tolerance).map(|i| points[i])
}

/// The frontier's slugs over `points`, cheapest first.
pub fn frontier_slugs<'p>(points: &[&'p Point]) -> Vec<&'p str> {
    let (mut order, mut front) = (Vec::new(), Vec::new());
    frontier(points, &mut order, &mut front);
    front.iter().map(|&i| &*points[i].slug).collect()
}

/// The order to try providers in: the walk's winner over the points not `excluded`, then the
/// winner with it removed, and so on — each is what the walk would have chosen had every
/// earlier one been unavailable (a provider dominated by a now-unavailable one can take over).
pub fn ranked_order<'p>(points: &'p [Point], tolerance: f64, excluded: &dyn Fn(&str) -> bool) -> Vec<&'p str> {
    let mut available: Vec<&Point> = points.iter().filter(|p| !excluded(&p.slug)).collect();
    let (mut order, mut front) = (Vec::new(), Vec::new());
    let mut ranked = Vec::with_capacity(available.len());
    while !available.is_empty() {
        frontier(&available, &mut order, &mut front);
        let Some(i) = walk(&available, &front, tolerance) else { break };
        ranked.push(&*available[i].slug);
        available.swap_remove(i);
    }
    ranked
}

/// The first of [`ranked_order`] that `usable` accepts, walking no further than needed.
pub fn first_usable<'p>(
    points: &'p [Point],
    tolerance: f64,
    excluded: &dyn Fn(&str) -> bool,
    usable: &dyn Fn(&str) -> bool,
) -> Option<&'p str> {
    let mut available: Vec<&Point> = points.iter().filter(|p| !excluded(&p.slug)).collect();
    let (mut order, mut front) = (Vec::new(), Vec::new());
    while !available.is_empty() {
        frontier(&available, &mut order, &mut front);
        let i = walk(&available, &front, tolerance)?;
        if usable(&available[i].slug) {
            return Some(&available[i].slug);
        }
        available.swap_remove(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(slug: &str, price: f64, tps: f64) -> Point {
        Point { slug: slug.into(), input_price_m: price, tps }
    }

    fn refs(points: &[Point]) -> Vec<&Point> {
        points.iter().collect()
    }

    #[test]
    fn the_frontier_keeps_each_price_tiers_fastest_when_it_is_faster_than_everything_cheaper() {
        let points = [
            p("cheap-slow", 0.40, 20.0),
            p("cheap-fast", 0.402, 30.0), // within 1% of 0.40: same tier, faster
            p("mid", 0.60, 25.0),         // slower than the cheaper tier: off the frontier
            p("dear", 0.90, 80.0),
            p("dearer", 1.20, 80.0), // not strictly faster
        ];
        assert_eq!(frontier_slugs(&refs(&points)), ["cheap-fast", "dear"]);
    }

    #[test]
    fn the_walk_moves_when_the_speed_gain_covers_the_price_increase_and_a_tie_moves() {
        // +50% price for +100% speed: move.
        let points = [p("a", 1.0, 10.0), p("b", 1.5, 20.0)];
        assert_eq!(&*value_winner(&refs(&points), 0.0).unwrap().slug, "b");
        // +100% price for +50% speed: stay; a tolerance of 0.5 pays for it (a tie moves).
        let points = [p("a", 1.0, 10.0), p("b", 2.0, 15.0)];
        assert_eq!(&*value_winner(&refs(&points), 0.0).unwrap().slug, "a");
        assert_eq!(&*value_winner(&refs(&points), 0.5).unwrap().slug, "b");
        assert!(value_winner(&[], 0.0).is_none());
    }

    #[test]
    fn the_ranked_order_re_runs_the_walk_so_a_dominated_provider_can_take_over() {
        // c is dominated by b (dearer, slower) while b is there; without b, the walk from a
        // reaches c, which a frontier fixed with b present would never offer.
        let points = [p("a", 1.0, 10.0), p("b", 1.2, 30.0), p("c", 1.3, 25.0), p("d", 5.0, 26.0)];
        assert_eq!(frontier_slugs(&refs(&points)), ["a", "b"]);
        assert_eq!(ranked_order(&points, 0.0, &|_| false), ["b", "c", "a", "d"]);
        assert_eq!(ranked_order(&points, 0.0, &|s| s == "b"), ["c", "a", "d"]);
        assert_eq!(first_usable(&points, 0.0, &|_| false, &|s| s != "b"), Some("c"));
        assert_eq!(first_usable(&points, 0.0, &|_| true, &|_| true), None);
    }
}
