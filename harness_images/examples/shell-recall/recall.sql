-- shell-recall's whole memory policy, over the read-only brain schema
-- (docs/HOOK_AUTHORS.md): names (titles and aliases) of live pages in the active
-- source that occur in the prompt as whole words; the three longest names win.
-- :'prompt', :'source' and :'event' are psql variables, quoted by psql itself.
WITH prompt AS (
  SELECT ' ' || btrim(regexp_replace(lower(:'prompt'), '[^[:alnum:]]+', ' ', 'g')) || ' ' AS words
), names AS (
  SELECT p.slug, p.title, p.title AS name
    FROM pages p
   WHERE p.source_id = :'source' AND p.deleted_at IS NULL
  UNION
  SELECT p.slug, p.title, a.alias_norm
    FROM page_aliases a
    JOIN pages p ON p.source_id = a.source_id AND p.slug = a.slug AND p.deleted_at IS NULL
   WHERE a.source_id = :'source'
), hits AS (
  SELECT DISTINCT ON (n.slug) n.slug, n.title, length(n.name) AS strength
    FROM names n, prompt
   WHERE length(n.name) >= 3
     AND position(' ' || btrim(regexp_replace(lower(n.name), '[^[:alnum:]]+', ' ', 'g')) || ' ' IN prompt.words) > 0
   ORDER BY n.slug, length(n.name) DESC
), top AS (
  SELECT * FROM hits ORDER BY strength DESC, slug LIMIT 3
)
SELECT json_build_object(
         'hookSpecificOutput', json_build_object(
           'hookEventName', :'event',
           'additionalContext',
           E'## Memory (shell-recall)\n'
             || string_agg(format('- **%s** → `%s`', title, slug), E'\n' ORDER BY strength DESC, slug)))
  FROM top
HAVING count(*) > 0;
