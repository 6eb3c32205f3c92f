/**
 * The dialect a form publishes in, the deployment's (DISPATCH_DEFAULT_DIALECT)
 * chosen unless the user picks the other, with what each means to a
 * receiver: the signature header it verifies and the retries' backoff.
 */
import { DIALECTS, type Dialect } from "../../../../db/vocabulary";
import { DIALECT_NAMES, dialectSummary } from "../../../../domain/delivery/dialect-summary";
import { Choice } from "../../kit/inputs";

const OPTIONS = DIALECTS.map((dialect) => [dialect, DIALECT_NAMES[dialect]] as const);

/** The `dialect` field, `deployment` chosen first, and a line on each dialect. */
export const DialectChoice = ({ deployment }: { deployment: Dialect }) => (
  <div class="dialect-choice">
    <Choice name="dialect" label="Dialect" options={OPTIONS} value={deployment} />
    <ul class="muted hint">
      {DIALECTS.map((dialect) => (
        <li data-dialect={dialect}>
          {DIALECT_NAMES[dialect]}
          {dialect === deployment && " (this deployment's default)"}: {dialectSummary(dialect)}.
        </li>
      ))}
    </ul>
  </div>
);
