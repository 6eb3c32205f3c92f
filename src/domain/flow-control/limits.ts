/**
 * A flow-control configuration (docs/hosted-api.md §11): `Flow-Control-Key`
 * names the key, `Flow-Control-Value` lists `parallelism=N`, `rate=N` and
 * `period=<duration>` (default 1s, at most a week), separated by commas. A
 * key without a limit (an empty value, or `=0`, as the Python client sends
 * for a limit it was not given) groups its messages, which may be paused and
 * listed, without limiting them.
 */
import { parseDuration } from "../duration";
import { badRequest } from "../errors";

/** The limits of one key; null means unlimited. */
export interface FlowControlLimits {
  /** Most deliveries of the key in flight at once. */
  parallelism: number | null;
  /** Most deliveries started in any `periodMs`. */
  rate: number | null;
  periodMs: number;
}

/** A key and its limits, as a message carries them. */
export interface FlowControl {
  key: string;
  /** The value as normalised: `parallelism=2, rate=10, period=1m`. */
  value: string;
  limits: FlowControlLimits;
}

const KEY = /^[A-Za-z0-9._-]{1,200}$/;
const DEFAULT_PERIOD_MS = 1000;
const MAX_PERIOD_MS = 7 * 86_400_000;

/** Parses the two headers (`p` names them in errors); null when no key is given. */
export function parseFlowControl(key: string | undefined, value: string | undefined, p: string): FlowControl | null {
  if (key === undefined || key.trim() === "") {
    if (value !== undefined && value.trim() !== "") throw badRequest(`${p}flow-control-value needs ${p}flow-control-key`);
    return null;
  }
  if (!KEY.test(key.trim())) throw badRequest(`${p}flow-control-key may hold only letters, digits, ".", "_" and "-"`);
  const parts = (value ?? "").split(",").map((part) => part.trim()).filter(Boolean);
  const limits = parseLimits(parts, `${p}flow-control-value`);
  return { key: key.trim(), value: parts.join(", "), limits };
}

function parseLimits(parts: string[], header: string): FlowControlLimits {
  const usage = `${header} must list parallelism=N and/or rate=N (with an optional period=<duration>)`;
  const limits: FlowControlLimits = { parallelism: null, rate: null, periodMs: DEFAULT_PERIOD_MS };
  const seen = new Set<string>();
  for (const part of parts) {
    const [name, text = ""] = part.split("=", 2).map((side) => side.trim()) as [string, string?];
    if (seen.has(name)) throw badRequest(`${header} gives ${name} twice`);
    seen.add(name);
    if (name === "parallelism" || name === "rate") limits[name] = limit(text, `${header} ${name}`);
    else if (name === "period") limits.periodMs = period(text, header);
    else throw badRequest(usage);
  }
  return limits;
}

/** A limit: a whole number, 0 meaning none. */
function limit(text: string, what: string): number | null {
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${what} must be a whole number, got "${text}"`);
  return Number(text) === 0 ? null : Number(text);
}

function period(text: string, header: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms < 1000 || ms > MAX_PERIOD_MS) {
    throw badRequest(`${header} period must be a duration from 1s to 7d such as 10s or 1m, got "${text}"`);
  }
  return ms;
}
