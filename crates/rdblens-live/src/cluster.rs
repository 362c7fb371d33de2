//! A cluster node stands for its whole cluster: its shards, from `CLUSTER
//! SHARDS` (7.0+) or `CLUSTER NODES` before, one node read per shard (a
//! healthy replica when there is one, so that no primary forks), and a
//! check that the shards' slots cover all 16,384.

use crate::error::LiveError;
use crate::resp::Reply;
use crate::session::Session;

/// Hash slots of a Redis cluster.
pub const SLOTS: u32 = 16384;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardNode {
    pub host: String,
    pub port: u16,
    pub primary: bool,
    /// `online` (CLUSTER SHARDS), or a connected node without `fail` flags
    /// (CLUSTER NODES).
    pub healthy: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Inclusive slot ranges.
    pub slots: Vec<(u32, u32)>,
    pub nodes: Vec<ShardNode>,
}

impl Shard {
    /// The node to read: a healthy replica, else a healthy primary.
    pub fn pick(&self) -> Option<&ShardNode> {
        let healthy = |primary: bool| self.nodes.iter().find(|n| n.healthy && n.primary == primary);
        healthy(false).or_else(|| healthy(true))
    }
}

/// The shards of the cluster `session`'s node is in, with slots; `None`
/// when the server is not in cluster mode. `tls`: the URL is `rediss://`
/// (the nodes' TLS ports are wanted).
pub fn shards(session: &mut Session, tls: bool) -> Result<Option<Vec<Shard>>, LiveError> {
    let hint = "a cluster is read through CLUSTER SHARDS or CLUSTER NODES: grant +cluster (docs/live.md)";
    let reply = session.command(&[b"CLUSTER", b"SHARDS"], "CLUSTER SHARDS")?;
    let shards = match (&reply, reply.error()) {
        (_, Some(e)) if e.contains("cluster support disabled") => return Ok(None),
        (_, Some(e)) if e.starts_with("ERR unknown subcommand") || e.starts_with("ERR unknown command") => {
            let nodes = session.command(&[b"CLUSTER", b"NODES"], "CLUSTER NODES")?;
            match (&nodes, nodes.error()) {
                (_, Some(e)) if e.contains("cluster support disabled") => return Ok(None),
                (_, Some(e)) => return Err(session.server_error("CLUSTER NODES", e, hint)),
                (Reply::Bulk(Some(text)), None) => from_nodes(&String::from_utf8_lossy(text)),
                _ => None,
            }
        }
        (_, Some(e)) => return Err(session.server_error("CLUSTER SHARDS", e, hint)),
        (Reply::Array(Some(items)), None) => from_shards(items, tls),
        _ => None,
    };
    let shards = shards.ok_or_else(|| LiveError::NotRedis {
        url: session.url().to_string(),
        during: "to CLUSTER SHARDS".into(),
        what: "its reply is not a list of shards".into(),
    })?;
    Ok(Some(shards.into_iter().filter(|s| !s.slots.is_empty()).collect()))
}

/// A flat RESP2 map (`name, value, name, value...`) as pairs.
fn pairs(items: &[Reply]) -> impl Iterator<Item = (String, &Reply)> {
    items.chunks(2).filter_map(|p| match p {
        [name, value] => Some((name.text()?, value)),
        _ => None,
    })
}

fn number(reply: &Reply) -> Option<u64> {
    match reply {
        Reply::Integer(n) => u64::try_from(*n).ok(),
        other => other.text()?.parse().ok(),
    }
}

fn from_shards(items: &[Reply], tls: bool) -> Option<Vec<Shard>> {
    let mut shards = Vec::new();
    for shard in items {
        let Reply::Array(Some(fields)) = shard else {
            return None;
        };
        let mut slots = Vec::new();
        let mut nodes = Vec::new();
        for (name, value) in pairs(fields) {
            match (name.as_str(), value) {
                ("slots", Reply::Array(Some(bounds))) => {
                    for pair in bounds.chunks(2) {
                        if let [start, end] = pair {
                            slots.push((number(start)? as u32, number(end)? as u32));
                        }
                    }
                }
                ("nodes", Reply::Array(Some(list))) => {
                    for node in list {
                        let Reply::Array(Some(node)) = node else {
                            return None;
                        };
                        nodes.push(shard_node(node, tls)?);
                    }
                }
                _ => {}
            }
        }
        shards.push(Shard { slots, nodes });
    }
    Some(shards)
}

fn shard_node(fields: &[Reply], tls: bool) -> Option<ShardNode> {
    let (mut ip, mut endpoint, mut port, mut tls_port) = (None, None, None, None);
    let (mut primary, mut healthy) = (false, false);
    for (name, value) in pairs(fields) {
        match name.as_str() {
            "ip" => ip = value.text(),
            "endpoint" => endpoint = value.text(),
            "port" => port = number(value),
            "tls-port" => tls_port = number(value),
            "role" => primary = value.text().as_deref() == Some("master"),
            "health" => healthy = value.text().as_deref() == Some("online"),
            _ => {}
        }
    }
    // The endpoint is what clients are told to use (a host name, or `?`
    // when unknown); the IP otherwise.
    let host = endpoint.filter(|e| !e.is_empty() && e != "?").or(ip)?;
    let port = if tls { tls_port.or(port) } else { port.or(tls_port) }?;
    Some(ShardNode {
        host,
        port: u16::try_from(port).ok()?,
        primary,
        healthy,
    })
}

/// `CLUSTER NODES`: `id ip:port@cport[,hostname] flags primary-id ping pong
/// epoch link slot...`; a replica names its primary by id.
fn from_nodes(text: &str) -> Option<Vec<Shard>> {
    struct Line<'a> {
        id: &'a str,
        node: ShardNode,
        primary_id: &'a str,
        slots: Vec<(u32, u32)>,
    }
    let mut lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() < 8 {
            return None;
        }
        let address = fields[1].split(['@', ',']).next()?;
        let (host, port) = address.rsplit_once(':')?;
        let flags = fields[2];
        let mut slots = Vec::new();
        for range in &fields[8..] {
            if range.starts_with('[') {
                continue; // a slot being migrated
            }
            let (start, end) = range.split_once('-').unwrap_or((range, range));
            slots.push((start.parse().ok()?, end.parse().ok()?));
        }
        lines.push(Line {
            id: fields[0],
            node: ShardNode {
                host: host.to_string(),
                port: port.parse().ok()?,
                primary: flags.contains("master"),
                healthy: fields[7] == "connected" && !flags.contains("fail") && !flags.contains("noaddr"),
            },
            primary_id: fields[3],
            slots,
        });
    }
    let shards = lines
        .iter()
        .filter(|l| l.node.primary)
        .map(|p| Shard {
            slots: p.slots.clone(),
            nodes: std::iter::once(p.node.clone())
                .chain(
                    lines
                        .iter()
                        .filter(|r| r.primary_id == p.id)
                        .map(|r| r.node.clone()),
                )
                .collect(),
        })
        .collect();
    Some(shards)
}

/// The slot ranges no shard serves, in order.
pub fn uncovered(shards: &[Shard]) -> Vec<(u32, u32)> {
    let mut served = vec![false; SLOTS as usize];
    for (start, end) in shards.iter().flat_map(|s| s.slots.iter()) {
        for slot in *start..=(*end).min(SLOTS - 1) {
            served[slot as usize] = true;
        }
    }
    let mut gaps = Vec::new();
    let mut slot = 0;
    while slot < SLOTS {
        if served[slot as usize] {
            slot += 1;
            continue;
        }
        let start = slot;
        while slot < SLOTS && !served[slot as usize] {
            slot += 1;
        }
        gaps.push((start, slot - 1));
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_lines_make_shards_with_their_replicas() {
        let text = "\
81db 127.0.0.1:17004@27004 slave 4be4 0 1795950523674 2 connected
668e 127.0.0.1:17003@27003 master - 0 1795950521618 3 connected 10923-16383
27b0 127.0.0.1:17001@27001,cache-1 myself,master - 0 1795950519000 1 connected 0-5460 [5461->-4be4]
4be4 127.0.0.1:17002@27002 master - 0 1795950524000 2 connected 5461-10922
b2ec 127.0.0.1:17006@27006 slave,fail 27b0 0 1795950524684 1 disconnected
";
        let shards = from_nodes(text).unwrap(); // ok: unit test
        assert_eq!(shards.len(), 3);
        assert_eq!(shards[1].slots, [(0, 5460)]);
        // Its only replica failed: the primary is read.
        assert_eq!(shards[1].pick().unwrap().port, 17001); // ok: unit test
        assert_eq!(shards[2].pick().unwrap().port, 17004); // ok: unit test
        assert!(!shards[2].pick().unwrap().primary); // ok: unit test
        assert!(uncovered(&shards).is_empty());
        assert_eq!(uncovered(&shards[1..]), [(10923, 16383)]);
        assert_eq!(uncovered(&[]), [(0, 16383)]);
    }

    #[test]
    fn cluster_shards_replies_prefer_an_online_replica() {
        let bulk = |s: &str| Reply::Bulk(Some(s.as_bytes().to_vec()));
        let node = |port: i64, role: &str, health: &str| {
            Reply::Array(Some(vec![
                bulk("id"),
                bulk("x"),
                bulk("port"),
                Reply::Integer(port),
                bulk("ip"),
                bulk("10.0.0.1"),
                bulk("endpoint"),
                bulk("cache.test"),
                bulk("role"),
                bulk(role),
                bulk("health"),
                bulk(health),
            ]))
        };
        let shard = Reply::Array(Some(vec![
            bulk("slots"),
            Reply::Array(Some(vec![
                Reply::Integer(0),
                Reply::Integer(99),
                Reply::Integer(200),
                Reply::Integer(16383),
            ])),
            bulk("nodes"),
            Reply::Array(Some(vec![
                node(7001, "master", "online"),
                node(7002, "replica", "loading"),
                node(7003, "replica", "online"),
            ])),
        ]));
        let shards = from_shards(&[shard], false).unwrap(); // ok: unit test
        assert_eq!(shards[0].slots, [(0, 99), (200, 16383)]);
        let picked = shards[0].pick().unwrap(); // ok: unit test
        assert_eq!(
            (picked.host.as_str(), picked.port, picked.primary),
            ("cache.test", 7003, false)
        );
        assert_eq!(uncovered(&shards), [(100, 199)]);
    }
}
