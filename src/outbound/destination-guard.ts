/**
 * The SSRF guard's policy for one service: whether private networks are
 * allowed (DISPATCH_ALLOW_PRIVATE_NETWORKS; off by default, the embedded
 * database included), which URLs are Dispatch's own `/echo` (reachable on
 * loopback even with the guard on), and what a refusal reports. The HTTP
 * client enforces it at connect time; publishing refuses IP literals early.
 */
import { isIP } from "node:net";
import { isInternalAddress, RefusedDestinationError } from "./network-guard";

/** Told of each refusal with the address refused, which the stored error leaves out. */
export type RefusalListener = (host: string, address: string) => void;

export class DestinationGuard {
  /** Origins (lower case) whose `/echo` is this service's own. */
  private readonly echoOrigins: string[] = [];

  /**
   * @param allowPrivateNetworks true turns the guard off (every address may be reached)
   * @param onRefused told of each refusal (the service logs it at debug)
   */
  constructor(
    readonly allowPrivateNetworks: boolean,
    private readonly onRefused: RefusalListener = () => {},
  ) {}

  /**
   * Lets the guard through to this service's own `/echo` on `port`, at the
   * loopback names and at `publicUrl`'s origin (the URL the banner prints).
   * Only the path `/echo` is let through, never the API beside it.
   */
  allowOwnEcho(port: number, publicUrl: string | null): void {
    const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
    if (publicUrl !== null) origins.push(new URL(publicUrl).origin);
    for (const origin of origins) if (!this.echoOrigins.includes(origin.toLowerCase())) this.echoOrigins.push(origin.toLowerCase());
  }

  /** Whether `url` is this service's own `/echo` (a string comparison: it is asked for every attempt). */
  isOwnEcho(url: string): boolean {
    if (this.echoOrigins.length === 0) return false;
    return this.echoOrigins.some((origin) => {
      if (url.slice(0, origin.length).toLowerCase() !== origin || !url.startsWith("/echo", origin.length)) return false;
      const next = url[origin.length + "/echo".length];
      return next === undefined || next === "?" || next === "#";
    });
  }

  /**
   * `url`'s host when it is an IP literal the guard refuses (known before
   * any lookup, so publishing answers 400), else null; `url` is valid.
   */
  refusedLiteral(url: string): string | null {
    if (this.allowPrivateNetworks || this.isOwnEcho(url)) return null;
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
    return isIP(host) !== 0 && isInternalAddress(host) ? host : null;
  }

  /** The error for a refused connection to `host` at `address`, reported to the listener. */
  refuse(host: string, address: string): RefusedDestinationError {
    this.onRefused(host, address);
    return new RefusedDestinationError(host, address);
  }
}
