/**
 * The request signature every bench service sends with a delivery: an HS256
 * JWT over the body's SHA-256, shaped like Dispatch's (issuer, subject URL,
 * times, a random id, the body hash), signed with a key of the process.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";

const HEADER = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString("base64url");

/** The signature of a POST of `body` to `url`, under `key`. */
export function sign(key: Buffer, url: string, body: Buffer): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = Buffer.from(JSON.stringify({
    iss: "Upstash",
    sub: url,
    iat: now,
    nbf: now,
    exp: now + 300,
    jti: randomBytes(8).toString("hex"),
    body: createHash("sha256").update(body).digest("base64url"),
  })).toString("base64url");
  return `${HEADER}.${claims}.${createHmac("sha256", key).update(`${HEADER}.${claims}`).digest("base64url")}`;
}
