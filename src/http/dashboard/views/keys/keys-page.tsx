/**
 * The signing keys deliveries are signed with (`GET /v2/keys`) and their
 * rotation (`POST /v2/keys/rotate`). As on the API, a read-only session does
 * not see them: their holder could sign requests receivers take for Dispatch's.
 */
import type { SigningKeys } from "../../../../domain/delivery/signing";
import { Action } from "../../components";
import type { Viewer } from "../../env";

export const KEYS_PATH = "/dashboard/keys";

/** The keys (null for a read-only session), and whether configuration sets them (then they are rotated there). */
export const KeysPage = ({ keys, configured, viewer }: { keys: SigningKeys | null; configured: boolean; viewer: Viewer }) => (
  <>
    <h1>Signing keys</h1>
    <p class="muted">
      Every delivery carries a signature (a JWT in <code>Svc-Signature</code>, or <code>Upstash-Signature</code>) made with the
      current key; receivers accept the current or the next key, so a rotation loses no delivery.
    </p>
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
