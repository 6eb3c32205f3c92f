/** The app's routes, from a router built only to list them (its database is never called). */
import type { RouterRoute } from "hono/types";
import { loadConfig } from "../../src/config/config";
import { createApp } from "../../src/http/server/app";

/** Every route and middleware the app registers, in order. */
export function appRoutes(): RouterRoute[] {
  const deps = { config: loadConfig({}), sql: null as never, availability: null as never, redactor: null as never, metrics: null as never, tracing: null as never, guard: null as never, secretBox: null as never, signingKeys: { configured: null, box: null as never } };
  return createApp({ ...deps, acceptedTokens: null as never, log: () => {} }).routes;
}
