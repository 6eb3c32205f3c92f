/**
 * Test certificates, made with openssl as a provider's private CA makes them
 * (RDS, Azure and Cloud SQL sign their servers with their own CA): a CA, a
 * server certificate for `localhost` signed by it, a client certificate with
 * an encrypted key, and an unrelated CA that signed nothing here.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run, tool } from "./machine";

/** Paths of the PEM files; the folder is readable by the `postgres` account (the server's key is copied for it). */
export interface Certificates {
  dir: string;
  ca: string;
  otherCa: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  /** The client's key, encrypted with `clientKeyPassword`. */
  clientKey: string;
  clientKeyPassword: string;
  remove(): void;
}

/** Makes the certificates; the server's names only `localhost` (DNS), so `verify-full` by address fails as it should. */
export function makeCertificates(clientName: string): Certificates {
  const openssl = tool("openssl", "openssl");
  const dir = mkdtempSync(join(tmpdir(), "dispatch-certs-"));
  chmodSync(dir, 0o755);
  const at = (name: string) => join(dir, name);
  const authority = (name: string, subject: string) =>
    run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", at(`${name}.key`), "-out", at(`${name}.crt`), "-days", "2", "-subj", subject]);
  const signed = (name: string, subject: string, extensions: string) => {
    run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", at(`${name}.key`), "-out", at(`${name}.csr`), "-subj", subject]);
    writeFileSync(at(`${name}.ext`), `${extensions}\n`);
    run(openssl, ["x509", "-req", "-in", at(`${name}.csr`), "-CA", at("ca.crt"), "-CAkey", at("ca.key"), "-CAcreateserial",
      "-out", at(`${name}.crt`), "-days", "2", "-extfile", at(`${name}.ext`)]);
  };
  authority("ca", "/CN=Dispatch Test CA");
  authority("other-ca", "/CN=Some Other CA");
  signed("server", "/CN=localhost", "subjectAltName=DNS:localhost");
  signed("client", `/CN=${clientName}`, "extendedKeyUsage=clientAuth");
  const password = "client-key-secret";
  run(openssl, ["pkey", "-in", at("client.key"), "-aes256", "-passout", `pass:${password}`, "-out", at("client-encrypted.key")]);
  for (const name of ["ca.crt", "other-ca.crt", "server.crt", "client.crt"]) chmodSync(at(name), 0o644);
  return {
    dir,
    ca: at("ca.crt"),
    otherCa: at("other-ca.crt"),
    serverCert: at("server.crt"),
    serverKey: at("server.key"),
    clientCert: at("client.crt"),
    clientKey: at("client-encrypted.key"),
    clientKeyPassword: password,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
