//! Tests of the USL fit: recovery of known coefficients, interval
//! coverage, κ held at 0, bad input.
use super::*;

const TRUE: UslParams = UslParams {
    lambda: 1000.0,
    sigma: 0.05,
    kappa: 0.0005,
};

/// Loads with small N (which pin λ and σ) and a tail past N* ≈ 43.6.
const LOADS: [f64; 12] = [
    1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0,
];

/// Standard normal deviate by Box–Muller from the seeded generator.
fn normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - rng.unit(); // (0, 1]: ln stays finite
    let u2 = rng.unit();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// X(N) of `truth` times (1 + noise·Z), Z standard normal, seeded.
fn synthetic(truth: UslParams, loads: &[f64], noise: f64, seed: u64) -> Vec<(f64, f64)> {
    let mut rng = SplitMix64::new(seed);
    loads
        .iter()
        .map(|&n| (n, truth.throughput(n) * (1.0 + noise * normal(&mut rng))))
        .collect()
}

fn relative_error(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs()
}

#[test]
fn exact_data_recover_the_coefficients() {
    let data = synthetic(TRUE, &LOADS, 0.0, 1);
    let fit = fit_usl(&data, &UslOptions::default()).unwrap();
    assert!(relative_error(fit.params.lambda, 1000.0) < 1e-6, "{fit:?}");
    assert!(relative_error(fit.params.sigma, 0.05) < 1e-6, "{fit:?}");
    assert!(relative_error(fit.params.kappa, 0.0005) < 1e-6, "{fit:?}");
    let n_star = (0.95f64 / 0.0005).sqrt();
    assert!(relative_error(fit.peak_load.unwrap(), n_star) < 1e-6);
    assert!(fit.r_squared.unwrap() > 0.999_999);
}

/// A peak inside the sweep (N* ≈ 43.6) and a strongly retrograde curve
/// (N* ≈ 20).
const SHAPES: [UslParams; 2] = [
    TRUE,
    UslParams {
        lambda: 25_000.0,
        sigma: 0.2,
        kappa: 0.002,
    },
];

#[test]
fn noisy_data_recover_the_coefficients() {
    // 1 % multiplicative noise, three draws per shape.
    for truth in SHAPES {
        for seed in [11, 22, 33] {
            let data = synthetic(truth, &LOADS, 0.01, seed);
            let fit = fit_usl(&data, &UslOptions::default()).unwrap();
            let p = fit.params;
            let ci = fit.intervals.as_ref().unwrap();
            let context = format!("truth {truth:?} seed {seed}: {fit:#?}");
            assert!(relative_error(p.lambda, truth.lambda) < 0.05, "{context}");
            assert!(relative_error(p.sigma, truth.sigma) < 0.20, "{context}");
            assert!(relative_error(p.kappa, truth.kappa) < 0.20, "{context}");
            let n_star = truth.peak_load().unwrap();
            assert!(
                relative_error(fit.peak_load.unwrap(), n_star) < 0.10,
                "{context}"
            );
            assert!(fit.r_squared.unwrap() > 0.98, "{context}");
            assert!(fit.rms_relative_error < 0.02, "{context}");
            // The intervals hold the estimates and are not degenerate.
            for (interval, estimate) in [
                (ci.lambda, p.lambda),
                (ci.sigma, p.sigma),
                (ci.kappa, p.kappa),
                (ci.peak_load, fit.peak_load.unwrap()),
            ] {
                assert!(interval.contains(estimate), "{context}");
                assert!(interval.low < interval.high, "{context}");
            }
            // Whether they hold the truth is a matter of frequency (a
            // 95 % interval misses one draw in 20; seed 11 is such a
            // draw for κ): the next test checks that rate.
        }
    }
}

#[test]
fn intervals_cover_the_truth_about_as_often_as_their_level_says() {
    // Over 40 seeded noisy curves, each 95 % interval must hold the true
    // coefficient in at least 35 (87.5 %); they do in 37 or 38. Over 100
    // such draws, plain percentile intervals held κ and N* in 87 and the
    // expanded ones (see `expanded_tail`) in 92.
    let draws = 40;
    let options = UslOptions {
        resamples: 300,
        ..UslOptions::default()
    };
    let n_star = TRUE.peak_load().unwrap();
    let mut covered = [0; 4];
    for seed in 0..draws {
        let data = synthetic(TRUE, &LOADS, 0.01, 1000 + seed);
        let fit = fit_usl(&data, &options).unwrap();
        let ci = fit.intervals.unwrap();
        for (count, hit) in covered.iter_mut().zip([
            ci.lambda.contains(TRUE.lambda),
            ci.sigma.contains(TRUE.sigma),
            ci.kappa.contains(TRUE.kappa),
            ci.peak_load.contains(n_star),
        ]) {
            *count += usize::from(hit);
        }
    }
    assert!(
        covered.iter().all(|&c| c >= 35),
        "λ, σ, κ, N* covered {covered:?} of {draws}"
    );
}

#[test]
fn no_coherency_term_means_no_predicted_peak() {
    // Amdahl-like: X rises towards λ/σ = 10 000 and never falls.
    let truth = UslParams {
        lambda: 1000.0,
        sigma: 0.1,
        kappa: 0.0,
    };
    let fit = fit_usl(&synthetic(truth, &LOADS, 0.0, 1), &UslOptions::default()).unwrap();
    assert!(relative_error(fit.params.sigma, 0.1) < 1e-6, "{fit:?}");
    assert_eq!(fit.params.kappa, 0.0, "{fit:?}");
    assert_eq!(fit.peak_load, None, "{fit:?}");

    let noisy = fit_usl(&synthetic(truth, &LOADS, 0.01, 5), &UslOptions::default()).unwrap();
    let ci = noisy.intervals.as_ref().unwrap();
    assert_eq!(ci.kappa.low, 0.0, "κ = 0 is inside the interval");
    assert!(ci.sigma.contains(0.1));
    // Many resamples fit κ = 0 or a peak far beyond the sweep.
    assert!(ci.peak_load.high > 64.0 * 4.0, "{ci:?}");
    assert_eq!((noisy.params.kappa, noisy.peak_load), (0.0, None));
    // Draws whose fitted κ is above 0 but whose interval holds 0: κ is set
    // to 0 and no peak predicted; σ and λ are the fit's with κ held at 0,
    // inside their own intervals.
    let mut zeroed = 0;
    for seed in 1..=20 {
        let fit = fit_usl(
            &synthetic(truth, &LOADS, 0.01, seed),
            &UslOptions::default(),
        )
        .unwrap();
        let ci = fit.intervals.as_ref().unwrap();
        assert_eq!(fit.params.kappa == 0.0, ci.kappa.low <= 0.0, "{fit:?}");
        if fit.kappa_set_to_zero {
            zeroed += 1;
            assert_eq!((fit.params.kappa, fit.peak_load), (0.0, None));
            assert!(ci.sigma.contains(fit.params.sigma), "{fit:?}");
            assert!(ci.lambda.contains(fit.params.lambda), "{fit:?}");
        }
    }
    assert!(zeroed > 0, "no draw exercised the refit");
}

/// Exact κ = 0 data on the load ladders touchstone sweeps: the fit's
/// rounding left a κ of 10⁻¹⁹-10⁻¹⁷ and with it "N* 1.28e9" (on the
/// doubling ladder, σ 0.1, λ 12345.6: N* 8.1e8, its bootstrap interval a
/// point, so 0 was not inside it). Now κ is 0 and there is no N*.
#[test]
fn exact_kappa_zero_data_predict_no_peak() {
    let ladders: [&[f64]; 3] = [
        &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0],
        &[1.0, 2.0, 4.0, 8.0, 16.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
    ];
    let options = UslOptions {
        resamples: 100,
        ..UslOptions::default()
    };
    for loads in ladders {
        for sigma in [0.0, 0.05, 0.1, 0.3, 0.5] {
            for lambda in [1.0, 1000.0, 12345.6] {
                let truth = UslParams {
                    lambda,
                    sigma,
                    kappa: 0.0,
                };
                let fit = fit_usl(&synthetic(truth, loads, 0.0, 1), &options).unwrap();
                let context = format!("{loads:?} σ {sigma} λ {lambda}: {fit:?}");
                assert_eq!(fit.params.kappa, 0.0, "{context}");
                assert_eq!(fit.peak_load, None, "{context}");
                assert_eq!(fit.peak_throughput, None, "{context}");
                assert!(relative_error(fit.params.sigma, sigma) < 1e-6 || sigma == 0.0);
                assert!(fit.params.sigma < 1e-9 || sigma > 0.0, "{context}");
            }
        }
    }
}

/// A κ the data show is kept: its interval excludes 0.
#[test]
fn a_real_coherency_term_is_kept() {
    let fit = fit_usl(&synthetic(TRUE, &LOADS, 0.01, 11), &UslOptions::default()).unwrap();
    assert!(!fit.kappa_set_to_zero);
    assert!(fit.intervals.unwrap().kappa.low > 0.0);
    assert!(fit.peak_load.is_some());
}

#[test]
fn the_same_seed_gives_the_same_intervals() {
    let data = synthetic(TRUE, &LOADS, 0.02, 7);
    let options = UslOptions {
        resamples: 200,
        ..UslOptions::default()
    };
    let a = fit_usl(&data, &options).unwrap();
    let b = fit_usl(&data, &options).unwrap();
    assert_eq!(a, b);
    let other_seed = UslOptions {
        seed: 99,
        ..options
    };
    let c = fit_usl(&data, &other_seed).unwrap();
    assert_eq!(a.params, c.params);
    assert_ne!(a.intervals, c.intervals);
}

#[test]
fn repeated_loads_count_once_towards_the_minimum() {
    let two_loads = [(1.0, 10.0), (1.0, 11.0), (2.0, 19.0), (2.0, 20.0)];
    assert_eq!(
        fit_usl(&two_loads, &UslOptions::default()),
        Err(UslError::TooFewLoads { distinct: 2 })
    );
    // Trials as separate pairs are fitted together.
    let trials: Vec<(f64, f64)> = [11u64, 12, 13]
        .iter()
        .flat_map(|&s| synthetic(TRUE, &LOADS, 0.01, s))
        .collect();
    let fit = fit_usl(&trials, &UslOptions::default()).unwrap();
    assert_eq!((fit.points, fit.distinct_loads), (36, 12));
    assert!(
        relative_error(fit.params.kappa, TRUE.kappa) < 0.15,
        "{fit:?}"
    );
}

#[test]
fn three_points_fit_without_pretending_to_intervals() {
    let data = synthetic(TRUE, &[1.0, 8.0, 64.0], 0.0, 1);
    let fit = fit_usl(&data, &UslOptions::default()).unwrap();
    assert!(fit.intervals.is_none());
    assert!(
        relative_error(fit.params.kappa, TRUE.kappa) < 1e-4,
        "{fit:?}"
    );
}

#[test]
fn bad_input_is_refused() {
    let ok = [(1.0, 1.0), (2.0, 2.0), (4.0, 3.0), (8.0, 3.5)];
    let d = UslOptions::default();
    assert_eq!(
        fit_usl(&[(1.0, 1.0), (f64::NAN, 2.0)], &d),
        Err(UslError::NotFinite { index: 1 })
    );
    assert_eq!(
        fit_usl(&[(0.0, 1.0), (2.0, 2.0), (3.0, 3.0)], &d),
        Err(UslError::LoadBelowOne {
            index: 0,
            load: 0.0
        })
    );
    assert_eq!(
        fit_usl(&[(1.0, -1.0), (2.0, 2.0), (3.0, 3.0)], &d),
        Err(UslError::NotPositive {
            index: 0,
            throughput: -1.0
        })
    );
    assert_eq!(
        fit_usl(&[(1.0, 1.0), (2.0, 0.0), (3.0, 3.0)], &d),
        Err(UslError::NotPositive {
            index: 1,
            throughput: 0.0
        })
    );
    let bad_level = UslOptions { level: 1.0, ..d };
    assert_eq!(fit_usl(&ok, &bad_level), Err(UslError::BadLevel(1.0)));
    assert!(fit_usl(&ok, &d).is_ok());
}

#[test]
fn quantile_interpolates_and_keeps_infinity() {
    let v = [1.0, 2.0, 3.0, f64::INFINITY];
    assert_eq!(quantile(&v, 0.0), 1.0);
    assert_eq!(quantile(&v, 0.5), 2.5);
    assert_eq!(quantile(&v, 0.9), f64::INFINITY);
    assert_eq!(quantile(&v, 1.0), f64::INFINITY);
}
