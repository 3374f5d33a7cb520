// Jobs: the search across every queue of the namespace (POST
// /api/v1/jobs/search), with every filter and the bulk actions; the
// queue and dead letter screens are the same search with a field fixed.
import { useState } from "preact/hooks";
import { JobSearch } from "../components/search";
import { Screen } from "../components/ui";

export function Jobs() {
  const [ready, setReady] = useState(false);
  return (
    <Screen name="jobs" title="Jobs" ready={ready}>
      <p class="muted">Every job of the namespace, in any queue and state. Filter, then act on the jobs you select or on all that match.</p>
      <JobSearch onReady={() => setReady(true)} />
    </Screen>
  );
}
