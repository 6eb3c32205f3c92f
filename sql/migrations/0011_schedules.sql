CREATE TABLE "dispatch"."schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"cron" text NOT NULL,
	"destination" text NOT NULL,
	"dialect" text NOT NULL,
	"headers" jsonb NOT NULL,
	"body" "bytea" NOT NULL,
	"queue_name" text,
	"caller_ip" text,
	"paused" boolean DEFAULT false NOT NULL,
	"next_tick_at" timestamp with time zone NOT NULL,
	"last_tick_at" timestamp with time zone,
	"last_message_ids" text[] DEFAULT '{}' NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "schedules_dialect_check" CHECK ("dispatch"."schedules"."dialect" in ('svc','upstash'))
);
--> statement-breakpoint
CREATE INDEX "schedules_next_tick_idx" ON "dispatch"."schedules" USING btree ("next_tick_at") WHERE not "dispatch"."schedules"."paused";