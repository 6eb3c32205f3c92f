/**
 * `dispatch token create`, `list` and `revoke`: access tokens made from the
 * command line (domain/access-tokens/), accepted beside the configured or
 * generated ones. Nothing here prints a token but the one just created: the
 * list names configured tokens by their variable and stored ones by name,
 * each with when it was last used (to the minute: domain/access-tokens/token-uses.ts).
 */
import type { Config } from "./config/config";
import type { Sql } from "./db/client";
import { DEFAULT_PROJECT } from "./db/vocabulary";
import { createAccessToken, listAccessTokens, revokeAccessToken, tokenDigest } from "./domain/access-tokens/access-tokens";
import { REFRESH_INTERVAL_MS } from "./domain/access-tokens/token-set";
import { lastTokenUses } from "./domain/access-tokens/token-uses";
import { relativeTime } from "./domain/relative-time";
import type { SecretBox } from "./domain/secrets/secret-box";
import { hasGeneratedAccessToken, readSecret } from "./domain/secrets/stored-secrets";

/** Creates a token and says so, with the token itself: the only time it is shown. */
export async function createToken(sql: Sql, request: { name: string | null; readOnly: boolean; project: string }): Promise<string> {
  const { name, token } = await sql.begin((tx) => createAccessToken(tx, request));
  return [
    `created access token ${name} (${request.readOnly ? "read-only" : "full"}${ofProject(request.project)}):`,
    token,
    "It will not be shown again: keep it now. Running API processes accept it at once.",
  ].join("\n");
}

/** One line per token accepted, configured ones first, each with its last use; never a token. */
export async function listTokens(sql: Sql, config: Config, box: SecretBox): Promise<string> {
  const configured: { label: string; digest: Buffer | null }[] = [
    ...config.tokens.map((token, index) => ({ label: `DISPATCH_TOKEN #${index + 1} (full, from configuration`, digest: tokenDigest(token) })),
    ...config.readonlyTokens.map((token, index) => ({
      label: `DISPATCH_READONLY_TOKEN #${index + 1} (read-only, from configuration`,
      digest: tokenDigest(token),
    })),
    ...(config.metricsToken ? [{ label: "DISPATCH_METRICS_TOKEN (GET /metrics only, from configuration", digest: tokenDigest(config.metricsToken) }] : []),
  ];
  if (config.tokens.length === 0 && (await hasGeneratedAccessToken(sql))) {
    configured.push({ label: "generated (full, made on first start; dispatch token prints it", digest: await generatedDigest(sql, box) });
  }
  const uses = await lastTokenUses(sql, configured.flatMap(({ digest }) => (digest === null ? [] : [digest])));
  const now = Date.now();
  const named = configured.map(({ label, digest }) => {
    const use = digest === null ? "last use unknown: the token is sealed, set DISPATCH_SECRET" : lastUsed(uses.get(digest.toString("base64")) ?? null, now);
    return `${label}; ${use})`;
  });
  const stored = (await listAccessTokens(sql)).map(
    (token) =>
      `${token.name} (${token.readOnly ? "read-only" : "full"}${ofProject(token.project)}, created ${token.createdAt.toISOString()}; ${lastUsed(token.lastUsedAt, now)})`,
  );
  const lines = [...named, ...stored];
  return lines.length > 0 ? lines.join("\n") : "no access tokens yet (dispatch start or dispatch token makes one)";
}

/** The digest of the generated token, or null when this process cannot open it (sealed under a DISPATCH_SECRET it lacks). */
async function generatedDigest(sql: Sql, box: SecretBox): Promise<Buffer | null> {
  try {
    return tokenDigest(await readSecret<string>(sql, box, "access_token"));
  } catch {
    return null;
  }
}

/** ", project acme" for a token of a project other than the default (a single team never sees the word). */
const ofProject = (project: string) => (project === DEFAULT_PROJECT ? "" : `, project ${project}`);

/** "last used 3 min ago (2026-01-31T09:30:00.000Z)", or "last used never". */
const lastUsed = (at: Date | null, now: number) =>
  at === null ? "last used never" : `last used ${relativeTime(at.getTime(), now)} (${at.toISOString()})`;

/** Revokes the stored token `name`. */
export async function revokeToken(sql: Sql, name: string): Promise<string> {
  await sql.begin((tx) => revokeAccessToken(tx, name));
  return `revoked access token ${name}: running API processes refuse it at once (within ${REFRESH_INTERVAL_MS / 1000} s at most)`;
}
