import { describe, expect, it } from "vitest";
import { isInternalAddress, RefusedDestinationError } from "../../src/outbound/network-guard";

const internalV4: Record<string, string[]> = {
  "0.0.0.0/8": ["0.0.0.0", "0.255.255.255"],
  "10/8": ["10.0.0.1", "10.255.255.255"],
  "100.64/10 CGNAT": ["100.64.0.0", "100.127.255.255"],
  "127/8": ["127.0.0.1", "127.255.255.254"],
  "169.254/16": ["169.254.0.1", "169.254.169.254"],
  "172.16/12": ["172.16.0.1", "172.31.255.255"],
  "192.0.0/24": ["192.0.0.1", "192.0.0.255"],
  "192.0.2/24": ["192.0.2.1"],
  "192.88.99/24": ["192.88.99.1"],
  "192.168/16": ["192.168.0.1", "192.168.255.255"],
  "198.18/15": ["198.18.0.1", "198.19.255.255"],
  "198.51.100/24": ["198.51.100.7"],
  "203.0.113/24": ["203.0.113.9"],
  "224/4 multicast": ["224.0.0.1", "239.255.255.250"],
  "240/4 reserved": ["240.0.0.1", "254.255.255.255"],
  broadcast: ["255.255.255.255"],
};

const internalV6: Record<string, string[]> = {
  "unspecified ::": ["::", "0:0:0:0:0:0:0:0"],
  "loopback ::1": ["::1", "0:0:0:0:0:0:0:1"],
  "fc00::/7 ULA": ["fc00::1", "fd12:3456:789a::1"],
  "fe80::/10 link-local": ["fe80::1", "febf:ffff::1"],
  "fec0::/10 deprecated site-local": ["fec0::1", "feff::1"],
  "ff00::/8 multicast": ["ff02::1", "ff0e::1"],
  "64:ff9b::/96 NAT64 with internal v4": ["64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::a9fe:a9fe"],
  "64:ff9b:1::/48 local NAT64": ["64:ff9b:1::1", "64:ff9b:1::8.8.8.8"],
  "2001:db8::/32 documentation": ["2001:db8::1", "2001:db8:ffff::1"],
  "100::/64 discard": ["100::", "100::ffff:ffff:ffff:ffff"],
  "IPv4-mapped dotted": ["::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "0:0:0:0:0:ffff:192.168.1.1"],
  "IPv4-mapped hex": ["::ffff:7f00:1", "::ffff:a01:203", "::ffff:a9fe:a9fe"],
  "IPv4-compatible": ["::127.0.0.1", "::7f00:1", "::10.0.0.1", "::a9fe:a9fe"],
  uppercase: ["FE80::1", "FC00::ABCD", "::FFFF:7F00:1", "::FFFF:127.0.0.1", "64:FF9B::7F00:1", "2001:DB8::1", "FF02::1"],
  "zone-scoped": ["fe80::1%eth0", "fe80::1%1"],
  "outside 2000::/3 global unicast": ["100:0:0:1::1", "fbff::1", "4000::1", "5f00::1", "1::1"],
  "2002::/16 6to4 with internal v4": ["2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::", "2002:a00:1:1::1"],
  "2001::/32 Teredo": ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1"],
  "2001::/23 IETF protocol assignments": ["2001:2::1", "2001:10::1", "2001:20::1", "2001:1ff::1"],
  "3fff::/20 documentation": ["3fff::1", "3fff:fff::1"],
  "::ffff:0:0:0/96 IPv4-translated": ["::ffff:0:7f00:1", "::ffff:0:10.0.0.1", "::ffff:0:a9fe:a9fe"],
};

const publicAddresses = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.215.14",
  "100.63.255.255",
  "100.128.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "192.0.1.1",
  "192.88.98.1",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2606:4700:4700:0:0:0:0:1111",
  "2A00:1450:4001:82B::200E",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "::8.8.8.8",
  "64:ff9b::8.8.8.8",
  "64:ff9b::101:101",
  "2001:db9::1",
  "2001:200::1",
  "2002:808:808::1",
  "2002:0101:0101::",
  "::ffff:0:808:808",
  "3fff:1000::1",
];

const notAddresses = ["", "localhost", "example.com", "[::1]", "127.0.0.1:80", "1.2.3", "01.2.3.4", "::ffff:999.0.0.1", "not an ip"];

describe("isInternalAddress", () => {
  for (const [range, addresses] of Object.entries(internalV4)) {
    it.each(addresses)(`IPv4 ${range}: %s is internal`, (address) => {
      expect(isInternalAddress(address)).toBe(true);
    });
  }

  for (const [range, addresses] of Object.entries(internalV6)) {
    it.each(addresses)(`IPv6 ${range}: %s is internal`, (address) => {
      expect(isInternalAddress(address)).toBe(true);
    });
  }

  it.each(publicAddresses)("%s is public", (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });

  it.each(notAddresses)("non-IP %j is refused", (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });
});

describe("RefusedDestinationError", () => {
  it("names the host and the escape hatch, never the address it resolved to", () => {
    const error = new RefusedDestinationError("localhost", "127.0.0.1");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RefusedDestinationError");
    expect(error.host).toBe("localhost");
    expect(error.address).toBe("127.0.0.1");
    expect(error.message).toBe(
      "destination localhost refused: it is not, or does not resolve to, a public address; " +
        "set DISPATCH_ALLOW_PRIVATE_NETWORKS=true to allow private networks",
    );
    expect(error.message).not.toContain("127.0.0.1");
  });
});
