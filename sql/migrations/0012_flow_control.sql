CREATE TABLE "dispatch"."flow_control_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"parallelism" integer,
	"rate" integer,
	"period_ms" integer DEFAULT 1000 NOT NULL,
	"pinned_parallelism" boolean DEFAULT false NOT NULL,
	"pinned_rate" boolean DEFAULT false NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"starts" timestamp with time zone[] DEFAULT '{}' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "flow_control_keys_limits_check" CHECK (coalesce("dispatch"."flow_control_keys"."parallelism", 1) >= 1 and coalesce("dispatch"."flow_control_keys"."rate", 1) >= 1 and "dispatch"."flow_control_keys"."period_ms" >= 1000)
);
--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "flow_control_key" text;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "flow_control_value" text;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "flow_active" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "flow_parked" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "messages_flow_active_idx" ON "dispatch"."messages" USING btree ("flow_control_key") WHERE "dispatch"."messages"."flow_active";--> statement-breakpoint
CREATE INDEX "messages_flow_parked_idx" ON "dispatch"."messages" USING btree ("flow_control_key","seq") WHERE "dispatch"."messages"."flow_parked";--> statement-breakpoint
CREATE INDEX "messages_flow_control_key_idx" ON "dispatch"."messages" USING btree ("flow_control_key") WHERE "dispatch"."messages"."flow_control_key" is not null;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD CONSTRAINT "messages_flow_parked_check" CHECK (not "dispatch"."messages"."flow_parked" or ("dispatch"."messages"."flow_control_key" is not null and "dispatch"."messages"."due_at" is null and "dispatch"."messages"."state" in ('CREATED','RETRY')));