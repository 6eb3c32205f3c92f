/**
 * The database as this process reaches it: where application queries go,
 * and the direct connection that migrations, LISTEN and graphile-worker need
 * (README "Managed Postgres"). With one URL both are the same server; with
 * DATABASE_DIRECT_URL the app URL may be a transaction-mode pooler, on which
 * the app pool prepares no statements on the server.
 */
import { parseConnectionUrl } from "./settings";
import { type Endpoint, resolveEndpoint } from "./transport";

/** The URLs of one database, resolved. */
export interface DatabaseEndpoints {
  /** Where application queries go (DATABASE_URL): the server, or a transaction-mode pooler when `pooled`. */
  app: Endpoint;
  /** Migrations, LISTEN and graphile-worker: a session with the server (DATABASE_DIRECT_URL, or the app URL). */
  direct: Endpoint;
  /** The app URL may be a transaction-mode pooler: no server-side prepared statements on it. */
  pooled: boolean;
}

/** A URL and the variable it came from, named in every message about it. */
export interface DatabaseUrl {
  url: string;
  source: string;
}

/** Reads and resolves the app URL and the direct one (the app URL when none is given). */
export async function resolveEndpoints(app: DatabaseUrl, direct: DatabaseUrl | null): Promise<DatabaseEndpoints> {
  const appEndpoint = await resolveEndpoint(parseConnectionUrl(app.url, app.source));
  const directEndpoint = direct === null ? appEndpoint : await resolveEndpoint(parseConnectionUrl(direct.url, direct.source));
  return { app: appEndpoint, direct: directEndpoint, pooled: direct !== null };
}
