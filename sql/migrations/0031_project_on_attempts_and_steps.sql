ALTER TABLE "dispatch"."attempts" ADD COLUMN "project" text;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_steps" ADD COLUMN "project" text;