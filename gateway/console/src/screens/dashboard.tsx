import { Screen } from "../components/ui";

export function Dashboard() {
  return <Screen name="dashboard" title="Dashboard" ready={true}><p>Not written yet.</p></Screen>;
}
