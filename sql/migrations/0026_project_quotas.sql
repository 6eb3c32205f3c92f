CREATE TABLE "dispatch"."project_usage" (
	"project" text NOT NULL,
	"day" date NOT NULL,
	"messages" integer NOT NULL,
	CONSTRAINT "project_usage_project_day_pk" PRIMARY KEY("project","day")
);
--> statement-breakpoint
ALTER TABLE "dispatch"."projects" ADD COLUMN "messages_per_day" integer;--> statement-breakpoint
ALTER TABLE "dispatch"."projects" ADD COLUMN "publishes_per_second" integer;--> statement-breakpoint
ALTER TABLE "dispatch"."project_usage" ADD CONSTRAINT "project_usage_project_projects_name_fk" FOREIGN KEY ("project") REFERENCES "dispatch"."projects"("name") ON DELETE cascade ON UPDATE no action;