/**
 * Destinations by name, 50 a page, filtered by circuit or to one destination
 * (domain/destinations/destinations.ts); open and close a circuit by hand
 * (domain/destinations/circuit.ts), as the API's `/v2/destinations` routes.
 * An action comes back to the page it was taken on.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { AppError } from "../../../../domain/errors";
import { circuitSettings, closeCircuitByHand, openCircuitByHand } from "../../../../domain/destinations/circuit";
import { type Destination, findDestination, listDestinations, parseCircuit, parseDestination } from "../../../../domain/destinations/destinations";
import type { PageOf } from "../../../../domain/paging";
import { messageSettings } from "../../../../domain/publish/options";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { currentUrl, nowOf } from "../../kit/page";
import { linkTo, pageParams } from "../../kit/params";
import { DESTINATIONS_PATH } from "../../kit/destination-link";
import { DestinationsPage, type DestinationsPlace } from "./destinations-page";

/** What each action does, how the log says it, and the notice it ends with (the second when nothing changed). */
const ACTIONS = {
  open: { change: openCircuitByHand, logged: "OPEN (opened by hand)", done: ["circuit-opened", "circuit-already-open"] },
  close: { change: closeCircuitByHand, logged: "CLOSED (closed by hand)", done: ["circuit-closed", "circuit-already-closed"] },
} as const;

/** Destinations are every project's: the default project's viewers (the operator's) see and change them. */
const operatorOnly: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (!c.get("viewer").operator) throw new AppError(403, "destinations are shared by every project: only the default project's tokens see them");
  await next();
};

/** `GET /dashboard/destinations`, `POST /dashboard/destinations/:destination/open|close`. */
export function destinationRoutes(deps: AppDeps) {
  const giveUpAfterMs = deps.config.circuitGiveUpAfterMs;
  const settings = circuitSettings(deps.config, messageSettings(deps.config));
  /** The page at `place`: the one destination it names, else a page by name. */
  const pageAt = async ({ circuit, destination, after }: DestinationsPlace): Promise<PageOf<Destination>> => {
    if (destination === null) return listDestinations(deps.sql, { circuit }, { cursor: after, count: BY_NAME_PAGE_SIZE }, giveUpAfterMs);
    const found = await findDestination(deps.sql, destination, giveUpAfterMs);
    return { items: found !== null && (circuit === null || found.circuit === circuit) ? [found] : [], cursor: null };
  };
  /** `POST :destination/<action>`: changes the circuit in a transaction, logs it as the API does, and goes back to the page. */
  const circuitAction = (action: keyof typeof ACTIONS) => async (c: Context<DashboardEnv>) => {
    const destination = parseDestination(c.req.param("destination")!);
    const { change, logged, done } = ACTIONS[action];
    const changed = await deps.sql.begin((tx) => change(tx, destination, settings));
    if (changed !== null) deps.log(`destination ${destination}: circuit ${logged}`, { level: "info", destination });
    return doneRedirect(c, linkTo(DESTINATIONS_PATH, placeOf(c.get("form"))), done[changed === null ? 1 : 0], destination);
  };
  return new Hono<DashboardEnv>()
    .use("/destinations", operatorOnly)
    .use("/destinations/*", operatorOnly)
    .get("/destinations", async (c) => {
      const params = pageParams(c, ["circuit", "destination", "after", ...NOTICE_PARAMS]);
      const destination = singleParam(params, "destination");
      const place: DestinationsPlace = {
        circuit: parseCircuit(singleParam(params, "circuit") ?? undefined),
        destination: destination === null ? null : parseDestination(destination),
        after: singleParam(params, "after"),
      };
      const props = { page: await pageAt(place), place, now: nowOf(deps), viewer: c.get("viewer"), self: currentUrl(c) };
      return c.render(<DestinationsPage {...props} />, { title: "Destinations", section: "destinations" });
    })
    .post("/destinations/:destination/open", circuitAction("open"))
    .post("/destinations/:destination/close", circuitAction("close"));
}

/** The page an action's form came from (its `placeFields`). */
const placeOf = (form: Map<string, string>) => ({ circuit: form.get("circuit"), destination: form.get("destination"), after: form.get("after") });
