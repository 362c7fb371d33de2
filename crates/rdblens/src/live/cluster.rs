//! A cluster node's URL as the URLs of one node per shard of its cluster.

use std::path::PathBuf;

use anyhow::{bail, Result};
use rdblens_live::{LiveError, Session};

use super::{connect_options, is_url, server_url, LiveArgs, SETTINGS};

/// `inputs` with each cluster node's URL replaced by one node of each of
/// its cluster's shards (a healthy replica when there is one), in slot
/// order; an error when the shards leave slots unserved. Unless
/// `--node-only`. Files and other servers stay as they are.
pub fn expand_clusters(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let settings = SETTINGS.get().cloned().unwrap_or_default();
    if settings.node_only || !inputs.iter().any(|p| is_url(p)) {
        return Ok(inputs.to_vec());
    }
    let mut out = Vec::with_capacity(inputs.len());
    for path in inputs {
        let Some(text) = path.to_str().filter(|_| is_url(path)) else {
            out.push(path.clone());
            continue;
        };
        let name = rdblens_live::url::display_name(text);
        // Worded as the input's own opening would fail: it is the same
        // connection, login and INFO.
        let nodes =
            cluster_nodes(text, &settings).map_err(|e| anyhow::anyhow!("{name}: cannot open: {e}"))?;
        match nodes {
            None => out.push(path.clone()),
            Some(nodes) => out.extend(nodes.into_iter().map(PathBuf::from)),
        }
    }
    if settings.save.is_some() && out.len() != inputs.len() {
        bail!("--save keeps the snapshot of one server: a cluster has several (save each node's with --node-only)");
    }
    Ok(out)
}

/// How many times CLUSTER SHARDS is asked again, half a second apart, while
/// a shard with replicas has none online.
const REPLICA_WAITS: usize = 10;

/// The URLs (with the login) of the node to read in each shard of the
/// cluster `text` is a node of; `None` when it is not in cluster mode.
fn cluster_nodes(text: &str, settings: &LiveArgs) -> Result<Option<Vec<String>>, LiveError> {
    let url = server_url(text)?;
    let tls = matches!(url.transport, rdblens_live::Transport::Tls { .. });
    let mut session = Session::open(&url, &connect_options(settings))?;
    // INFO tells a cluster node; a user without +info is asked CLUSTER
    // SHARDS, and one without +cluster either is read as one server.
    match session.facts()? {
        Ok(facts) if !facts.cluster_enabled => return Ok(None),
        _ => {}
    }
    let mut shards = match rdblens_live::cluster::shards(&mut session, tls) {
        Err(LiveError::NoPermission { .. }) => None,
        other => other?,
    };
    // A replica is `loading` in CLUSTER SHARDS while the replication offset
    // the node asked last heard from it is 0 (it synced a moment ago, or
    // resynced in full): asked again a few times before a shard's primary,
    // which would fork, is read instead. A replica the node asked has not
    // yet heard is one (just attached) is not listed at all: nothing to wait
    // for.
    for _ in 0..REPLICA_WAITS {
        let waiting = shards.as_ref().is_some_and(|shards| {
            shards.iter().any(|shard| {
                shard.nodes.iter().any(|n| !n.primary) && !shard.nodes.iter().any(|n| !n.primary && n.healthy)
            })
        });
        if !waiting {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        shards = rdblens_live::cluster::shards(&mut session, tls)?;
    }
    let Some(mut shards) = shards else {
        return Ok(None);
    };
    let gaps = rdblens_live::cluster::uncovered(&shards);
    if !gaps.is_empty() {
        let ranges: Vec<String> = gaps
            .iter()
            .map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") })
            .collect();
        return Err(LiveError::Cluster(format!(
            "a cluster whose shards serve no node for slots {}: its data would be incomplete \
             (CLUSTER SHARDS; fix the cluster, or read one node with --node-only)",
            ranges.join(",")
        )));
    }
    shards.sort_by_key(|s| s.slots.first().map_or(0, |r| r.0));
    let mut urls = Vec::with_capacity(shards.len());
    let mut picked = Vec::new();
    for shard in &shards {
        let first = shard.slots.first().map_or(0, |r| r.0);
        let node = shard.pick().ok_or_else(|| {
            LiveError::Cluster(format!(
                "no healthy node serves slot {first} (CLUSTER SHARDS): its data cannot be read"
            ))
        })?;
        let at = url.at_node(&node.host, node.port);
        picked.push(format!(
            "{at} ({})",
            if node.primary { "primary" } else { "replica" }
        ));
        urls.push(at.with_credentials());
    }
    eprintln!(
        "rdblens: {url}: a cluster of {} shards, all {} slots served; reading {}",
        shards.len(),
        rdblens_live::cluster::SLOTS,
        picked.join(", ")
    );
    Ok(Some(urls))
}
