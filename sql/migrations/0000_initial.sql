CREATE SCHEMA IF NOT EXISTS "dispatch";
--> statement-breakpoint
CREATE TABLE "dispatch"."deduplication_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dispatch"."dlq" (
	"dlq_id" text PRIMARY KEY NOT NULL,
	"message_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"error" text,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" "bytea",
	CONSTRAINT "dlq_message_id_unique" UNIQUE("message_id")
);
--> statement-breakpoint
CREATE TABLE "dispatch"."message_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."message_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"message_id" text NOT NULL,
	"state" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"error" text,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" "bytea",
	"next_delivery_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "dispatch"."messages" (
	"id" text PRIMARY KEY NOT NULL,
	"dialect" text NOT NULL,
	"state" text DEFAULT 'CREATED' NOT NULL,
	"origin" text DEFAULT 'publish' NOT NULL,
	"source_message_id" text,
	"url" text NOT NULL,
	"topic_name" text,
	"endpoint_name" text,
	"queue_name" text,
	"api" text,
	"method" text NOT NULL,
	"headers" jsonb NOT NULL,
	"content_type" text,
	"body" "bytea" NOT NULL,
	"timeout_ms" integer,
	"max_retries" integer NOT NULL,
	"retried" integer DEFAULT 0 NOT NULL,
	"retry_delay_expression" text,
	"callback" text,
	"callback_headers" jsonb,
	"failure_callback" text,
	"failure_callback_headers" jsonb,
	"deduplication_id" text,
	"labels" text[],
	"schedule_id" text,
	"caller_ip" text,
	"not_before" timestamp with time zone NOT NULL,
	"next_delivery_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "messages_state_check" CHECK ("dispatch"."messages"."state" in ('CREATED','RETRY','DELIVERED','FAILED','CANCELED')),
	CONSTRAINT "messages_dialect_check" CHECK ("dispatch"."messages"."dialect" in ('svc','upstash')),
	CONSTRAINT "messages_retries_check" CHECK ("dispatch"."messages"."retried" >= 0 and "dispatch"."messages"."max_retries" >= 0),
	CONSTRAINT "messages_completed_check" CHECK (("dispatch"."messages"."state" in ('DELIVERED','FAILED','CANCELED')) = ("dispatch"."messages"."completed_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "dispatch"."settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dispatch"."workers" (
	"id" text PRIMARY KEY NOT NULL,
	"process_id" text NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dispatch"."dlq" ADD CONSTRAINT "dlq_message_id_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "dispatch"."messages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "deduplication_keys_expires_at_idx" ON "dispatch"."deduplication_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "dlq_created_at_idx" ON "dispatch"."dlq" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "message_events_message_id_idx" ON "dispatch"."message_events" USING btree ("message_id","id");--> statement-breakpoint
CREATE INDEX "message_events_at_idx" ON "dispatch"."message_events" USING btree ("at");--> statement-breakpoint
CREATE INDEX "messages_created_at_idx" ON "dispatch"."messages" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "messages_source_message_id_idx" ON "dispatch"."messages" USING btree ("source_message_id");