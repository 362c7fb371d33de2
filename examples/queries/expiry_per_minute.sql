-- Keys and memory expiring in each minute (UTC), per snapshot: the
-- report's expiry.histogram with --bucket 1m. A minute holding many keys
-- is an expiry cluster (docs/expiry-clusters.md).
SELECT cluster, snapshot,
       CAST(floor(expiry_ms / 60000) AS BIGINT) * 60000 AS minute_start_ms,
       count(*) AS keys,
       sum(size_in_bytes) AS memory
FROM rdblens_keys
WHERE expiry_ms IS NOT NULL
GROUP BY cluster, snapshot, CAST(floor(expiry_ms / 60000) AS BIGINT)
ORDER BY cluster, snapshot, minute_start_ms
