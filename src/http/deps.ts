/** What the HTTP layer is built from (`createApp(deps)`). */
import type { Config } from "../config";
import type { Sql } from "../db/client";

export interface AppDeps {
  config: Config;
  sql: Sql;
  /** Access tokens accepted on /v2. */
  tokens: string[];
  log: (message: string) => void;
}
