import { Screen } from "../components/ui";

export function Namespaces() {
  return <Screen name="namespaces" title="Namespaces" ready={true}><p>Not written yet.</p></Screen>;
}
