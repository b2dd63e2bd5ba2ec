//! How writes reach the storage: the `mode` parameter's sync modes and
//! their open flags.

/// How writes reach the storage (and whether the page cache is used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    Buffered,
    /// Buffered writes, then one fsync(2) per pass, timed apart.
    BufferedFsync,
    Osync,
    Dsync,
    Direct,
}

pub const SYNC_MODES: &[&str] = &["buffered", "buffered+fsync", "osync", "dsync", "direct"];

impl SyncMode {
    pub fn parse(s: &str) -> SyncMode {
        match s {
            "buffered+fsync" => SyncMode::BufferedFsync,
            "osync" => SyncMode::Osync,
            "dsync" => SyncMode::Dsync,
            "direct" => SyncMode::Direct,
            _ => SyncMode::Buffered,
        }
    }
    /// Flags added to open(2).
    pub fn open_flags(self) -> libc::c_int {
        match self {
            SyncMode::Buffered | SyncMode::BufferedFsync => 0,
            SyncMode::Osync => libc::O_SYNC,
            SyncMode::Dsync => libc::O_DSYNC,
            SyncMode::Direct => libc::O_DIRECT,
        }
    }
}
