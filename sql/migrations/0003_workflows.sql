CREATE TABLE "dispatch"."workflow_notifications" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."workflow_notifications_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"event_id" text NOT NULL,
	"body" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dispatch"."workflow_runs" (
	"pk" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."workflow_runs_pk_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"workflow_url" text NOT NULL,
	"dialect" text NOT NULL,
	"state" text DEFAULT 'RUN_STARTED' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"config" jsonb NOT NULL,
	"user_headers" jsonb NOT NULL,
	"labels" text[],
	"feature_set" text,
	"caller_ip" text,
	"invoker" jsonb,
	"response" text,
	"dlq_id" text,
	"failure_callback_message_id" text,
	"failure_callback_state" text,
	"failure" jsonb,
	"failure_response" jsonb,
	CONSTRAINT "workflow_runs_state_check" CHECK ("dispatch"."workflow_runs"."state" in ('RUN_STARTED','RUN_SUCCESS','RUN_FAILED','RUN_CANCELED')),
	CONSTRAINT "workflow_runs_completed_check" CHECK (("dispatch"."workflow_runs"."state" = 'RUN_STARTED') = ("dispatch"."workflow_runs"."completed_at" is null))
);
--> statement-breakpoint
CREATE TABLE "dispatch"."workflow_steps" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."workflow_steps_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_pk" bigint NOT NULL,
	"message_id" text NOT NULL,
	"call_type" text NOT NULL,
	"body" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dispatch"."workflow_waiters" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."workflow_waiters_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_pk" bigint NOT NULL,
	"event_id" text NOT NULL,
	"url" text NOT NULL,
	"headers" jsonb NOT NULL,
	"timeout_url" text NOT NULL,
	"timeout_headers" jsonb NOT NULL,
	"timeout" text NOT NULL,
	"step" jsonb NOT NULL,
	"deadline" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "workflow_run_pk" bigint;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "workflow_call_type" text;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_steps" ADD CONSTRAINT "workflow_steps_run_pk_workflow_runs_pk_fk" FOREIGN KEY ("run_pk") REFERENCES "dispatch"."workflow_runs"("pk") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_waiters" ADD CONSTRAINT "workflow_waiters_run_pk_workflow_runs_pk_fk" FOREIGN KEY ("run_pk") REFERENCES "dispatch"."workflow_runs"("pk") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workflow_notifications_idx" ON "dispatch"."workflow_notifications" USING btree ("run_id","event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_runs_active_idx" ON "dispatch"."workflow_runs" USING btree ("run_id") WHERE "dispatch"."workflow_runs"."state" = 'RUN_STARTED';--> statement-breakpoint
CREATE INDEX "workflow_runs_run_id_idx" ON "dispatch"."workflow_runs" USING btree ("run_id","created_at");--> statement-breakpoint
CREATE INDEX "workflow_runs_created_at_idx" ON "dispatch"."workflow_runs" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "workflow_steps_run_idx" ON "dispatch"."workflow_steps" USING btree ("run_pk","seq");--> statement-breakpoint
CREATE INDEX "workflow_steps_message_idx" ON "dispatch"."workflow_steps" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "workflow_waiters_event_idx" ON "dispatch"."workflow_waiters" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "workflow_waiters_run_idx" ON "dispatch"."workflow_waiters" USING btree ("run_pk");--> statement-breakpoint
CREATE INDEX "messages_workflow_run_pk_idx" ON "dispatch"."messages" USING btree ("workflow_run_pk") WHERE "dispatch"."messages"."workflow_run_pk" is not null;