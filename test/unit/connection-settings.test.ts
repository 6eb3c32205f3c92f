/**
 * Reading a connection URL with libpq's parameters (src/db/connection/):
 * what each driver is given, and the parameters refused by name.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { nodePostgresConfig, postgresJsOptions } from "../../src/db/connection/drivers";
import { parseConnectionUrl, unverifiedServerWarning } from "../../src/db/connection/settings";
import { tlsTransport, unresolvedEndpoint } from "../../src/db/connection/transport";

const parse = (query: string, base = "postgres://app:p%40ss@db.example.com:6543/main") => parseConnectionUrl(`${base}${query}`, "DATABASE_URL");
const refusal = (query: string) => {
  try {
    parse(query);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${query} was accepted`);
};

describe("connection URLs", () => {
  it("reads the server, the credentials (decoded) and libpq's defaults: prefer, a 5 s connect timeout", () => {
    const settings = parse("");
    expect(settings).toMatchObject({
      host: "db.example.com", port: 6543, database: "main", user: "app", password: "p@ss", socket: false,
      applicationName: "dispatch", connectTimeoutSeconds: 5, options: null,
    });
    expect(settings.ssl.mode).toBe("prefer");
  });

  it("takes application_name, connect_timeout (at least 2 s, as libpq) and options", () => {
    expect(parse("?application_name=billing&connect_timeout=1&options=-c%20statement_timeout%3D5s")).toMatchObject({
      applicationName: "billing", connectTimeoutSeconds: 2, options: "-c statement_timeout=5s",
    });
  });

  it("reads host=/folder as a Unix socket, where TLS is never used", () => {
    const settings = parse("?host=/cloudsql/project:region:db&sslmode=require", "postgres://app:pw@localhost/main");
    expect(settings).toMatchObject({ host: "/cloudsql/project:region:db", socket: true });
    expect(unresolvedEndpoint(settings).transport).toEqual({ tls: false });
    expect(postgresJsOptions(unresolvedEndpoint(settings), { max: 1, prepare: true, idleTimeoutSeconds: null })).toMatchObject({
      path: "/cloudsql/project:region:db/.s.PGSQL.5432",
    });
  });

  it("require checks nothing; with a root certificate it checks the chain, not the name (libpq's verify-ca)", () => {
    expect(tlsTransport(parse("?sslmode=require"))).toEqual({ tls: true, options: { rejectUnauthorized: false } });
    const root = join(mkdtempSync(join(tmpdir(), "dispatch-ca-")), "root.crt");
    writeFileSync(root, "-----BEGIN CERTIFICATE-----\n");
    const withRoot = tlsTransport(parse(`?sslmode=require&sslrootcert=${root}`));
    expect(withRoot).toMatchObject({ tls: true, options: { rejectUnauthorized: true, ca: "-----BEGIN CERTIFICATE-----\n" } });
    expect((withRoot as { options: { checkServerIdentity?: unknown } }).options.checkServerIdentity).toBeTypeOf("function");
    const full = tlsTransport(parse(`?sslmode=verify-full&sslrootcert=${root}`)) as { options: { checkServerIdentity?: unknown } };
    expect(full.options.checkServerIdentity).toBeUndefined();
    rmSync(dirname(root), { recursive: true });
  });

  it("sslrootcert=system means verify-full, and refuses a weaker mode (libpq 16)", () => {
    expect(parse("?sslrootcert=system").ssl.mode).toBe("verify-full");
    expect(refusal("?sslmode=require&sslrootcert=system")).toBe(
      "DATABASE_URL sslmode=require may not be used with sslrootcert=system: use sslmode=verify-full",
    );
  });

  it("gives both drivers the same server, credentials, TLS options and names", () => {
    const endpoint = { settings: parse("?sslmode=verify-full"), transport: tlsTransport(parse("?sslmode=verify-full")) };
    const js = postgresJsOptions(endpoint, { max: 4, prepare: false, idleTimeoutSeconds: 30 });
    const pg = nodePostgresConfig(endpoint, 2);
    expect(js).toMatchObject({ host: "db.example.com", port: 6543, database: "main", username: "app", password: "p@ss", max: 4, prepare: false });
    expect(pg).toMatchObject({ host: "db.example.com", port: 6543, database: "main", user: "app", password: "p@ss", max: 2 });
    expect(js.ssl).toEqual(pg.ssl);
    expect(js.ssl).not.toBe(pg.ssl);
    expect(js.connection).toEqual({ application_name: "dispatch" });
    expect(pg.application_name).toBe("dispatch");
  });

  it("refuses by name what a driver cannot honour, and what it does not know", () => {
    expect(refusal("?sslmode=strict")).toBe("DATABASE_URL sslmode=strict is not one of disable, allow, prefer, require, verify-ca, verify-full");
    expect(refusal("?channel_binding=require")).toMatch(/^DATABASE_URL channel_binding=require: the app's driver \(postgres.js\) cannot do SCRAM channel binding/);
    expect(parse("?channel_binding=prefer").ssl.mode).toBe("prefer");
    expect(refusal("?target_session_attrs=read-write")).toMatch(/^DATABASE_URL parameter target_session_attrs: /);
    expect(refusal("?pgbouncer=true")).toMatch(/DATABASE_DIRECT_URL/);
    expect(refusal("?uselibpqcompat=true")).toMatch(/^DATABASE_URL parameter uselibpqcompat is not supported/);
    expect(refusal("?sslcert=/a.crt")).toBe("DATABASE_URL needs both sslcert and sslkey for a client certificate");
    expect(() => parseConnectionUrl("postgres://a@h1:5432,h2:5432/db", "DATABASE_URL")).toThrow(/several hosts/);
  });
});

describe("a server on another machine without verify-full", () => {
  it("is warned of for every sslmode below verify-full (libpq's default, prefer, included)", () => {
    for (const query of ["", "?sslmode=disable", "?sslmode=allow", "?sslmode=prefer", "?sslmode=require", "?sslmode=verify-ca"]) {
      const warning = unverifiedServerWarning(parse(query));
      expect(warning, query).toMatch(/^DATABASE_URL: sslmode=[\w-]+ on db\.example\.com does not verify the server's certificate and name.*use sslmode=verify-full/);
      expect(warning).not.toContain("p@ss");
    }
  });

  it("is not warned of with verify-full, on loopback or over a Unix socket", () => {
    expect(unverifiedServerWarning(parse("?sslmode=verify-full"))).toBeNull();
    for (const base of ["postgres://app@localhost/main", "postgres://app@127.0.0.1/main", "postgres://app@[::1]/main", "postgres://app@x/main?host=/run/postgresql"]) {
      expect(unverifiedServerWarning(parse("", base)), base).toBeNull();
    }
  });
});
