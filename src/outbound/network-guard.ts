/**
 * Which addresses a public webhook sender may reach: global unicast only.
 * IPv4 by a deny-list of the special-purpose registry's non-global blocks;
 * IPv6 by an allow-list (2000::/3) less its special-purpose blocks, with the
 * forms that carry an IPv4 address inside (mapped, translated, compatible,
 * NAT64, 6to4) judged by that IPv4 address.
 */
import { BlockList, isIP } from "node:net";

/** IPv4 blocks that are not globally reachable unicast (IANA IPv4 special-purpose registry, RFC 6890). */
const INTERNAL_V4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
  ["255.255.255.255", 32],
];

/** Global unicast IPv6 (RFC 4291 §2.4): everything outside it is refused, unless it embeds an IPv4 address. */
const GLOBAL_V6: ReadonlyArray<readonly [string, number]> = [["2000::", 3]];

/**
 * Special-purpose blocks inside 2000::/3: IETF protocol assignments (Teredo,
 * benchmarking, ORCHID, ...: 2001::/23), documentation (2001:db8::/32,
 * 3fff::/20). 6to4 (2002::/16) is judged by the IPv4 address it carries.
 */
const SPECIAL_V6: ReadonlyArray<readonly [string, number]> = [
  ["2001::", 23],
  ["2001:db8::", 32],
  ["3fff::", 20],
];

/** IPv6 prefixes whose low 32 bits carry an IPv4 address: mapped, translated (SIIT), compatible, NAT64. */
const LOW_V4: ReadonlyArray<readonly [string, number]> = [
  ["::ffff:0:0", 96],
  ["::ffff:0:0:0", 96],
  ["::", 96],
  ["64:ff9b::", 96],
];

/** 6to4 (RFC 3056): bits 16-47 carry the IPv4 address of the site. */
const SIX_TO_FOUR: ReadonlyArray<readonly [string, number]> = [["2002::", 16]];

function buildList(family: "ipv4" | "ipv6", ranges: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

const internalV4 = buildList("ipv4", INTERNAL_V4);
const globalV6 = buildList("ipv6", GLOBAL_V6);
const specialV6 = buildList("ipv6", SPECIAL_V6);
const lowV4 = buildList("ipv6", LOW_V4);
const sixToFour = buildList("ipv6", SIX_TO_FOUR);

/** The eight 16-bit groups of an IPv6 address, from the WHATWG URL canonical (hex) form with `::` expanded. */
function groupsOf(ipv6: string): number[] {
  const canonical = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split("::") as [string, string | undefined];
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill("0");
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16));
}

/** Two 16-bit groups as dotted IPv4. */
function dotted(hi: number, lo: number): string {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

function isInternalIPv6(address: string): boolean {
  if (lowV4.check(address, "ipv6")) {
    const groups = groupsOf(address);
    return internalV4.check(dotted(groups[6]!, groups[7]!), "ipv4");
  }
  if (sixToFour.check(address, "ipv6")) {
    const groups = groupsOf(address);
    return internalV4.check(dotted(groups[1]!, groups[2]!), "ipv4");
  }
  return !globalV6.check(address, "ipv6") || specialV6.check(address, "ipv6");
}

/**
 * True when `address` must not be reached by a public webhook sender: any
 * address that is not global unicast (private, loopback, link-local, CGNAT,
 * documentation, benchmarking, multicast, reserved, IETF special-purpose),
 * including IPv6 forms that carry such an IPv4 address. Anything that is not
 * a plain IP address (hostnames, bracketed literals, garbage) is also
 * refused, as is any zone-scoped IPv6 address (`fe80::1%eth0`).
 */
export function isInternalAddress(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return internalV4.check(address, "ipv4");
    case 6:
      return address.includes("%") || isInternalIPv6(address);
    default:
      return true;
  }
}

/**
 * Thrown when an outbound request's destination is, or resolves to, an
 * address that is not public. Its message is what an attempt stores, so it
 * names the host it was given but not the address it resolved to (that is
 * `address`, for the log at debug).
 */
export class RefusedDestinationError extends Error {
  override readonly name = "RefusedDestinationError";

  /**
   * @param host the host name (or IP literal) the request was addressed to
   * @param address the resolved or connected address that was refused
   */
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `destination ${host} refused: it is not, or does not resolve to, a public address; ` +
        "set DISPATCH_ALLOW_PRIVATE_NETWORKS=true to allow private networks",
    );
  }
}
