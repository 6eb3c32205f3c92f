/**
 * TLS as managed providers serve it: a server that takes only TLS
 * connections (hostssl), with a certificate from a private CA. Each libpq
 * `sslmode` means the same in both of Dispatch's drivers; a mode that cannot
 * work stops `migrate` and `start` with one line, before anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../src/db/client";
import { runDispatch } from "../support/processes";
import { type Receiver, startReceiver } from "../support/receiver";
import { startTestService } from "../support/service";
import { type Certificates, makeCertificates } from "./support/certificates";
import { type PrivateServer, startPrivateServer } from "./support/server";

const CERT_USER = "certified";
let certificates: Certificates;
let server: PrivateServer;
let receiver: Receiver;
let databases = 0;

beforeAll(async () => {
  certificates = makeCertificates(CERT_USER);
  server = await startPrivateServer({
    certificates,
    hba: [
      // The certified role must also show a client certificate signed by the CA.
      `hostssl all ${CERT_USER} 127.0.0.1/32 scram-sha-256 clientcert=verify-ca`,
      `hostssl all ${CERT_USER} ::1/128 scram-sha-256 clientcert=verify-ca`,
      "hostssl all all 127.0.0.1/32 scram-sha-256",
      "hostssl all all ::1/128 scram-sha-256",
    ],
  });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await server?.stop();
  certificates?.remove();
});

/** Runs `statement` as the server's superuser. */
async function asSuperuser(statement: string): Promise<void> {
  const admin = createSql(server.url(), 1);
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

/** A new empty database on the server; its URL with `params` (and `host`, 127.0.0.1 by default). */
async function newDatabase(params: string, host = "127.0.0.1", user = "dispatch:dispatch"): Promise<{ url: string; admin: string }> {
  const name = `tls_${++databases}`;
  await asSuperuser(`create database ${name}`);
  return { url: `postgres://${user}@${host}:${server.port}/${name}${params ? `?${params}` : ""}`, admin: server.url(name) };
}

/** Whether the database has Dispatch's schema: a refused start must leave none. */
async function migrated(adminUrl: string): Promise<boolean> {
  const sql = createSql(adminUrl, 1);
  try {
    return (await sql`select 1 from pg_namespace where nspname in ('dispatch', 'graphile_worker')`).length > 0;
  } finally {
    await sql.end();
  }
}

/** Starts Dispatch on `url`, delivers one message, and returns whether every connection it held was TLS, counted by driver. */
async function runAndCount(url: string): Promise<{ tls: number; plain: number }> {
  const dispatch = await startTestService({ databaseUrl: url });
  try {
    const before = receiver.requests.length;
    const published = await dispatch.api(`/v2/publish/${receiver.url}/tls`, { method: "POST", body: "over TLS" });
    expect(published.status).toBe(200);
    await receiver.waitFor(before + 1);
    const admin = createSql(server.url(new URL(url).pathname.slice(1)), 1);
    try {
      const [row] = await admin<{ tls: number; plain: number }[]>`
        select count(*) filter (where s.ssl)::int as tls, count(*) filter (where not s.ssl)::int as plain
        from pg_stat_activity a join pg_stat_ssl s using (pid)
        where a.application_name = 'dispatch' and a.datname = current_database()`;
      return row!;
    } finally {
      await admin.end();
    }
  } finally {
    await dispatch.stop();
  }
}

describe("a TLS-only server with a certificate from a private CA", () => {
  it("sslmode=require: encrypts without checking the certificate, in both drivers (app pool, listener, graphile-worker)", async () => {
    const { url } = await newDatabase("sslmode=require");
    const migrate = await runDispatch(["migrate"], { DATABASE_URL: url });
    expect(migrate.code, migrate.stderr).toBe(0);
    const counts = await runAndCount(url);
    expect(counts.plain).toBe(0);
    // At least the app pool's connection, the listening one and graphile-worker's two.
    expect(counts.tls).toBeGreaterThanOrEqual(4);
  });

  it("sslmode=verify-full with sslrootcert=<the CA> and the certificate's host name: checked and encrypted", async () => {
    const { url } = await newDatabase(`sslmode=verify-full&sslrootcert=${certificates.ca}`, "localhost");
    expect((await runAndCount(url)).plain).toBe(0);
  });

  it("sslmode=require with sslrootcert checks the chain (as libpq does): the wrong CA is refused", async () => {
    const { url, admin } = await newDatabase(`sslmode=require&sslrootcert=${certificates.otherCa}`);
    const result = await runDispatch(["migrate"], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the server's TLS certificate was not accepted under sslmode=require");
    expect(await migrated(admin)).toBe(false);
  });

  it("sslmode=verify-ca with the CA accepts a certificate that does not name the address; verify-full does not", async () => {
    const { url: byAddress } = await newDatabase(`sslmode=verify-ca&sslrootcert=${certificates.ca}`);
    expect((await runAndCount(byAddress)).plain).toBe(0);
    const { url, admin } = await newDatabase(`sslmode=verify-full&sslrootcert=${certificates.ca}`);
    const result = await runDispatch(["start"], { DATABASE_URL: url, PORT: "0", HOST: "127.0.0.1" });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^dispatch: DATABASE_URL \(127\.0\.0\.1:\d+\/tls_\d+\): the server's TLS certificate was not accepted under sslmode=verify-full \(.*IP: 127\.0\.0\.1 is not in the cert's list/);
    expect(await migrated(admin)).toBe(false);
  });

  it("sslmode=verify-full without sslrootcert (a private CA Node does not trust): one line, nothing migrated", async () => {
    const { url, admin } = await newDatabase("sslmode=verify-full", "localhost");
    for (const command of [["migrate"], ["start"]]) {
      const result = await runDispatch(command, { DATABASE_URL: url, PORT: "0", HOST: "127.0.0.1" });
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/the server's TLS certificate was not accepted under sslmode=verify-full \((unable to verify the first certificate|self-signed certificate in certificate chain)\)/);
      expect(lines[0]).toContain("sslrootcert=<file>");
    }
    expect(await migrated(admin)).toBe(false);
  });

  it("sslmode=disable against a server that takes only TLS: Postgres' refusal and what to set, nothing migrated", async () => {
    const { url, admin } = await newDatabase("sslmode=disable");
    const result = await runDispatch(["migrate"], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(
      /^dispatch: DATABASE_URL \(127\.0\.0\.1:\d+\/tls_\d+\): no pg_hba\.conf entry for host "127\.0\.0\.1", user "dispatch", database "tls_\d+", no encryption \(SQLSTATE 28000\): the server requires TLS; set sslmode=require or stronger in DATABASE_URL$/,
    );
    expect(await migrated(admin)).toBe(false);
  });

  it("no sslmode (libpq's prefer): TLS, since the server offers it", async () => {
    const { url } = await newDatabase("");
    expect((await runAndCount(url)).plain).toBe(0);
  });

  it("a client certificate with an encrypted key (sslcert, sslkey, sslpassword) reaches both drivers", async () => {
    await asSuperuser(`create role ${CERT_USER} login password 'certified'`);
    const params = `sslmode=verify-full&sslrootcert=${certificates.ca}`;
    const client = `sslcert=${certificates.clientCert}&sslkey=${certificates.clientKey}&sslpassword=${certificates.clientKeyPassword}`;
    const { url } = await newDatabase(`${params}&${client}`, "localhost", `${CERT_USER}:certified`);
    await asSuperuser(`alter database ${new URL(url).pathname.slice(1)} owner to ${CERT_USER}`);
    expect((await runAndCount(url)).plain).toBe(0);
    // Without the certificate the server refuses the role: one line.
    const without = await runDispatch(["migrate"], { DATABASE_URL: url.replace(`&${client}`, "") });
    expect(without.code).toBe(1);
    expect(without.stderr.trim().split("\n")).toHaveLength(1);
    expect(without.stderr).toContain("(SQLSTATE 28000)");
  });

  it("a parameter neither driver can honour stops the start naming it, before anything is written", async () => {
    const { url, admin } = await newDatabase("sslmode=require&uselibpqcompat=true");
    const result = await runDispatch(["start"], { DATABASE_URL: url, PORT: "0", HOST: "127.0.0.1" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'dispatch: DATABASE_URL parameter uselibpqcompat is not supported: Dispatch takes sslmode, sslrootcert, sslcert, sslkey, sslpassword, ' +
        'application_name, connect_timeout, options, host, channel_binding (see README "Managed Postgres")',
    );
    expect(await migrated(admin)).toBe(false);
  });
});
