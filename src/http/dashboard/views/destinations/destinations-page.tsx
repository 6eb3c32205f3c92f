/**
 * Destinations by name, 50 a page: each origin's circuit, what it holds now
 * and its last minute of attempts (destination-row.tsx); filtered by circuit,
 * or to one destination (any URL of it). Refreshes itself.
 */
import type { Destination } from "../../../../domain/destinations/destinations";
import type { PageOf } from "../../../../domain/paging";
import { CIRCUIT_STATES, type CircuitState } from "../../../../db/vocabulary";
import { ByNamePager, Live } from "../../kit/components";
import type { Viewer } from "../../env";
import { FilterButtons, TextFilters } from "../../kit/filters";
import { Choice } from "../../kit/inputs";
import { DESTINATIONS_PATH } from "../../kit/destination-link";
import { DestinationRow } from "./destination-row";

/** Where the page is: its filters and its cursor. An action's form carries them, and comes back to the same page. */
export interface DestinationsPlace {
  circuit: CircuitState | null;
  destination: string | null;
  after: string | null;
}

/** The place as hidden form fields: the ones that are set. */
export const placeFields = (place: DestinationsPlace): Record<string, string> =>
  Object.fromEntries(Object.entries(place).filter((entry): entry is [string, string] => entry[1] !== null && entry[1] !== ""));

/** The page of destinations at `place`; `page.cursor` is the next page's. */
export const DestinationsPage = (props: { page: PageOf<Destination>; place: DestinationsPlace; now: number; viewer: Viewer; self: string }) => {
  const { page, place, now, viewer, self } = props;
  const fields = placeFields(place);
  return (
    <>
      <h1>Destinations</h1>
      <form class="filters" method="get" action={DESTINATIONS_PATH}>
        <Choice name="circuit" label="Circuit" options={[["", "any"], ...CIRCUIT_STATES.map((state) => [state, state] as const)]} value={place.circuit ?? ""} />
        <TextFilters fields={[["destination", "Destination (an origin, or any URL of it)", 32]]} values={{ destination: place.destination }} />
        <FilterButtons clear={DESTINATIONS_PATH} />
      </form>
      <Live url={self}>
        {page.items.length === 0 ? (
          <p class="muted">{emptyText(place)}</p>
        ) : (
          <table class="destinations">
            <thead>
              <tr>
                <th>Destination</th>
                <th>Circuit</th>
                <th>In flight</th>
                <th>Due</th>
                <th>Waiting in its line</th>
                <th>Last minute</th>
                <th>Average answer</th>
                <th>Last error</th>
                <th>Last success</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((destination) => (
                <DestinationRow destination={destination} now={now} viewer={viewer} fields={fields} />
              ))}
            </tbody>
          </table>
        )}
        {place.destination === null && (
          <ByNamePager path={DESTINATIONS_PATH} after={place.after} next={page.cursor} filters={{ circuit: place.circuit }} />
        )}
      </Live>
    </>
  );
};

const emptyText = ({ circuit, destination }: DestinationsPlace) => {
  const which = [destination ?? "", circuit ? `with its circuit ${circuit}` : ""].filter(Boolean).join(" ");
  const appears = "a destination appears with the first attempt to it, or when its circuit is opened by hand";
  return which === "" ? `No destinations yet: ${appears}.` : `No destination ${which}. ${appears[0]!.toUpperCase()}${appears.slice(1)}.`;
};
