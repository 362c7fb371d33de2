-- The 20 biggest keys of each snapshot by estimated memory, as the
-- report's top_keys.by_memory lists them: ties broken by database, then
-- key (byte order), then shard.
SELECT cluster, snapshot, rank, shard, db, key_text, type, encoding, size_in_bytes, member_count
FROM (
  SELECT cluster, snapshot, shard, db, key_text, type, encoding, size_in_bytes, member_count,
         row_number() OVER (
           PARTITION BY cluster, snapshot
           ORDER BY size_in_bytes DESC, db, key_text, shard
         ) AS rank
  FROM rdblens_keys
) AS ranked
WHERE rank <= 20
ORDER BY cluster, snapshot, rank
