/**
 * What a dialect means to a receiver, in words a person reads where the
 * dialect is chosen (the banner, the Signing keys page, the Publish page and
 * the schedule form): the signature header it is signed in, and the default
 * backoff between its retries (retry-policy.ts).
 */
import { ISSUER, PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";
import { defaultBackoffMs } from "./retry-policy";

/** How many of the first waits the backoff is shown by. */
const WAITS_SHOWN = 4;

/** The dialects as a form's choice offers them, the compat one named for what verifies it. */
export const DIALECT_NAMES: Record<Dialect, string> = {
  upstash: "Upstash (hosted-service compatible)",
  svc: "Svc (native)",
};

/** The signature header a dialect's deliveries carry, and who verifies it. */
export function signatureOf(dialect: Dialect): string {
  const header = `${PREFIX[dialect]}Signature`;
  return dialect === "upstash"
    ? `${header} (iss ${ISSUER.upstash}): what @upstash/qstash's Receiver and the other official SDKs verify`
    : `${header} (iss ${ISSUER.svc}): verify it with the signing keys (docs/hosted-api.md §10)`;
}

/** The default waits before the first retries, e.g. "1 s, 7 s, 55 s, 7 min, …, at most 1 d". */
export function backoffOf(dialect: Dialect): string {
  const waits = Array.from({ length: WAITS_SHOWN }, (_, retried) => roughly(defaultBackoffMs(dialect, retried)));
  return `${waits.join(", ")}, …, at most 1 d`;
}

/** One line: the dialect's signature and its retries' default backoff. */
export function dialectSummary(dialect: Dialect): string {
  return `${signatureOf(dialect)}; retries after ${backoffOf(dialect)} (unless Retry-Delay says otherwise)`;
}

/** A wait rounded to its largest unit: 12182 ms → "12 s", 148413 ms → "2 min". */
function roughly(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
