//! Recorded sweeps the level-detection tests replay, kept as data: the
//! lat_mem_rd curves in `recorded_curves/lat_mem_rd.txt`, the tlb curves
//! in `recorded_curves/tlb.txt`; each file says where and how its runs
//! were taken. A file is sections headed `[NAME]`, one line per point
//! below: the size (bytes or pages), then every repetition's ns per load
//! (or each round's minimum); `#` starts a comment.

const LAT_MEM_RD: &str = include_str!("recorded_curves/lat_mem_rd.txt");
const TLB: &str = include_str!("recorded_curves/tlb.txt");

/// One recorded point: the size and its figures.
pub type Point = (u64, Vec<f64>);

/// The recorded lat_mem_rd curve `name` (e.g. `RAND_1`, `RAND_PAGE_4`).
pub fn lat_mem_rd(name: &str) -> Vec<Point> {
    section(LAT_MEM_RD, name)
}

/// The recorded tlb curve `name` (e.g. `TLB_QUICK`).
pub fn tlb(name: &str) -> Vec<Point> {
    section(TLB, name)
}

fn section(file: &str, name: &str) -> Vec<Point> {
    let header = format!("[{name}]");
    let points: Vec<Point> = file
        .lines()
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut fields = l.split_whitespace();
            let size = fields.next().unwrap().parse().unwrap();
            (size, fields.map(|f| f.parse().unwrap()).collect())
        })
        .collect();
    assert!(!points.is_empty(), "no recorded curve {header}");
    points
}
