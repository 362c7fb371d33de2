-- Memory per first-level namespace (the key up to its first `:`; keys
-- without one in the NULL row), per snapshot: the report's
-- prefixes.namespaces (and prefixes.no_namespace) at level 1.
SELECT cluster, snapshot, namespace,
       count(*) AS keys,
       sum(CASE WHEN expiry_ms IS NOT NULL THEN 1 ELSE 0 END) AS keys_with_expiry,
       sum(size_in_bytes) AS memory
FROM (
  SELECT cluster, snapshot, size_in_bytes, expiry_ms,
         CASE WHEN instr(key_text, ':') > 0
              THEN substr(key_text, 1, instr(key_text, ':') - 1) END AS namespace
  FROM rdblens_keys
) AS named
GROUP BY cluster, snapshot, namespace
ORDER BY cluster, snapshot, memory DESC, namespace
