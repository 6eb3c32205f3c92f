CREATE TABLE "dispatch"."destinations" (
	"destination" text PRIMARY KEY NOT NULL,
	"circuit" text DEFAULT 'CLOSED' NOT NULL,
	"opened_by_hand" boolean DEFAULT false NOT NULL,
	"opened_at" timestamp with time zone,
	"open_reason" text,
	"cool_down_ms" integer,
	"probe_at" timestamp with time zone,
	"probe_message_id" text,
	"probe_deadline" timestamp with time zone,
	"held_until" timestamp with time zone,
	"window_started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"failure_kinds" jsonb DEFAULT '{}' NOT NULL,
	"failing_messages" text[] DEFAULT '{}' NOT NULL,
	"latency_ms_total" bigint DEFAULT 0 NOT NULL,
	"previous_attempts" integer DEFAULT 0 NOT NULL,
	"previous_failures" integer DEFAULT 0 NOT NULL,
	"previous_failure_kinds" jsonb DEFAULT '{}' NOT NULL,
	"previous_failing_messages" text[] DEFAULT '{}' NOT NULL,
	"previous_latency_ms_total" bigint DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_status" integer,
	"last_error_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "destinations_circuit_check" CHECK ("dispatch"."destinations"."circuit" in ('CLOSED','OPEN','PROBING','GAVE_UP')),
	CONSTRAINT "destinations_opened_check" CHECK (("dispatch"."destinations"."circuit" = 'CLOSED') = ("dispatch"."destinations"."opened_at" is null)),
	CONSTRAINT "destinations_probe_check" CHECK (("dispatch"."destinations"."circuit" = 'PROBING') = ("dispatch"."destinations"."probe_message_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "dispatch"."messages" DROP CONSTRAINT "messages_origin_check";--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "destination" text;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "destination_parked" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "destinations_holding_idx" ON "dispatch"."destinations" USING btree ("destination") WHERE "dispatch"."destinations"."circuit" <> 'CLOSED' or "dispatch"."destinations"."held_until" is not null;--> statement-breakpoint
CREATE INDEX "destinations_last_attempt_at_idx" ON "dispatch"."destinations" USING btree ("last_attempt_at");--> statement-breakpoint
CREATE INDEX "messages_destination_parked_idx" ON "dispatch"."messages" USING btree ("destination","next_delivery_at") WHERE "dispatch"."messages"."destination_parked";--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD CONSTRAINT "messages_destination_parked_check" CHECK (not "dispatch"."messages"."destination_parked" or ("dispatch"."messages"."destination" is not null and "dispatch"."messages"."due_at" is null and "dispatch"."messages"."claim_id" is null and not "dispatch"."messages"."flow_parked" and "dispatch"."messages"."state" in ('CREATED','RETRY')));--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD CONSTRAINT "messages_origin_check" CHECK ("dispatch"."messages"."origin" in ('publish','callback','failure_callback','workflow','operator_event'));--> statement-breakpoint
-- Messages still pending get their destination: the URL's origin as WHATWG's URL.origin spells it for
-- http(s) URLs (scheme and host in lower case, no user info, no default port). Finished ones keep none.
UPDATE "dispatch"."messages" SET "destination" = regexp_replace(
  regexp_replace(lower(substring("url" from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*')), '^([a-z0-9+.-]+://)[^/?#@]*@', '\1'),
  '^(http://.*):80$|^(https://.*):443$', '\1\2')
WHERE "state" IN ('CREATED', 'RETRY');
