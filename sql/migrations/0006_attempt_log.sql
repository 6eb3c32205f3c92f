CREATE TABLE "dispatch"."attempts" (
	"id" bigint PRIMARY KEY DEFAULT nextval('dispatch.messages_seq_seq') NOT NULL,
	"message_id" text NOT NULL,
	"retried" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" text NOT NULL,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" "bytea",
	"error" text,
	"next_attempt_at" timestamp with time zone,
	"failure" text,
	"note" text,
	CONSTRAINT "attempts_result_check" CHECK ("dispatch"."attempts"."result" in ('DELIVERED','ERROR')),
	CONSTRAINT "attempts_duration_check" CHECK ("dispatch"."attempts"."duration_ms" >= 0 and "dispatch"."attempts"."retried" >= 0)
);
--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "canceled_seq" bigint;--> statement-breakpoint
CREATE INDEX "attempts_message_id_idx" ON "dispatch"."attempts" USING btree ("message_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_canceled_seq_idx" ON "dispatch"."messages" USING btree ("canceled_seq") WHERE "dispatch"."messages"."canceled_seq" is not null;--> statement-breakpoint
-- The event log written so far stays, read-only, as the legacy part of the audit trail.
ALTER TABLE "dispatch"."message_events" RENAME TO "message_events_legacy";--> statement-breakpoint
ALTER TABLE "dispatch"."message_events_legacy" ALTER COLUMN "id" DROP IDENTITY;--> statement-breakpoint
ALTER INDEX "dispatch"."message_events_message_id_idx" RENAME TO "message_events_legacy_message_id_idx";--> statement-breakpoint
ALTER TABLE "dispatch"."message_events_legacy" RENAME CONSTRAINT "message_events_pkey" TO "message_events_legacy_pkey";--> statement-breakpoint
-- The events as the logs API lists them, derived from the message rows and the attempt log.
-- Event id = seq * 8 + n: `seq` is the log position of the row an event comes from (a message's
-- `seq` or `canceled_seq`, an attempt's `id`, all from one sequence), `n` its place among that
-- row's events. Legacy events keep their ids: the sequence moves past them, and messages stored
-- before this migration (their CREATED events are legacy rows) have no derived CREATED event;
-- `event_log_start` in dispatch.settings records where derived CREATED events begin.
CREATE FUNCTION dispatch.attempt_events(a dispatch.attempts)
RETURNS TABLE (n int, state text, at timestamptz, error text, response_status int, response_headers jsonb,
  response_body bytea, next_delivery_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT e.* FROM (VALUES
    (0, 'ACTIVE', a.started_at, NULL::text, NULL::int, NULL::jsonb, NULL::bytea, NULL::timestamptz),
    (1, a.result, a.recorded_at, a.error, a.response_status, a.response_headers, a.response_body, NULL),
    (2, 'RETRY', a.recorded_at, NULL, NULL, NULL, NULL, a.next_attempt_at),
    (3, 'FAILED', a.recorded_at, a.failure, NULL, NULL, NULL, NULL),
    (4, 'ERROR', a.recorded_at, a.note, NULL, NULL, NULL, NULL)
  ) AS e(n, state, at, error, response_status, response_headers, response_body, next_delivery_at)
  WHERE e.n < 2 OR (e.n = 2 AND a.next_attempt_at IS NOT NULL) OR (e.n = 3 AND a.failure IS NOT NULL)
    OR (e.n = 4 AND a.note IS NOT NULL)
$$;--> statement-breakpoint
INSERT INTO dispatch.settings (key, value)
SELECT 'event_log_start', to_jsonb(greatest(
  (SELECT coalesce(max(seq), 0) FROM dispatch.messages),
  (SELECT coalesce(max(id), 0) / 8 + 1 FROM dispatch.message_events_legacy)));--> statement-breakpoint
SELECT setval('dispatch.messages_seq_seq', (SELECT (value #>> '{}')::bigint FROM dispatch.settings WHERE key = 'event_log_start'));--> statement-breakpoint
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
FROM dispatch.attempts a CROSS JOIN LATERAL dispatch.attempt_events(a) e
UNION ALL
SELECT m.canceled_seq * 8 + c.n, m.canceled_seq, c.n, m.id, c.state, m.completed_at, NULL, NULL, NULL, NULL, NULL
FROM dispatch.messages m CROSS JOIN (VALUES (0, 'CANCEL_REQUESTED'), (1, 'CANCELED')) AS c(n, state)
WHERE m.canceled_seq IS NOT NULL;
