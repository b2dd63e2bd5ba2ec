//! The hosts of a fleet: from the command line (`a,b,c`) or a file
//! (`@FILE`, one ssh destination a line, `#` comments), each checked before
//! anything connects, errors naming the file and line.

use std::path::Path;

/// One host as the user named it: an ssh destination (`node-7`,
/// `user@node-7`, `ssh://user@node-7:2222`), resolved by ssh's own config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub destination: String,
}

impl Host {
    /// The network address other hosts reach it at: the destination without
    /// user, scheme and port (ssh config aliases resolve only for ssh, so a
    /// farm that names hosts by alias gives addresses in the pair list).
    pub fn address(&self) -> &str {
        let d = self.destination.as_str();
        let d = d.strip_prefix("ssh://").unwrap_or(d);
        let d = d.rsplit_once('@').map_or(d, |(_, h)| h);
        if let Some(rest) = d.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        if self.destination.starts_with("ssh://") {
            d.split(':').next().unwrap_or(d)
        } else {
            d
        }
    }
}

/// Why a destination cannot be a host.
fn check(destination: &str) -> Result<Host, String> {
    if destination.is_empty() {
        return Err("an empty host name".into());
    }
    if destination.starts_with('-') {
        // ssh would read it as an option.
        return Err(format!(
            "'{destination}' starts with '-': not a host name (ssh would take it for an option)"
        ));
    }
    if let Some(c) = destination
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || "'\"`$;&|<>\\,".contains(*c))
    {
        return Err(format!(
            "'{destination}' holds {c:?}: one host a line, an ssh destination such as node-7 or user@node-7"
        ));
    }
    let host_part = destination.rsplit_once('@').map_or(destination, |(_, h)| h);
    if host_part.is_empty() || destination.ends_with("ssh://") {
        return Err(format!("'{destination}' names no host after the user"));
    }
    Ok(Host {
        destination: destination.to_string(),
    })
}

/// `a,b,c` or `@FILE`.
pub fn parse_arg(arg: &str) -> Result<Vec<Host>, String> {
    let hosts = match arg.strip_prefix('@') {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("host file {file}: cannot read: {e}"))?;
            parse_file(Path::new(file), &text)?
        }
        None => arg
            .split(',')
            .map(str::trim)
            .map(|h| check(h).map_err(|e| format!("--hosts: {e}")))
            .collect::<Result<Vec<_>, _>>()?,
    };
    no_repeats(&hosts)?;
    if hosts.is_empty() {
        return Err(format!("{arg}: no hosts"));
    }
    Ok(hosts)
}

/// A host file: one destination a line; blank lines and `#` comments
/// (whole-line or trailing) are ignored. A bad line is an error naming it.
pub fn parse_file(path: &Path, text: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        hosts.push(check(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?);
    }
    Ok(hosts)
}

fn no_repeats(hosts: &[Host]) -> Result<(), String> {
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].contains(h) {
            return Err(format!("host {} is named twice", h.destination));
        }
    }
    Ok(())
}

/// `--pairs A:B,C:D`: A serves, B runs the client. Each name must be one
/// of the hosts (so no pair starts anything on a host the user did not list).
pub fn parse_pairs(arg: &str, hosts: &[Host]) -> Result<Vec<(usize, usize)>, String> {
    let find = |name: &str| {
        hosts
            .iter()
            .position(|h| h.destination == name || h.address() == name)
            .ok_or_else(|| format!("--pairs: '{name}' is not one of the --hosts"))
    };
    arg.split(',')
        .map(|pair| {
            let (a, b) = pair.trim().split_once(':').ok_or_else(|| {
                format!("--pairs: '{pair}' is not SERVER:CLIENT (two hosts joined by ':')")
            })?;
            let (a, b) = (find(a)?, find(b)?);
            if a == b {
                return Err(format!("--pairs: '{pair}' pairs a host with itself"));
            }
            Ok((a, b))
        })
        .collect()
}

/// Every ordered pair would double the work for a symmetric path: each
/// unordered pair once, the earlier host serving.
pub fn all_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_files_parse() {
        let h = parse_arg("node-1, root@node-2,ssh://u@node-3:2222").unwrap();
        assert_eq!(h.len(), 3);
        assert_eq!(h[1].address(), "node-2");
        assert_eq!(h[2].address(), "node-3");
        let f = parse_file(
            Path::new("hosts"),
            "# farm\n\nnode-1\n  node-2   # rack 4\n10.0.0.9\n",
        )
        .unwrap();
        assert_eq!(
            f.iter().map(|h| h.destination.as_str()).collect::<Vec<_>>(),
            ["node-1", "node-2", "10.0.0.9"]
        );
    }

    #[test]
    fn a_malformed_line_is_named() {
        let e = parse_file(Path::new("farm.txt"), "node-1\nnode-2 node-3\n").unwrap_err();
        assert!(e.starts_with("farm.txt:2: "), "{e}");
        let e = parse_file(Path::new("farm.txt"), "-oProxyCommand=x\n").unwrap_err();
        assert!(e.contains("farm.txt:1: ") && e.contains("option"), "{e}");
        assert!(parse_arg("a,,b").unwrap_err().contains("empty"));
        assert!(parse_arg("a,a").unwrap_err().contains("twice"));
        assert!(parse_arg("root@").unwrap_err().contains("no host"));
    }

    #[test]
    fn pairs_name_listed_hosts() {
        let h = parse_arg("a,b,c").unwrap();
        assert_eq!(parse_pairs("a:b,c:a", &h).unwrap(), [(0, 1), (2, 0)]);
        assert!(parse_pairs("a:z", &h).unwrap_err().contains("'z'"));
        assert!(parse_pairs("a", &h).unwrap_err().contains("SERVER:CLIENT"));
        assert!(parse_pairs("a:a", &h).unwrap_err().contains("itself"));
        assert_eq!(all_pairs(3), [(0, 1), (0, 2), (1, 2)]);
    }
}
