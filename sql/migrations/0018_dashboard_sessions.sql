CREATE TABLE "dispatch"."dashboard_sessions" (
	"id_digest" "bytea" PRIMARY KEY NOT NULL,
	"token_digest" "bytea" NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dashboard_sessions_role_check" CHECK ("dispatch"."dashboard_sessions"."role" in ('full', 'readonly')),
	CONSTRAINT "dashboard_sessions_digest_check" CHECK (octet_length("dispatch"."dashboard_sessions"."id_digest") = 32 and octet_length("dispatch"."dashboard_sessions"."token_digest") = 32)
);
