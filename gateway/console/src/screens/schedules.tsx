import { Screen } from "../components/ui";

export function Schedules() {
  return <Screen name="schedules" title="Schedules" ready={true}><p>Not written yet.</p></Screen>;
}
