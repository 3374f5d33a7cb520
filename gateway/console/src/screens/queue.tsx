import { Screen } from "../components/ui";

export function QueueDetail({ name }: { name: string }) {
  return <Screen name="queue" title={"Queue " + name} ready={true}><p>Not written yet.</p></Screen>;
}
