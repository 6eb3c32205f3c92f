/** What the start-up banner prints of secrets, of the SSRF guard, of the deployment's dialect, and in the SDKs' dev mode. */
import { describe, expect, it } from "vitest";
import { banner, showsSecrets, type StartedService } from "../../src/banner";
import { loadConfig } from "../../src/config/config";

const service: StartedService = {
  role: "all",
  baseUrl: "http://127.0.0.1:8080",
  embedded: true,
  tokens: ["eyJVc2VySUQiOiJ1c2VyX2FiYyJ9-generated-token"],
  signingKeys: { current: "sig_generatedCurrent0000000000000000", next: "sig_generatedNext000000000000000000000" },
  madeSecrets: true,
};
const secrets = [service.tokens[0]!, service.signingKeys.current, service.signingKeys.next];

describe("the banner", () => {
  it("shows generated secrets only on the start that made them, and only to a terminal", () => {
    expect(showsSecrets({ madeSecrets: true }, true)).toBe(true);
    expect(showsSecrets({ madeSecrets: true }, false)).toBe(false);
    expect(showsSecrets({ madeSecrets: false }, true)).toBe(false);
    expect(showsSecrets({ madeSecrets: false }, false)).toBe(false);
  });

  it("shown: the token and keys, in the SDK lines and the curl", () => {
    const text = banner(service, loadConfig({}), true);
    for (const secret of secrets) expect(text).toContain(`=${secret}`);
    expect(text).toContain(`Bearer ${service.tokens[0]}`);
  });

  it("links the dashboard and the API reference", () => {
    const text = banner(service, loadConfig({}), false);
    expect(text).toContain("Dashboard:           http://127.0.0.1:8080/dashboard");
    expect(text).toContain("API reference:       http://127.0.0.1:8080/docs");
  });

  it("not shown: none of them, and where to get them", () => {
    const text = banner(service, loadConfig({}), false);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).toContain("Token:               (not shown: npx dispatch env prints it)");
    expect(text).toContain("QSTASH_URL=http://127.0.0.1:8080");
    expect(text).toContain('Bearer $QSTASH_TOKEN"');
  });

  it("configured secrets are named, never shown", () => {
    const config = loadConfig({
      DISPATCH_TOKEN: "configured-token-0123456789",
      DISPATCH_CURRENT_SIGNING_KEY: "sig_configuredCurrent000000000000",
      DISPATCH_NEXT_SIGNING_KEY: "sig_configuredNext00000000000000",
    });
    const text = banner({ ...service, tokens: ["configured-token-0123456789"], signingKeys: { current: config.currentSigningKey!, next: config.nextSigningKey! } }, config, true);
    expect(text).not.toContain("configured-token-0123456789");
    expect(text).not.toContain("sig_configured");
    expect(text).toContain("(DISPATCH_TOKEN)");
  });

  it("says when the SSRF guard is off, and only then", () => {
    expect(banner(service, loadConfig({}), false)).not.toContain("SSRF guard");
    expect(banner(service, loadConfig({ DISPATCH_ALLOW_PRIVATE_NETWORKS: "true" }), false)).toMatch(/SSRF guard:\s+off \(DISPATCH_ALLOW_PRIVATE_NETWORKS=true/);
  });

  it("says what a publish naming no dialect is signed with and how it backs off, and how to get Upstash-Signature", () => {
    const native = banner(service, loadConfig({}), false);
    expect(native).toContain("Plain publishes:     svc dialect, Svc-Signature (iss Dispatch)");
    expect(native).toContain("retries after 1 s, 7 s, 55 s, 7 min, …, at most 1 d");
    expect(native).toContain("DISPATCH_DEFAULT_DIALECT=upstash signs them Upstash-Signature");
    const compat = banner(service, loadConfig({ DISPATCH_DEFAULT_DIALECT: "upstash" }), false);
    expect(compat).toContain("Plain publishes:     upstash dialect, Upstash-Signature (iss Upstash): what @upstash/qstash's Receiver");
    expect(compat).toContain("retries after 12 s, 2 min, 30 min, 6 h, …, at most 1 d");
    expect(compat).not.toContain("DISPATCH_DEFAULT_DIALECT=upstash signs");
  });

  it("in the SDKs' dev mode shows their public credentials and the one line an app sets", () => {
    const config = loadConfig({ DISPATCH_QSTASH_DEV: "true" });
    const dev = { ...service, tokens: config.tokens, signingKeys: { current: config.currentSigningKey!, next: config.nextSigningKey! } };
    const text = banner(dev, config, false);
    expect(text).toContain("QStash SDKs' development server");
    expect(text).toContain(`Token:               ${config.tokens[0]} (the SDKs' public development token)`);
    expect(text).toContain("  QSTASH_DEV=true");
    expect(text).not.toContain("QSTASH_DEV_PORT");
    expect(text).toContain("upstash dialect");
    expect(banner({ ...dev, baseUrl: "http://127.0.0.1:8288" }, config, false)).toContain("  QSTASH_DEV_PORT=8288");
  });
});
