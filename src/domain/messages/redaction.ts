/**
 * Redaction (`Redact-Fields`, docs/hosted-api.md §2.2): parts of a message the API
 * shows as `REDACTED:<hash>` instead of their value. The stored row keeps the
 * originals — they are delivered, and a DLQ retry delivers them again — so
 * redaction is applied where a message is read back, by `Redactor`.
 *
 * Fields are stored on the message normalised: `body`, `header` (every
 * header) and `header[<lower-case name>]`. A callback message also carries
 * its source's fields under `source:` (its body embeds the source's body and
 * headers) and the source's header fields as they are (it forwards its own
 * headers, which the source showed as its callback headers).
 */
import { createHmac } from "node:crypto";
import { badRequest } from "../errors";
import { PREFIX } from "../headers/dialect";
import type { Dialect } from "../../db/vocabulary";

/** Normalised redaction fields, as stored on a message row; null for none. */
export type RedactFields = string[] | null;

const FIELD = /^(body|headers?)(?:\[([^\]]+)\])?$/i;
const SOURCE = "source:";

/**
 * Parses the `Redact-Fields` header: a comma list of `body`, `header` and
 * `header[Name]` (also spelled `headers` / `headers[Name]`, any case). An
 * unknown field is a 400 naming `header`.
 */
export function parseRedactFields(value: string | undefined, header: string): RedactFields {
  if (value === undefined) return null;
  const fields = new Set<string>();
  for (const part of value.split(",").map((text) => text.trim()).filter(Boolean)) {
    const match = FIELD.exec(part);
    if (!match || (match[1]!.toLowerCase() === "body" && match[2] !== undefined) || !validName(match[2])) {
      throw badRequest(`${header} lists "${part}"; the fields are body, header and header[Name]`);
    }
    fields.add(match[1]!.toLowerCase() === "body" ? "body" : headerField(match[2]));
  }
  return normalised([...fields]);
}

/** The union of two field lists (a run's and its message's). */
export function unionFields(a: RedactFields, b: RedactFields): RedactFields {
  return normalised([...(a ?? []), ...(b ?? [])]);
}

/**
 * The fields a callback (or failure callback) of a message with `source`
 * fields carries besides its own: the source's fields under `source:`, for
 * the envelope, and its header fields as they are.
 */
export function callbackFields(source: RedactFields, own: RedactFields): RedactFields {
  const inherited = (source ?? [])
    .filter((field) => !field.startsWith(SOURCE))
    .flatMap((field) => (field === "body" ? [SOURCE + field] : [field, SOURCE + field]));
  return unionFields(own, inherited);
}

function headerField(name: string | undefined): string {
  return name === undefined ? "header" : `header[${name.trim().toLowerCase()}]`;
}

function validName(name: string | undefined): boolean {
  return name === undefined || /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/.test(name.trim());
}

/** Sorted, without duplicates and without single headers when all are redacted; null when empty. */
function normalised(fields: string[]): RedactFields {
  const set = new Set(fields);
  for (const scope of ["", SOURCE]) {
    if (!set.has(`${scope}header`)) continue;
    for (const field of set) if (field.startsWith(`${scope}header[`)) set.delete(field);
  }
  return set.size === 0 ? null : [...set].sort();
}

/** Which parts of a message (or of its source, inside a callback envelope) to hide. */
class Scope {
  constructor(
    private readonly fields: Set<string>,
    private readonly prefix: string,
  ) {}

  get body(): boolean {
    return this.fields.has(`${this.prefix}body`);
  }

  /** Whether the header `name` (any case) is hidden. */
  header(name: string): boolean {
    return this.fields.has(`${this.prefix}header`) || this.fields.has(`${this.prefix}header[${name.toLowerCase()}]`);
  }

  /** Whether anything is hidden in this scope. */
  get any(): boolean {
    return [...this.fields].some((field) => field.startsWith(this.prefix));
  }
}

/** The message fields redaction reads and replaces. */
export interface Redactable {
  dialect: Dialect;
  headers: Record<string, string>;
  contentType: string | null;
  body: Buffer;
  callbackHeaders: Record<string, string> | null;
  failureCallbackHeaders: Record<string, string> | null;
  redactFields: RedactFields;
  /** A callback's (or failure callback's) body is an envelope holding its source's headers. */
  origin?: string;
}

/**
 * Names of forwarded headers that carry a credential: what a read-only reader
 * sees as `***` (`Redactor.forReadOnly`).
 */
const CREDENTIAL = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|key|password/i;

/** The value a read-only reader sees in place of a forwarded credential. */
export const MASKED = "***";

/** Whether the header `name` (any case, any dialect's `Forward-` prefix taken off by the caller) carries a credential. */
export const isCredential = (name: string) => CREDENTIAL.test(name);

/**
 * Shows redacted values as `REDACTED:<hex>`, the HMAC-SHA256 of the value
 * under a key kept in the database (domain/secrets/stored-secrets.ts): equal values show equal
 * hashes, so a reader can tell whether two messages carried the same value,
 * but a guessable value (an e-mail address, a short code) cannot be found by
 * hashing candidates, as a bare SHA-256 would allow.
 */
export class Redactor {
  private readOnly: Redactor | null = null;

  /**
   * @param masksCredentials whether forwarded credentials (Authorization,
   * Proxy-Authorization, Cookie, names with token, secret, key or password)
   * are shown as `***` too, as they are to read-only tokens and sessions
   */
  constructor(
    private readonly key: Buffer,
    private readonly masksCredentials = false,
  ) {}

  /** The redactor of read-only readers (an auditor's token, a read-only dashboard session): it masks forwarded credentials. */
  forReadOnly(): Redactor {
    return (this.readOnly ??= new Redactor(this.key, true));
  }

  /** The shown form of a hidden value. */
  value(value: string | Buffer): string {
    return `REDACTED:${createHmac("sha256", this.key).update(value).digest("hex")}`;
  }

  /** Whether `fields` hide the body. */
  hidesBody(fields: RedactFields): boolean {
    return fields?.includes("body") ?? false;
  }

  /** Headers (one string or several per name) with the values `fields` hide replaced. */
  headers<T extends string | string[]>(headers: Record<string, T>, fields: RedactFields): Record<string, T> {
    const scope = new Scope(new Set(fields ?? []), "");
    return this.hideHeaders(headers, scope);
  }

  /**
   * A copy of `message` as the API may show it: hidden values replaced in its
   * body, headers, content type and the headers its callbacks forward, and in
   * the source's body and headers inside a callback envelope. An empty body
   * has nothing to hide and stays empty.
   */
  message<T extends Redactable>(message: T): T {
    if (!this.masksCredentials && (message.redactFields === null || message.redactFields.length === 0)) return message;
    const own = new Scope(new Set(message.redactFields), "");
    const source = new Scope(new Set(message.redactFields), SOURCE);
    const forward = `${PREFIX[message.dialect]}forward-`.toLowerCase();
    const callbackHeaders = (headers: Record<string, string> | null) =>
      headers === null ? null : this.hideForwarded(headers, own, forward);
    let body = message.body;
    if (own.body && body.length > 0) body = Buffer.from(this.value(body));
    else if (source.any || (this.masksCredentials && (message.origin === "callback" || message.origin === "failure_callback"))) {
      body = this.envelope(body, source);
    }
    const { contentType } = message;
    return {
      ...message,
      headers: this.hideHeaders(message.headers, own),
      contentType: contentType !== null && own.header("content-type") ? this.value(contentType) : contentType,
      body,
      callbackHeaders: callbackHeaders(message.callbackHeaders),
      failureCallbackHeaders: callbackHeaders(message.failureCallbackHeaders),
    };
  }

  private hideHeaders<T extends string | string[]>(headers: Record<string, T>, scope: Scope): Record<string, T> {
    return Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, this.shown(name, value, scope.header(name))]),
    );
  }

  /** A header's value as shown: masked when it is a credential and this reader is read-only, else hashed when `hidden`. */
  private shown<T extends string | string[]>(name: string, value: T, hidden: boolean): T {
    if (this.masksCredentials && isCredential(name)) return (Array.isArray(value) ? value.map(() => MASKED) : MASKED) as T;
    return hidden ? this.hideValue(value) : value;
  }

  /** Callback headers: the ones the callback forwards (`<prefix>Forward-Name`) are headers of a request. */
  private hideForwarded(headers: Record<string, string>, scope: Scope, forward: string): Record<string, string> {
    return Object.fromEntries(
      Object.entries(headers).map(([name, value]) => {
        const lower = name.toLowerCase();
        if (!lower.startsWith(forward)) return [name, value];
        const forwarded = lower.slice(forward.length);
        return [name, this.shown(forwarded, value, scope.header(forwarded))];
      }),
    );
  }

  private hideValue<T extends string | string[]>(value: T): T {
    return (Array.isArray(value) ? value.map((item) => this.value(item)) : this.value(value)) as T;
  }

  /**
   * A callback envelope (docs/hosted-api.md §3.5) with the source's hidden parts
   * replaced: `sourceBody` stays base64 (of the redacted form), `sourceHeader`
   * keeps its names. A body that is not an envelope is hidden whole.
   */
  private envelope(body: Buffer, source: Scope): Buffer {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      return Buffer.from(this.value(body));
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return Buffer.from(this.value(body));
    const envelope = { ...(parsed as Record<string, unknown>) };
    if (source.body && typeof envelope.sourceBody === "string" && envelope.sourceBody !== "") {
      envelope.sourceBody = Buffer.from(this.value(Buffer.from(envelope.sourceBody, "base64"))).toString("base64");
    }
    const headers = envelope.sourceHeader;
    if (headers !== null && typeof headers === "object" && !Array.isArray(headers)) {
      envelope.sourceHeader = this.hideHeaders(headers as Record<string, string | string[]>, source);
    }
    return Buffer.from(JSON.stringify(envelope));
  }
}
