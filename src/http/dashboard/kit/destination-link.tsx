/** A destination, linked to its row on the destinations page (from a message's page, and the row's own anchor). */
import { linkTo } from "./params";

export const DESTINATIONS_PATH = "/dashboard/destinations";

/** The destinations page showing `destination`'s row alone, at its row. */
export const destinationRowPath = (destination: string) =>
  `${linkTo(DESTINATIONS_PATH, { destination })}#${encodeURIComponent(destination)}`;

/** The destination, linked to its row. */
export const DestinationLink = ({ destination }: { destination: string }) => (
  <a class="mono" href={destinationRowPath(destination)} data-link="destination">
    {destination}
  </a>
);
