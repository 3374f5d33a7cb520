import { Screen } from "../components/ui";

export function Keys() {
  return <Screen name="keys" title="Keys" ready={true}><p>Not written yet.</p></Screen>;
}
