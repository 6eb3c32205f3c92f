DROP INDEX "dispatch"."dlq_created_at_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_created_at_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_flow_active_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_flow_parked_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_flow_control_key_idx";--> statement-breakpoint
DROP INDEX "dispatch"."workflow_notifications_idx";--> statement-breakpoint
DROP INDEX "dispatch"."workflow_runs_active_idx";--> statement-breakpoint
DROP INDEX "dispatch"."workflow_runs_run_id_idx";--> statement-breakpoint
DROP INDEX "dispatch"."workflow_runs_created_at_idx";--> statement-breakpoint
DROP INDEX "dispatch"."workflow_waiters_event_idx";--> statement-breakpoint
ALTER TABLE "dispatch"."flow_control_keys" DROP CONSTRAINT "flow_control_keys_pkey";--> statement-breakpoint
ALTER TABLE "dispatch"."schedules" DROP CONSTRAINT "schedules_pkey";--> statement-breakpoint
ALTER TABLE "dispatch"."flow_control_keys" ADD CONSTRAINT "flow_control_keys_project_key_pk" PRIMARY KEY("project","key");--> statement-breakpoint
ALTER TABLE "dispatch"."schedules" ADD CONSTRAINT "schedules_project_id_pk" PRIMARY KEY("project","id");--> statement-breakpoint
CREATE INDEX "dlq_project_created_at_idx" ON "dispatch"."dlq" USING btree ("project","created_at");--> statement-breakpoint
CREATE INDEX "messages_project_created_at_idx" ON "dispatch"."messages" USING btree ("project","created_at");--> statement-breakpoint
CREATE INDEX "messages_flow_active_idx" ON "dispatch"."messages" USING btree ("project","flow_control_key") WHERE "dispatch"."messages"."flow_active";--> statement-breakpoint
CREATE INDEX "messages_flow_parked_idx" ON "dispatch"."messages" USING btree ("project","flow_control_key","seq") WHERE "dispatch"."messages"."flow_parked";--> statement-breakpoint
CREATE INDEX "messages_flow_control_key_idx" ON "dispatch"."messages" USING btree ("project","flow_control_key") WHERE "dispatch"."messages"."flow_control_key" is not null;--> statement-breakpoint
CREATE INDEX "workflow_notifications_idx" ON "dispatch"."workflow_notifications" USING btree ("project","run_id","event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_runs_active_idx" ON "dispatch"."workflow_runs" USING btree ("project","run_id") WHERE "dispatch"."workflow_runs"."state" = 'RUN_STARTED';--> statement-breakpoint
CREATE INDEX "workflow_runs_run_id_idx" ON "dispatch"."workflow_runs" USING btree ("project","run_id","created_at");--> statement-breakpoint
CREATE INDEX "workflow_runs_created_at_idx" ON "dispatch"."workflow_runs" USING btree ("project","created_at");--> statement-breakpoint
CREATE INDEX "workflow_waiters_event_idx" ON "dispatch"."workflow_waiters" USING btree ("project","event_id");--> statement-breakpoint
ALTER TABLE "dispatch"."attempts" DROP COLUMN "project";