/** What every route that publishes (the API and the dashboard) makes messages with. */
import { llmUrl } from "../config/config";
import type { PublishSettings } from "../domain/publish/prepare";
import { messageSettings } from "../domain/publish/options";
import type { AppDeps } from "./deps";

/** The publish settings of `deps`: configuration's limits and LLM URL, and the service's SSRF guard. */
export function publishSettings(deps: Pick<AppDeps, "config" | "guard">): PublishSettings {
  return { ...messageSettings(deps.config), llmUrl: llmUrl(deps.config), guard: deps.guard };
}
