/**
 * The signing keys deliveries are signed with (`GET /v2/keys`) and their
 * rotation (`POST /v2/keys/rotate`). As on the API, a read-only session does
 * not see them: their holder could sign requests receivers take for Dispatch's.
 */
import { DIALECTS, type Dialect } from "../../../../db/vocabulary";
import { DIALECT_NAMES, dialectSummary } from "../../../../domain/delivery/dialect-summary";
import type { SigningKeys } from "../../../../domain/delivery/signing";
import { Action } from "../../kit/components";
import type { Viewer } from "../../env";

export const KEYS_PATH = "/dashboard/keys";

/** What the keys page shows. */
export interface KeysView {
  /** Null for a read-only session. */
  keys: SigningKeys | null;
  /** Whether configuration sets them (then they are rotated there). */
  configured: boolean;
  /** The deployment's dialect (DISPATCH_DEFAULT_DIALECT): what a publish naming none is signed in. */
  dialect: Dialect;
  viewer: Viewer;
}

/** The keys, the signature header each dialect carries them in, and the rotation. */
export const KeysPage = ({ keys, configured, dialect, viewer }: KeysView) => (
  <>
    <h1>Signing keys</h1>
    <p class="muted">
      Every delivery carries a signature (a JWT) made with the current key, in its message's dialect; receivers accept the current
      or the next key, so a rotation loses no delivery.
    </p>
    <DialectsCard dialect={dialect} />
    {keys === null ? (
      <p class="card">The signing keys are shown to a full token only, as <code>GET /v2/keys</code> answers.</p>
    ) : (
      <section class="card">
        <KeyRow label="Current" value={keys.current} />
        <KeyRow label="Next" value={keys.next} />
        {configured ? (
          <p class="muted">
            These come from <code>DISPATCH_CURRENT_SIGNING_KEY</code> and <code>DISPATCH_NEXT_SIGNING_KEY</code>: rotate them
            there (the current key set to the next one, the next to a new one).
          </p>
        ) : (
          <div class="actions">
            <Action
              viewer={viewer}
              action={`${KEYS_PATH}/rotate`}
              label="Rotate"
              danger
              confirm="Rotate the signing keys? The next key becomes the current one and a new next key is made: receivers that know only the current key must be given the new one."
            />
          </div>
        )}
      </section>
    )}
  </>
);

/** A key, hidden until asked for. */
const KeyRow = ({ label, value }: { label: string; value: string }) => (
  <details class="key" data-key={label.toLowerCase()}>
    <summary>{label} key (click to show)</summary>
    <pre class="mono">{value}</pre>
  </details>
);

/** Each dialect's signature header and backoff, and the deployment's, with how to change it. */
const DialectsCard = ({ dialect }: { dialect: Dialect }) => (
  <section class="card" data-dialects>
    <p>
      A publish with neither <code>Svc-</code> nor <code>Upstash-</code> headers (curl, the Python and Go clients' plain publish) is
      in this deployment's dialect: <strong data-deployment-dialect={dialect}>{DIALECT_NAMES[dialect]}</strong>, set by{" "}
      <code>DISPATCH_DEFAULT_DIALECT</code>
      {dialect === "svc" && (
        <>
          {" "}
          (set it to <code>upstash</code> where receivers verify with the official SDKs' <code>Receiver</code>)
        </>
      )}
      .
    </p>
    <ul>
      {DIALECTS.map((each) => (
        <li data-dialect={each}>
          {DIALECT_NAMES[each]}: {dialectSummary(each)}.
        </li>
      ))}
    </ul>
  </section>
);
