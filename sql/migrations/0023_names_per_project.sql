-- URL group names and deduplication keys are each project's: a group is keyed (project, name), an endpoint
-- (project, group_name, url) and refers to its group by both; a deduplication window is keyed (project, key).
ALTER TABLE "dispatch"."url_group_endpoints" DROP CONSTRAINT "url_group_endpoints_group_name_url_groups_name_fk";--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" DROP CONSTRAINT "url_group_endpoints_project_projects_name_fk";--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" DROP CONSTRAINT "url_group_endpoints_group_name_url_pk";--> statement-breakpoint
ALTER TABLE "dispatch"."url_groups" DROP CONSTRAINT "url_groups_pkey";--> statement-breakpoint
ALTER TABLE "dispatch"."deduplication_keys" DROP CONSTRAINT "deduplication_keys_pkey";--> statement-breakpoint
ALTER TABLE "dispatch"."deduplication_keys" ADD CONSTRAINT "deduplication_keys_project_key_pk" PRIMARY KEY("project","key");--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" ADD CONSTRAINT "url_group_endpoints_project_group_name_url_pk" PRIMARY KEY("project","group_name","url");--> statement-breakpoint
ALTER TABLE "dispatch"."url_groups" ADD CONSTRAINT "url_groups_project_name_pk" PRIMARY KEY("project","name");--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" ADD CONSTRAINT "url_group_endpoints_group_fk" FOREIGN KEY ("project","group_name") REFERENCES "dispatch"."url_groups"("project","name") ON DELETE cascade ON UPDATE no action;
