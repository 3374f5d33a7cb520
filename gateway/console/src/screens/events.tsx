import { Screen } from "../components/ui";

export function Events() {
  return <Screen name="events" title="Events" ready={true}><p>Not written yet.</p></Screen>;
}
