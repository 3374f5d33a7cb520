import { Screen } from "../components/ui";

export function DeadLetter() {
  return <Screen name="dead" title="DeadLetter" ready={true}><p>Not written yet.</p></Screen>;
}
