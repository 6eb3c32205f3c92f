/**
 * Secrets at rest: every secret Dispatch keeps in `dispatch.settings` (the
 * generated token, the generated signing keys, the redaction key) is sealed
 * with AES-256-GCM under a key derived (HKDF-SHA256) from the key-encryption
 * secret, `DISPATCH_SECRET` (the embedded default makes one in its data
 * folder). The setting's name is the additional data, so a sealed value
 * cannot be moved to another setting. The dashboard's session key is derived
 * from the same secret and never stored. Without a secret (a configured
 * database and no `DISPATCH_SECRET`) values are kept as they are, and the
 * service warns at every start.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** A sealed value as stored: `{"sealed": "v1.<iv>.<ciphertext>.<tag>"}`, base64url parts. */
export interface Sealed {
  sealed: string;
}

const VERSION = "v1";
const IV_BYTES = 12;

/** Whether a stored value is sealed (else it is a plaintext row, as earlier versions wrote). */
export function isSealed(stored: unknown): stored is Sealed {
  return typeof stored === "object" && stored !== null && typeof (stored as Sealed).sealed === "string" && Object.keys(stored).length === 1;
}

/** A 32-byte key for `purpose`, derived from the secret. */
function derive(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "dispatch", purpose, 32));
}

/** Seals and opens stored secrets under the key-encryption secret, if there is one. */
export class SecretBox {
  private constructor(
    private readonly key: Buffer | null,
    /** The key dashboard sessions are bound to, derived from the secret; null without one. */
    readonly sessionKey: Buffer | null,
  ) {}

  /** A box sealing under `secret`. */
  static sealingWith(secret: string): SecretBox {
    return new SecretBox(derive(secret, "stored secrets v1"), derive(secret, "dashboard sessions v1"));
  }

  /** A box without a secret: values are kept as they are. */
  static plaintext(): SecretBox {
    return new SecretBox(null, null);
  }

  /** Whether this box seals (it has a secret). */
  get seals(): boolean {
    return this.key !== null;
  }

  /** `value` as it is stored under the setting `name`. */
  seal(name: string, value: unknown): unknown {
    if (this.key === null) return value;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv).setAAD(Buffer.from(name));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
    const parts = [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString("base64url"));
    return { sealed: [VERSION, ...parts].join(".") } satisfies Sealed;
  }

  /** The value of the setting `name` as stored (sealed or, from an earlier version, plaintext). */
  open<T>(name: string, stored: unknown): T {
    if (!isSealed(stored)) return stored as T;
    if (this.key === null) {
      throw new Error(`the stored secret ${name} is sealed: set DISPATCH_SECRET to the secret it was sealed with`);
    }
    const [version, iv, ciphertext, tag] = stored.sealed.split(".");
    if (version !== VERSION || iv === undefined || ciphertext === undefined || tag === undefined) {
      throw new Error(`the stored secret ${name} is sealed in a form this version does not read`);
    }
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url")).setAAD(Buffer.from(name));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]);
      return JSON.parse(plain.toString("utf8")) as T;
    } catch {
      throw new Error(`DISPATCH_SECRET does not open the stored secret ${name}: it was sealed with another secret`);
    }
  }
}
