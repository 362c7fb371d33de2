-- Growth per first-level namespace between the two latest snapshots of
-- each cluster (snapshot labels sort as their times do): memory and keys
-- before and after, biggest growth first. A namespace that is new has
-- no "before" (0).
WITH per_snapshot AS (
  SELECT cluster, snapshot,
         CASE WHEN instr(key_text, ':') > 0
              THEN substr(key_text, 1, instr(key_text, ':') - 1) END AS namespace,
         count(*) AS keys,
         sum(size_in_bytes) AS memory
  FROM rdblens_keys
  GROUP BY cluster, snapshot,
           CASE WHEN instr(key_text, ':') > 0
                THEN substr(key_text, 1, instr(key_text, ':') - 1) END
),
latest AS (
  SELECT cluster, snapshot,
         dense_rank() OVER (PARTITION BY cluster ORDER BY snapshot DESC) AS age
  FROM (SELECT DISTINCT cluster, snapshot FROM rdblens_keys) AS snapshots
),
before AS (
  SELECT p.* FROM per_snapshot AS p JOIN latest AS l
    ON p.cluster = l.cluster AND p.snapshot = l.snapshot WHERE l.age = 2
),
after AS (
  SELECT p.* FROM per_snapshot AS p JOIN latest AS l
    ON p.cluster = l.cluster AND p.snapshot = l.snapshot WHERE l.age = 1
)
SELECT coalesce(a.cluster, b.cluster) AS cluster,
       coalesce(a.namespace, b.namespace) AS namespace,
       b.snapshot AS snapshot_before, a.snapshot AS snapshot_after,
       coalesce(b.keys, 0) AS keys_before, coalesce(a.keys, 0) AS keys_after,
       coalesce(b.memory, 0) AS memory_before, coalesce(a.memory, 0) AS memory_after,
       coalesce(a.memory, 0) - coalesce(b.memory, 0) AS memory_growth
FROM after AS a
FULL OUTER JOIN before AS b
  ON a.cluster = b.cluster AND a.namespace IS NOT DISTINCT FROM b.namespace
ORDER BY memory_growth DESC, cluster, namespace
