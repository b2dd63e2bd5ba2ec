//! Tests of the knee: Kneedle's placement on known curves, and the bend
//! test against straight lines (the false-knee rate on noisy lines, the
//! knees kept on bent curves).
use super::*;
use crate::testdata::{on_ladder, pt, LADDER};

/// The load where a smooth concave curve's Kneedle difference curve
/// peaks: where the slope of the normalised curve is 1, i.e.
/// y'(x) = (y(b) − y(a)) / (b − a). For y = 1 − e^(−x/τ) that is
/// x* = τ · ln((b − a) / (τ · (y(b) − y(a)))).
fn exponential_knee(tau: f64, a: f64, b: f64) -> f64 {
    let y = |x: f64| 1.0 - (-x / tau).exp();
    tau * ((b - a) / (tau * (y(b) - y(a)))).ln()
}

#[test]
fn knee_of_a_saturating_exponential_is_where_its_normalised_slope_is_one() {
    for tau in [4.0, 8.0, 16.0] {
        let points: Vec<CurvePoint> = (1..=64)
            .map(|l| {
                let l = f64::from(l);
                pt(l, 5000.0 * (1.0 - (-l / tau).exp()), 1.0)
            })
            .collect();
        let k = knee(&points, KNEEDLE_DEFAULT_SENSITIVITY).unwrap().unwrap();
        let expected = exponential_knee(tau, 1.0, 64.0);
        assert!(
            (k.load - expected).abs() <= 1.0,
            "tau {tau}: knee at {} expected {expected:.2}",
            k.load
        );
        assert!(k.difference > k.threshold);
    }
}

#[test]
fn knee_of_a_piecewise_linear_curve_is_its_elbow() {
    // Steep rise to 16 clients, then a slow one: the elbow is at 16.
    let points: Vec<CurvePoint> = (1..=64)
        .map(|l| {
            let l = f64::from(l);
            let y = if l <= 16.0 {
                100.0 * l
            } else {
                1600.0 + 5.0 * (l - 16.0)
            };
            pt(l, y, 1.0)
        })
        .collect();
    let k = knee(&points, 1.0).unwrap().unwrap();
    assert_eq!(k.load, 16.0);
    assert_eq!(k.index, 15);
    // On the default doubling ladder too.
    let ladder: Vec<CurvePoint> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .iter()
        .map(|&l: &f64| pt(l, 100.0 * l.min(16.0) + 5.0 * (l - 16.0).max(0.0), 1.0))
        .collect();
    assert_eq!(knee(&ladder, 1.0).unwrap().unwrap().load, 16.0);
}

#[test]
fn knee_is_looked_for_on_the_rising_part_only() {
    // Rise with an elbow at 8, peak at 32, collapse after: the fall must
    // not move the knee.
    let ys = [100.0, 200.0, 400.0, 800.0, 840.0, 880.0, 100.0, 50.0];
    let points = on_ladder(&ys, &[1.0; 8]);
    assert_eq!(knee(&points, 1.0).unwrap().unwrap().load, 8.0);
}

#[test]
fn a_straight_line_has_no_knee() {
    let exact: Vec<CurvePoint> = LADDER.iter().map(|&l| pt(l, 250.0 * l, 1.0)).collect();
    assert_eq!(knee(&exact, 1.0).unwrap(), Err(NoKnee::NotConcave));
    // A line with small wiggles: bumps too small for the threshold.
    let wiggles = [0.0, 0.01, -0.01, 0.005, -0.005, 0.01, -0.01, 0.0];
    let noisy: Vec<CurvePoint> = (1..=8)
        .zip(wiggles)
        .map(|(l, w)| {
            let l = f64::from(l);
            pt(l, 250.0 * l * (1.0 + w), 20.0)
        })
        .collect();
    assert!(matches!(
        knee(&noisy, 1.0).unwrap(),
        Err(NoKnee::BelowThreshold { .. })
    ));
}

#[test]
fn no_knee_on_convex_flat_or_short_rising_parts() {
    let convex: Vec<CurvePoint> = LADDER.iter().map(|&l| pt(l, l * l, 0.5)).collect();
    assert_eq!(knee(&convex, 1.0).unwrap(), Err(NoKnee::NotConcave));
    let flat: Vec<CurvePoint> = LADDER.iter().map(|&l| pt(l, 7.0, 0.5)).collect();
    // All equal: the peak is the first point, so nothing rises before it.
    assert_eq!(
        knee(&flat, 1.0).unwrap(),
        Err(NoKnee::TooFewPoints { rising: 1 })
    );
    let early_peak = vec![pt(1.0, 10.0, 1.0), pt(2.0, 20.0, 1.0), pt(4.0, 5.0, 1.0)];
    assert_eq!(
        knee(&early_peak, 1.0).unwrap(),
        Err(NoKnee::TooFewPoints { rising: 2 })
    );
}

#[test]
fn a_rise_that_flattens_at_once_has_its_knee_at_the_plateaus_start() {
    // multiuser on a quiet 2-CPU machine (2026-11-23): saturated at 2
    // users, flat within its intervals to 16.
    let pts = on_ladder(
        &[143.5, 266.0, 263.6, 263.2, 257.8],
        &[2.2, 9.4, 13.1, 5.5, 6.6],
    );
    let k = knee(&pts, 1.0).unwrap().unwrap();
    assert_eq!(k.load, 2.0);
    // Without the plateau (a real fall after 2) there is still no knee.
    let fall = on_ladder(&[143.5, 266.0, 150.0], &[2.2, 9.4, 5.0]);
    assert_eq!(
        knee(&fall, 1.0).unwrap(),
        Err(NoKnee::TooFewPoints { rising: 2 })
    );
}

#[test]
fn higher_sensitivity_demands_a_sharper_knee() {
    // A gentle bend: detected at S = 1, too gentle for S = 10.
    let points: Vec<CurvePoint> = (1..=16)
        .map(|l| {
            let l = f64::from(l);
            pt(l, 1000.0 * (1.0 - (-l / 12.0).exp()), 1.0)
        })
        .collect();
    assert!(knee(&points, 1.0).unwrap().is_ok());
    assert!(matches!(
        knee(&points, 10.0).unwrap(),
        Err(NoKnee::BelowThreshold { .. })
    ));
}

/// Seeded noise: SplitMix64 and Box–Muller, as the USL tests draw it.
struct Noise(crate::usl::SplitMix64);

impl Noise {
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.0.unit();
        let u2 = self.0.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A load-curve point as touchstone measures one: the mean of five
    /// trials whose mean scatters by `noise` (relative) around `truth`,
    /// with its 95 % Student-t interval.
    fn point(&mut self, load: f64, truth: f64, noise: f64) -> CurvePoint {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        const TRIALS: usize = 5;
        let per_trial = noise * (TRIALS as f64).sqrt();
        let trials: Vec<f64> = (0..TRIALS)
            .map(|_| truth * (1.0 + per_trial * self.normal()))
            .collect();
        let mean = trials.iter().sum::<f64>() / TRIALS as f64;
        let var = trials.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (TRIALS - 1) as f64;
        let t = StudentsT::new(0.0, 1.0, (TRIALS - 1) as f64)
            .unwrap()
            .inverse_cdf(0.975);
        pt(load, mean, t * (var / TRIALS as f64).sqrt())
    }
}

/// Kneedle's candidates (found by it, kept or not) and the knees kept, over
/// `curves` drawn from `truth` on `loads` with `noise`.
fn knee_counts(
    truth: &dyn Fn(f64) -> f64,
    loads: &[f64],
    noise: f64,
    curves: usize,
    seed: u64,
) -> (usize, usize) {
    let mut rng = Noise(crate::usl::SplitMix64::new(seed));
    let (mut kneedle_found, mut kept) = (0, 0);
    for _ in 0..curves {
        let points: Vec<CurvePoint> = loads
            .iter()
            .map(|&l| rng.point(l, truth(l), noise))
            .collect();
        match knee(&points, KNEEDLE_DEFAULT_SENSITIVITY).unwrap() {
            Ok(_) => {
                kneedle_found += 1;
                kept += 1;
            }
            Err(NoKnee::NotSignificant { .. }) => kneedle_found += 1,
            Err(_) => {}
        }
    }
    (kneedle_found, kept)
}

/// Issue 31's benchmark: 400 straight lines (X = 100·N) with 5 % and 2 %
/// noise on a dense ladder (loads 1..24). Kneedle alone finds a "knee" on
/// most of them (377 and 197 of 400 here; the issue counted 374 and 202 on
/// its own draws); with the bend test, under 5 % (1 and 1 of 400).
#[test]
fn noisy_straight_lines_have_no_knee() {
    let dense: Vec<f64> = (1..=24).map(f64::from).collect();
    let line = |n: f64| 100.0 * n;
    let mut rates = Vec::new();
    for (noise, seed) in [(0.05, 31), (0.02, 32)] {
        let (found, kept) = knee_counts(&line, &dense, noise, 400, seed);
        eprintln!(
            "straight lines, {noise} noise, loads 1..24: Kneedle {found}/400, kept {kept}/400"
        );
        rates.push((found, kept));
        assert!(
            kept < 20,
            "{kept} of 400 straight lines have a knee at {noise}"
        );
    }
    assert!(rates[0].0 > 300, "Kneedle alone: {rates:?}");
    // A longer dense ladder searches more places for a bend: still under 5 %.
    let longer: Vec<f64> = (1..=64).map(f64::from).collect();
    let (_, kept) = knee_counts(&line, &longer, 0.05, 400, 33);
    assert!(kept < 20, "{kept} of 400 on loads 1..64");
}

/// The knees Kneedle finds on bent curves are kept: USL curves (σ 0.02-0.2,
/// κ 0-0.002), saturating exponentials and elbows, on the dense ladder,
/// the doubling ladders touchstone sweeps (1..128, 1..16, 1..8) and 1..8,
/// with 0.5-5 % noise, five draws each. At up to 2 % noise all but a few in
/// a hundred are kept; at 5 % some gentle bends are within the noise.
#[test]
fn knees_on_bent_curves_are_kept() {
    type Shape = Box<dyn Fn(f64) -> f64>;
    let mut shapes: Vec<Shape> = Vec::new();
    for sigma in [0.02, 0.05, 0.1, 0.2] {
        for kappa in [0.0, 0.0005, 0.002] {
            let usl = crate::usl::UslParams {
                lambda: 1000.0,
                sigma,
                kappa,
            };
            shapes.push(Box::new(move |n| usl.throughput(n)));
        }
    }
    for tau in [4.0, 8.0, 16.0] {
        shapes.push(Box::new(move |n: f64| 5000.0 * (1.0 - (-n / tau).exp())));
    }
    for elbow in [2.0, 4.0, 8.0, 16.0] {
        shapes.push(Box::new(move |n: f64| {
            100.0 * n.min(elbow) + 5.0 * (n - elbow).max(0.0)
        }));
    }
    let ladders: [Vec<f64>; 5] = [
        (1..=24).map(f64::from).collect(),
        LADDER.to_vec(),
        vec![1.0, 2.0, 4.0, 8.0, 16.0],
        vec![1.0, 2.0, 4.0, 8.0],
        (1..=8).map(f64::from).collect(),
    ];
    let mut seed = 100;
    for noise in [0.005, 0.01, 0.02, 0.05] {
        let (mut found, mut kept) = (0, 0);
        for loads in &ladders {
            for shape in &shapes {
                seed += 1;
                let (f, k) = knee_counts(shape.as_ref(), loads, noise, 5, seed);
                found += f;
                kept += k;
            }
        }
        eprintln!("bent curves, {noise} noise: Kneedle {found}, kept {kept}");
        if noise <= 0.02 {
            assert!(
                kept * 100 >= found * 97,
                "{kept} of {found} kept at {noise}"
            );
        } else {
            assert!(
                kept * 100 >= found * 85,
                "{kept} of {found} kept at {noise}"
            );
        }
    }
}

#[test]
fn the_bend_test_reads_the_noise_from_the_intervals() {
    // A bend: significant with tight intervals, not with wide ones.
    let y = |n: f64| 1000.0 * (1.0 - (-n / 8.0).exp());
    let loads: Vec<f64> = (1..=12).map(f64::from).collect();
    let ys: Vec<f64> = loads.iter().map(|&n| y(n)).collect();
    let tight: Vec<f64> = ys.iter().map(|y| 0.001 * y).collect();
    let wide: Vec<f64> = ys.iter().map(|y| 0.5 * y).collect();
    assert!(bend_chi2(&loads, &ys, &tight) > BEND_CHI2_NEEDED);
    assert!(bend_chi2(&loads, &ys, &wide) < BEND_CHI2_NEEDED);
    let points: Vec<CurvePoint> = loads
        .iter()
        .zip(&ys)
        .zip(&wide)
        .map(|((&l, &y), &h)| pt(l, y, h))
        .collect();
    let no = knee(&points, 1.0).unwrap().unwrap_err();
    assert!(matches!(no, NoKnee::NotSignificant { .. }), "{no:?}");
    assert!(
        no.reason().starts_with("the bend at load"),
        "{}",
        no.reason()
    );
    // A straight line gains nothing from a second segment.
    let line: Vec<f64> = loads.iter().map(|n| 7.0 * n).collect();
    assert!(bend_chi2(&loads, &line, &tight) < 1e-6);
    assert_eq!(bend_chi2(&loads[..2], &line[..2], &tight[..2]), 0.0);
}
