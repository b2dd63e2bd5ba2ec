//! The parameters every I/O family has: the block size `bs` and the file
//! size `size`, and the check that a file holds at least one block.

use crate::params::Param;

/// A point's block size and file size (`bs`, `size`), refused when the
/// file is smaller than one block.
pub fn block_and_size(p: &crate::params::Point) -> Result<(u64, u64), String> {
    let (bs, size) = (p.num("bs"), p.num("size"));
    if size < bs {
        return Err(format!(
            "size:{} is smaller than one block of bs:{}",
            p.text("size"),
            p.text("bs")
        ));
    }
    Ok((bs, size))
}

/// The `bs` parameter of the I/O families: from 512 B up to `max`.
pub const fn block_param(
    help: &'static str,
    max: u64,
    default: &'static [&'static str],
    quick: &'static [&'static str],
) -> Param {
    Param::size("bs", 512, max)
        .measured(default)
        .quick(quick)
        .help(help)
}

/// The `size` parameter of the I/O families: the bytes of one file (one
/// pass), from 512 B to 1 TB.
pub const fn size_param(
    help: &'static str,
    default: &'static [&'static str],
    quick: &'static [&'static str],
) -> Param {
    Param::size("size", 512, 1 << 40)
        .measured(default)
        .quick(quick)
        .help(help)
}
