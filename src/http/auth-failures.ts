/**
 * A per-address throttle of failed authentication: a 401 on the API (a
 * missing or unknown token) and a refused dashboard sign-in each count
 * against the client's address; past `limit` in a minute, every attempt to
 * authenticate from it answers 429 with `Retry-After` until the minute is
 * over, a good token included (else the answer would still tell a guess
 * apart). Kept in memory per process: it bounds guessing and the database
 * lookups unknown tokens cost, not a distributed attack.
 */
import type { Context } from "hono";
import { AppError } from "../domain/errors";
import { callerIp } from "./request";

const WINDOW_MS = 60_000;
/** Addresses followed at most; beyond, those whose minute is over go first, then the oldest. */
const MAX_ADDRESSES = 10_000;

interface Window {
  failures: number;
  endsAt: number;
}

export class AuthFailures {
  private readonly windows = new Map<string, Window>();

  /** @param limit failures an address may have in a minute; 0 turns the throttle off */
  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws a 429 with `Retry-After` when the client of `c` failed too often this minute. */
  check(c: Context): void {
    if (this.limit === 0) return;
    const window = this.windows.get(addressOf(c));
    if (window === undefined || window.failures < this.limit) return;
    const seconds = Math.ceil((window.endsAt - this.now()) / 1000);
    if (seconds <= 0) return;
    c.header("Retry-After", String(seconds));
    throw new AppError(429, `too many failed attempts to authenticate from this address; retry in ${seconds} s`);
  }

  /** Counts a failed attempt of the client of `c`. */
  failed(c: Context): void {
    if (this.limit === 0) return;
    const address = addressOf(c);
    const now = this.now();
    const window = this.windows.get(address);
    if (window !== undefined && window.endsAt > now) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= MAX_ADDRESSES) this.forget(now);
    this.windows.set(address, { failures: 1, endsAt: now + WINDOW_MS });
  }

  private forget(now: number): void {
    for (const [address, window] of this.windows) if (window.endsAt <= now) this.windows.delete(address);
    while (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value!);
  }
}

const addressOf = (c: Context) => callerIp(c) ?? "unknown";
