CREATE TABLE "dispatch"."projects" (
	"name" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- What the database held before projects existed belongs to the default project (db/vocabulary.ts DEFAULT_PROJECT).
INSERT INTO "dispatch"."projects" ("name") VALUES ('default');--> statement-breakpoint
ALTER TABLE "dispatch"."access_tokens" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."attempts" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."deduplication_keys" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."dlq" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."flow_control_keys" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."queues" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."schedules" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."url_groups" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_notifications" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_runs" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."workflow_waiters" ADD COLUMN "project" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."access_tokens" ADD CONSTRAINT "access_tokens_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."flow_control_keys" ADD CONSTRAINT "flow_control_keys_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."queues" ADD CONSTRAINT "queues_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."schedules" ADD CONSTRAINT "schedules_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" ADD CONSTRAINT "url_group_endpoints_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "dispatch"."url_groups" ADD CONSTRAINT "url_groups_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;