/**
 * Destinations (a Dispatch extension, not in the hosted API): each origin
 * Dispatch delivers to, its circuit breaker and its health; list them, read
 * one, open or close a circuit by hand (domain/destinations/).
 */
import { Hono } from "hono";
import * as v from "valibot";
import { AppError } from "../../domain/errors";
import { circuitSettings, closeCircuitByHand, openCircuitByHand } from "../../domain/destinations/circuit";
import { messageSettings } from "../../domain/publish/options";
import {
  type Destination,
  findDestination,
  listDestinations,
  parseCircuit,
  parseDestination,
} from "../../domain/destinations/destinations";
import { CIRCUIT_STATES } from "../../db/vocabulary";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { integerParam, singleParam } from "../query";

const EXTENSION = "A Dispatch extension, not in the hosted API.";
const MAX_COUNT = 1000;
const millis = (what: string) => v.nullable(v.pipe(v.number(), v.description(`${what} (Unix milliseconds), or null.`)));

const DestinationSchema = v.object({
  destination: v.pipe(v.string(), v.description("The origin messages are delivered to: scheme://host[:port].")),
  circuit: v.pipe(v.picklist(CIRCUIT_STATES), v.description("CLOSED: attempts flow. OPEN: its messages wait, spending no retries, until a probe. PROBING: one attempt decides. GAVE_UP: open past DISPATCH_CIRCUIT_GIVE_UP_AFTER, its messages run out their own retries.")),
  openedByHand: v.boolean(),
  openedAt: millis("When its circuit opened"),
  openReason: v.nullable(v.string()),
  probeAt: millis("When an OPEN circuit's next probe may start"),
  giveUpAt: millis("When an OPEN or PROBING circuit gives up unless a probe closes it first"),
  heldUntil: millis("Until when a 429's Retry-After holds it"),
  attempts: v.pipe(v.number(), v.description("Attempts in the last minute (the breaker's window: 30 to 60 s).")),
  failures: v.pipe(v.number(), v.description("Of those, failures that count against the destination: timeouts, refused or reset connections, 5xx, 429.")),
  errorRate: v.pipe(v.number(), v.description("failures / attempts (0 without attempts).")),
  failureKinds: v.record(v.string(), v.number()),
  averageMs: v.nullable(v.pipe(v.number(), v.description("Average time to answer in the window, ms."))),
  lastError: v.nullable(v.string()),
  lastStatus: v.nullable(v.number()),
  lastErrorAt: millis("The last failure"),
  lastSuccessAt: millis("The last 2xx"),
  lastAttemptAt: millis("The last attempt"),
  inFlight: v.pipe(v.number(), v.description("Requests to it in flight now, in every worker.")),
  due: v.pipe(v.number(), v.description("Its messages due now on the work list.")),
  waiting: v.pipe(v.number(), v.description("Its messages waiting in its line: its circuit is open or held, or the workers hold its share of their slots.")),
});

const PATH = { destination: "An origin (`https://example.com`, `http://127.0.0.1:8080`) as is or percent-encoded; a URL's path is ignored." };

const LIST = operation({
  summary: "List destinations",
  description: `${EXTENSION} Every origin Dispatch attempted (or whose circuit was set by hand), by name, with its circuit and health.`,
  tag: "Destinations",
  shared: true,
  access: "read",
  query: {
    circuit: `Only those whose circuit is ${CIRCUIT_STATES.join(", ")}.`,
    cursor: "The cursor of the previous page.",
    count: { description: `At most this many (1-${MAX_COUNT}, default 100).`, type: "integer" },
  },
  responses: {
    200: { description: "A page of destinations.", json: v.object({ destinations: v.array(DestinationSchema), cursor: v.optional(v.string()) }) },
  },
});
const GET = operation({
  summary: "Get a destination",
  description: EXTENSION,
  tag: "Destinations",
  shared: true,
  access: "read",
  path: PATH,
  responses: { 200: { description: "The destination.", json: DestinationSchema } },
  errors: [404],
});
const OPEN = operation({
  summary: "Open a destination's circuit by hand",
  description: `${EXTENSION} Its messages wait, spending no retries, until the circuit is closed by hand: no probe, no give-up. Messages in flight finish.`,
  tag: "Destinations",
  shared: true,
  access: "full-token",
  path: PATH,
  responses: { 200: { description: "The destination, its circuit open.", json: DestinationSchema } },
});
const CLOSE = operation({
  summary: "Close a destination's circuit by hand",
  description: `${EXTENSION} Whatever its state (and a 429's hold): its waiting messages are attempted again, and its failures are counted from zero.`,
  tag: "Destinations",
  shared: true,
  access: "full-token",
  path: PATH,
  responses: { 200: { description: "The destination, its circuit closed.", json: DestinationSchema } },
  errors: [404],
});

/** Routes of the destination resource. */
export function destinationRoutes(deps: AppDeps) {
  const { sql } = deps;
  const giveUpAfterMs = deps.config.circuitGiveUpAfterMs;
  const settings = circuitSettings(deps.config, messageSettings(deps.config));
  return new Hono()
    .get("/", LIST.describe, async (c) => {
      const params = LIST.query(c);
      const filter = { circuit: parseCircuit(singleParam(params, "circuit") ?? undefined) };
      const page = { cursor: singleParam(params, "cursor"), count: integerParam(params, "count", 1, MAX_COUNT, 100) };
      const { items, cursor } = await listDestinations(sql, filter, page, giveUpAfterMs);
      return c.json({ destinations: items.map(destinationJson), ...(cursor !== null && { cursor }) });
    })
    .post("/:destination{.+}/open", OPEN.describe, async (c) => {
      const destination = parseDestination(c.req.param("destination"));
      const change = await sql.begin((tx) => openCircuitByHand(tx, destination, settings));
      if (change !== null) deps.log(`destination ${destination}: circuit OPEN (opened by hand)`, { level: "info", destination });
      return c.json(destinationJson((await findDestination(sql, destination, giveUpAfterMs))!));
    })
    .post("/:destination{.+}/close", CLOSE.describe, async (c) => {
      const destination = parseDestination(c.req.param("destination"));
      const change = await sql.begin((tx) => closeCircuitByHand(tx, destination, settings));
      if (change !== null) deps.log(`destination ${destination}: circuit CLOSED (closed by hand)`, { level: "info", destination });
      return c.json(destinationJson(await found(deps, destination)));
    })
    .get("/:destination{.+}", GET.describe, async (c) => c.json(destinationJson(await found(deps, parseDestination(c.req.param("destination"))))));
}

async function found(deps: AppDeps, destination: string): Promise<Destination> {
  const row = await findDestination(deps.sql, destination, deps.config.circuitGiveUpAfterMs);
  if (row === null) throw new AppError(404, `destination ${destination} not found: nothing was attempted to it`);
  return row;
}

/** A destination as the API answers it. */
export function destinationJson(d: Destination) {
  const time = (date: Date | null) => date?.getTime() ?? null;
  return {
    destination: d.destination,
    circuit: d.circuit,
    openedByHand: d.openedByHand,
    openedAt: time(d.openedAt),
    openReason: d.openReason,
    probeAt: time(d.probeAt),
    giveUpAt: time(d.giveUpAt),
    heldUntil: time(d.heldUntil),
    attempts: d.attempts,
    failures: d.failures,
    errorRate: d.attempts === 0 ? 0 : d.failures / d.attempts,
    failureKinds: d.failureKinds,
    averageMs: d.averageMs,
    lastError: d.lastError,
    lastStatus: d.lastStatus,
    lastErrorAt: time(d.lastErrorAt),
    lastSuccessAt: time(d.lastSuccessAt),
    lastAttemptAt: time(d.lastAttemptAt),
    inFlight: d.inFlight,
    due: d.due,
    waiting: d.waiting,
  };
}
