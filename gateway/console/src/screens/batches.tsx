import { Screen } from "../components/ui";

export function Batches() {
  return <Screen name="batches" title="Batches" ready={true}><p>Not written yet.</p></Screen>;
}

export function BatchDetail({ id }: { id: string }) {
  return <Screen name="batch" title={"Batch " + id} ready={true}><p>Not written yet.</p></Screen>;
}
