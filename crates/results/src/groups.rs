//! Report groups, after lmbench's summary tables. Each catalogue family
//! belongs to one; reports print one table per group, in this order;
//! `touchstone run GROUP` runs the group's default cases.

pub struct Group {
    pub name: &'static str,
    pub title: &'static str,
}

pub static GROUPS: &[Group] = &[
    Group {
        name: "proc",
        title: "Processor & processes",
    },
    Group {
        name: "ctx",
        title: "Context switching",
    },
    Group {
        name: "comm_lat",
        title: "Local communication latency",
    },
    Group {
        name: "fs_lat",
        title: "File & VM latency",
    },
    Group {
        name: "file_io",
        title: "File-system & disk I/O",
    },
    Group {
        name: "comm_bw",
        title: "Local communication bandwidth",
    },
    Group {
        name: "mem_bw",
        title: "Memory bandwidth",
    },
    Group {
        name: "mem_lat",
        title: "Memory latency",
    },
    Group {
        name: "cpu",
        title: "CPU kernels",
    },
    Group {
        name: "workload",
        title: "System workloads",
    },
    Group {
        name: "app",
        title: "Applications",
    },
    Group {
        name: "harness",
        title: "Harness self-checks",
    },
];

pub fn group(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.name == name)
}

pub fn title(name: &str) -> &str {
    group(name).map_or(name, |g| g.title)
}
