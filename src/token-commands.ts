/**
 * `dispatch token create`, `list` and `revoke`: access tokens made from the
 * command line (domain/access-tokens/), accepted beside the configured or
 * generated ones. Nothing here prints a token but the one just created: the
 * list names configured tokens by their variable and stored ones by name.
 */
import type { Config } from "./config/config";
import type { Sql } from "./db/client";
import { createAccessToken, listAccessTokens, revokeAccessToken } from "./domain/access-tokens/access-tokens";
import { REFRESH_INTERVAL_MS } from "./domain/access-tokens/token-set";
import { hasGeneratedAccessToken } from "./domain/secrets/stored-secrets";

/** Creates a token and says so, with the token itself: the only time it is shown. */
export async function createToken(sql: Sql, request: { name: string | null; readOnly: boolean }): Promise<string> {
  const { name, token } = await sql.begin((tx) => createAccessToken(tx, request));
  return [
    `created access token ${name} (${request.readOnly ? "read-only" : "full"}):`,
    token,
    "It will not be shown again: keep it now. Running API processes accept it at once.",
  ].join("\n");
}

/** One line per token accepted, configured ones first; never a token. */
export async function listTokens(sql: Sql, config: Config): Promise<string> {
  const configured = [
    ...config.tokens.map((_, index) => `DISPATCH_TOKEN #${index + 1} (full, from configuration)`),
    ...config.readonlyTokens.map((_, index) => `DISPATCH_READONLY_TOKEN #${index + 1} (read-only, from configuration)`),
    ...(config.metricsToken ? ["DISPATCH_METRICS_TOKEN (GET /metrics only, from configuration)"] : []),
  ];
  const generated = config.tokens.length === 0 && (await hasGeneratedAccessToken(sql))
    ? ["generated (full, made on first start; dispatch token prints it)"]
    : [];
  const stored = (await listAccessTokens(sql)).map(
    (token) => `${token.name} (${token.readOnly ? "read-only" : "full"}, created ${token.createdAt.toISOString()})`,
  );
  const lines = [...configured, ...generated, ...stored];
  return lines.length > 0 ? lines.join("\n") : "no access tokens yet (dispatch start or dispatch token makes one)";
}

/** Revokes the stored token `name`. */
export async function revokeToken(sql: Sql, name: string): Promise<string> {
  await sql.begin((tx) => revokeAccessToken(tx, name));
  return `revoked access token ${name}: running API processes refuse it at once (within ${REFRESH_INTERVAL_MS / 1000} s at most)`;
}
