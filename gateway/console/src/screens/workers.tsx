import { Screen } from "../components/ui";

export function Workers() {
  return <Screen name="workers" title="Workers" ready={true}><p>Not written yet.</p></Screen>;
}
