/**
 * What an operator pins on a flow-control key (admin.ts `pinKey`), read from
 * text as the API's query (`POST /v2/flowControl/{key}/pin`) and the
 * dashboard's form give it: `parallelism` and `rate` (whole numbers of at
 * least 1), `period` (seconds, or a duration such as `1m`, from 1 s to 7
 * days). An empty or absent field pins nothing.
 */
import { parseDuration } from "../duration";
import { badRequest } from "../errors";
import type { FlowControlLimits } from "./limits";

const MAX_PERIOD_MS = 7 * 86_400_000;

/** The limits to pin; a 400 naming the field for a value out of range. */
export function parsePin(text: { parallelism?: string | null; rate?: string | null; period?: string | null }): Partial<FlowControlLimits> {
  const pin: Partial<FlowControlLimits> = {};
  const parallelism = positive(text.parallelism, "parallelism");
  const rate = positive(text.rate, "rate");
  const periodMs = period(text.period);
  if (parallelism !== undefined) pin.parallelism = parallelism;
  if (rate !== undefined) pin.rate = rate;
  if (periodMs !== undefined) pin.periodMs = periodMs;
  return pin;
}

function positive(text: string | null | undefined, name: string): number | undefined {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return undefined;
  if (!/^\d{1,9}$/.test(trimmed) || Number(trimmed) < 1) throw badRequest(`${name} must be a whole number of at least 1, got "${trimmed}"`);
  return Number(trimmed);
}

function period(text: string | null | undefined): number | undefined {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return undefined;
  const ms = parseDuration(trimmed);
  if (ms === null || ms < 1000 || ms > MAX_PERIOD_MS) throw badRequest(`period must be from 1 to 604800 seconds, got "${trimmed}"`);
  return ms;
}
