//! A recorded `tlb` curve for the TLB-detection tests: `touchstone run tlb
//! --quick` on the shared 2-vCPU KVM guest (AMD EPYC family 26; sysfs L1d
//! 48 KiB in 64-byte lines = 768 lines; cpuid L1 DTLB 96 entries),
//! 2026-11-23 18:04 UTC, load 13.7. Each point is (pages, every
//! repetition's ns per load); the headline is the minimum. The step after
//! 512 pages is the touched lines outgrowing L1d, not a TLB.

pub type Curve = &'static [(u64, &'static [f64])];

pub const TLB_QUICK: Curve = &[
    (16, &[1.071, 6.851, 1.058, 5.182, 1.042, 7.225, 1.055]),
    (32, &[1.066, 7.075, 1.132, 3.372, 1.047, 7.078, 1.05]),
    (64, &[1.064, 5.073, 1.042, 4.964, 1.058, 7.074, 1.052]),
    (96, &[1.071, 7.365, 1.065, 5.26, 1.037, 7.352, 1.113]),
    (128, &[2.913, 14.16, 2.9, 19.88, 2.904, 14.13, 2.915]),
    (256, &[2.944, 14.14, 2.88, 19.66, 2.883, 14.19, 2.881]),
    (512, &[3.084, 14.03, 2.86, 19.03, 16.55, 2.905, 19.64]),
    (1024, &[5.825, 37.23, 5.493, 27.09, 31.19, 5.478, 27.1]),
    (2048, &[8.818, 5.876, 45.06, 32.91, 6.914, 45.13, 44.63]),
    (4096, &[19.49, 72.86, 11.76, 100.5, 74.26, 13.67, 86.5]),
    (8192, &[250.2, 30.17, 346.2, 220.8, 122.1, 124.1, 226.5]),
];
