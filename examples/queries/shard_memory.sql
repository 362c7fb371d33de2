-- Keys and memory per shard, and each shard's share of its snapshot's
-- memory: the report's shards section.
SELECT cluster, snapshot, shard, keys, keys_with_expiry, memory,
       memory * 1.0 / sum(memory) OVER (PARTITION BY cluster, snapshot) AS memory_share
FROM (
  SELECT cluster, snapshot, shard,
         count(*) AS keys,
         sum(CASE WHEN expiry_ms IS NOT NULL THEN 1 ELSE 0 END) AS keys_with_expiry,
         sum(size_in_bytes) AS memory
  FROM rdblens_keys
  GROUP BY cluster, snapshot, shard
) AS per_shard
ORDER BY cluster, snapshot, shard
