import { Screen } from "../components/ui";

export function JobDetail({ id }: { id: string }) {
  return <Screen name="job" title={"Job " + id} ready={true}><p>Not written yet.</p></Screen>;
}
