/** What a page handler is built from, and the frame it renders in. */
import type { Context } from "hono";
import type { AppDeps } from "../deps";
import type { AssetPaths } from "./assets";
import type { DashboardEnv } from "./env";
import type { Frame } from "./layout";

/** The API's dependencies plus the dashboard's asset paths. */
export interface PageDeps extends AppDeps {
  assets: AssetPaths;
}

/** The frame of a signed-in page. */
export const frameOf = (deps: PageDeps, c: Context<DashboardEnv>): Frame => ({ assets: deps.assets, viewer: c.get("viewer") });

/** The clock pages show times against (the service's, which tests may move). */
export const nowOf = (deps: PageDeps) => deps.now?.() ?? Date.now();
