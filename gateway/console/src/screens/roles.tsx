import { Screen } from "../components/ui";

export function Roles() {
  return <Screen name="roles" title="Roles" ready={true}><p>Not written yet.</p></Screen>;
}
