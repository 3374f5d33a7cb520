import { Screen } from "../components/ui";

export function Queues() {
  return <Screen name="queues" title="Queues" ready={true}><p>Not written yet.</p></Screen>;
}
