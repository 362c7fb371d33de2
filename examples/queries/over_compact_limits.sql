-- Keys stored in their big encoding because they passed a compact-encoding
-- limit (Redis 7.x and Valkey defaults below: edit them to your servers'
-- `CONFIG GET *-max-*` values). A key just past a limit costs several
-- times the memory of its compact form: raising the limit, or splitting
-- the key, wins it back (the report's limits section and docs/advisor.md).
SELECT k.cluster, k.snapshot, k.shard, k.db, k.key_text, k.type, k.encoding,
       k.member_count, k.len_largest_element, k.size_in_bytes,
       CASE WHEN k.member_count > l.max_entries THEN l.entries_setting
            ELSE l.value_setting END AS limit_passed
FROM rdblens_keys AS k
JOIN (VALUES
  ('hash', 'hashtable', 128, 64, 'hash-max-listpack-entries', 'hash-max-listpack-value'),
  ('zset', 'skiplist', 128, 64, 'zset-max-listpack-entries', 'zset-max-listpack-value'),
  ('set', 'hashtable', 128, 64, 'set-max-listpack-entries', 'set-max-listpack-value')
) AS l(type, big_encoding, max_entries, max_value, entries_setting, value_setting)
  ON k.type = l.type AND k.encoding = l.big_encoding
WHERE k.member_count > l.max_entries OR k.len_largest_element > l.max_value
ORDER BY k.size_in_bytes DESC, k.db, k.key_text
LIMIT 100
