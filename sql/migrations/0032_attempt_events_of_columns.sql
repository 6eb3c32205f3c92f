-- dispatch.attempt_events takes an attempt's columns instead of its row: on Citus (docs/citus.md) a
-- statement routed to a node reads the attempts of a shard, whose row type is the shard's, and no
-- function of that type exists there. Same events, same view.
DROP VIEW dispatch.message_events;--> statement-breakpoint
DROP FUNCTION dispatch.attempt_events(dispatch.attempts);--> statement-breakpoint
CREATE FUNCTION dispatch.attempt_events(started_at timestamptz, result text, recorded_at timestamptz, error text,
  response_status int, response_headers jsonb, response_body bytea, next_attempt_at timestamptz, failure text, note text)
RETURNS TABLE (n int, state text, at timestamptz, error text, response_status int, response_headers jsonb,
  response_body bytea, next_delivery_at timestamptz)
LANGUAGE sql IMMUTABLE AS $$
  SELECT e.* FROM (VALUES
    (0, 'ACTIVE', started_at, NULL::text, NULL::int, NULL::jsonb, NULL::bytea, NULL::timestamptz),
    (1, result, recorded_at, error, response_status, response_headers, response_body, NULL),
    (2, 'RETRY', recorded_at, NULL, NULL, NULL, NULL, next_attempt_at),
    (3, 'FAILED', recorded_at, failure, NULL, NULL, NULL, NULL),
    (4, 'ERROR', recorded_at, note, NULL, NULL, NULL, NULL)
  ) AS e(n, state, at, error, response_status, response_headers, response_body, next_delivery_at)
  WHERE e.n < 2 OR (e.n = 2 AND next_attempt_at IS NOT NULL) OR (e.n = 3 AND failure IS NOT NULL)
    OR (e.n = 4 AND note IS NOT NULL)
$$;--> statement-breakpoint
CREATE VIEW dispatch.message_events AS
SELECT l.id, l.id / 8 AS seq, (l.id % 8)::int AS n, l.message_id, l.state, l.at, l.error,
  l.response_status, l.response_headers, l.response_body, l.next_delivery_at
FROM dispatch.message_events_legacy l
UNION ALL
SELECT m.seq * 8, m.seq, 0, m.id, 'CREATED', m.created_at, NULL, NULL, NULL, NULL, NULL
FROM dispatch.messages m
WHERE m.seq > (SELECT (value #>> '{}')::bigint FROM dispatch.settings WHERE key = 'event_log_start')
UNION ALL
SELECT a.id * 8 + e.n, a.id, e.n, a.message_id, e.state, e.at, e.error, e.response_status, e.response_headers,
  e.response_body, e.next_delivery_at
FROM dispatch.attempts a CROSS JOIN LATERAL dispatch.attempt_events(a.started_at, a.result, a.recorded_at, a.error,
  a.response_status, a.response_headers, a.response_body, a.next_attempt_at, a.failure, a.note) e
UNION ALL
SELECT m.canceled_seq * 8 + c.n, m.canceled_seq, c.n, m.id, c.state, m.completed_at, NULL, NULL, NULL, NULL, NULL
FROM dispatch.messages m CROSS JOIN (VALUES (0, 'CANCEL_REQUESTED'), (1, 'CANCELED')) AS c(n, state)
WHERE m.canceled_seq IS NOT NULL;
