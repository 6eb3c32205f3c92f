import { BlockList, isIP } from "node:net";

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

const INTERNAL_V6: ReadonlyArray<readonly [string, number]> = [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["64:ff9b:1::", 48],
  ["2001:db8::", 32],
  ["100::", 64],
];

/** IPv6 prefixes whose low 32 bits carry an IPv4 address: mapped, compatible, NAT64. */
const EMBEDDED_V4: ReadonlyArray<readonly [string, number]> = [
  ["::ffff:0:0", 96],
  ["::", 96],
  ["64:ff9b::", 96],
];

function buildList(family: "ipv4" | "ipv6", ranges: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

const internalV4 = buildList("ipv4", INTERNAL_V4);
const internalV6 = buildList("ipv6", INTERNAL_V6);
const embeddedV4 = buildList("ipv6", EMBEDDED_V4);

/** Low 32 bits of an IPv6 address as dotted IPv4, via the WHATWG URL canonical (hex) form. */
function lowIPv4(ipv6: string): string {
  const groups = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1).split(":");
  const [hi, lo] = groups.slice(-2).map((group) => parseInt(group || "0", 16)) as [number, number];
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

function isInternalIPv6(address: string): boolean {
  if (internalV6.check(address, "ipv6")) return true;
  if (embeddedV4.check(address, "ipv6")) return internalV4.check(lowIPv4(address), "ipv4");
  return false;
}

/**
 * True when `address` must not be reached by a public webhook sender: private,
 * loopback, link-local, CGNAT, documentation, benchmarking, multicast and reserved
 * ranges, plus IPv6 forms embedding such an IPv4 address. Anything that is not
 * a plain IP address (hostnames, bracketed literals, garbage) is also refused,
 * as is any zone-scoped IPv6 address (`fe80::1%eth0`).
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

/** Thrown when an outbound request's destination resolves to an internal address. */
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
      `destination ${host} resolves to an internal address (${address}); ` +
        "set DISPATCH_ALLOW_PRIVATE_NETWORKS=true to allow it",
    );
  }
}
