// Namespaces: the tenant's namespaces the key may read, with their
// settings; create, edit and delete them (namespace.manage), and switch
// the console to one. The current namespace's egress allow-list has a
// card of its own (namespace-egress.tsx), and so has its OTLP endpoint
// (namespace-tracing.tsx).
import { useState } from "preact/hooks";
import { settled, useApi } from "../hooks";
import { useSession } from "../session";
import { Empty, ErrorBox, Notice, Screen, Time } from "../components/ui";
import { EditDelete, RowButton, Table } from "../components/table";
import { NamespaceDelete } from "./namespace-delete";
import { NamespaceDialog } from "./namespace-dialog";
import { EgressCard } from "./namespace-egress";
import { TracingCard } from "./namespace-tracing";
import { retentionLabel, type Namespace, type NamespaceList } from "./namespace-util";
import "./namespaces.css";

export function Namespaces() {
  const { can, namespace, setNamespace, session } = useSession();
  const list = useApi<NamespaceList>("/api/v1/namespaces");
  const [editing, setEditing] = useState<Namespace | "new" | null>(null);
  const [deleting, setDeleting] = useState<Namespace | null>(null);
  const [notice, setNotice] = useState("");
  const manage = can("namespace.manage");
  const namespaces = list.data?.namespaces ?? [];

  return (
    <Screen
      name="namespaces"
      title="Namespaces"
      ready={settled(list)}
      actions={
        manage && (
          <button type="button" id="namespace-new" class="primary" onClick={() => setEditing("new")}>
            New namespace
          </button>
        )
      }
    >
      <p class="muted">
        A namespace holds its own queues, jobs and schedules. The console works in one at a time: <strong>{namespace}</strong>.
      </p>
      <ErrorBox error={list.error} />
      <Notice id="namespaces-notice">{notice}</Notice>
      {list.data && namespaces.length === 0 && <Empty>This key may read no namespace.</Empty>}
      {namespaces.length > 0 && (
        <Table
          class="ns-table"
          caption="Namespaces"
          cols={["Name", "Description", "Retention", "Deletion protection", "Created", { label: "Actions", hidden: true }]}
        >
          {namespaces.map((ns) => (
            <tr key={ns.name} data-namespace={ns.name}>
              <td>
                <span class="mono">{ns.name}</span>
                {ns.name === namespace && <span class="badge ns-current">current</span>}
                {ns.name === session.default_namespace && <span class="badge muted">key's default</span>}
                {ns.shard && (
                  <span class="badge ns-shard" data-ns-shard={ns.shard} title="on the tenant's self-hosted shard">
                    shard {ns.shard}
                  </span>
                )}
              </td>
              <td class="wrap">{ns.description || <span class="muted">—</span>}</td>
              <td title={ns.retention || "no retention set: the queues' own settings apply"}>{retentionLabel(ns.retention)}</td>
              <td class="ns-protection">{ns.deletion_protection ? <span class="badge ns-protected">on</span> : <span class="muted">off</span>}</td>
              <td>
                <Time at={ns.created_at} />
              </td>
              <td class="row-actions">
                {ns.name !== namespace && (
                  <RowButton data={{ "data-use-ns": ns.name }} name={`Switch the console to namespace ${ns.name}`} onClick={() => setNamespace(ns.name)}>
                    Switch to
                  </RowButton>
                )}
                {manage && <EditDelete noun="namespace" name={ns.name} attr="ns" onEdit={() => setEditing(ns)} onDelete={() => setDeleting(ns)} />}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <EgressCard namespace={namespace} manage={manage} />
      <TracingCard key={namespace} namespace={namespace} manage={manage} />
      <NamespaceDialog
        namespace={editing}
        onClose={() => setEditing(null)}
        onSaved={(ns, created, shard) => {
          setEditing(null);
          const on = shard ? ` on self-hosted shard ${shard.name} (${shard.id})` : "";
          setNotice(created ? `Namespace ${ns.name} created${on}.` : `Namespace ${ns.name} saved.`);
          list.reload();
        }}
      />
      <NamespaceDelete
        namespace={deleting}
        current={deleting?.name === namespace}
        onClose={() => setDeleting(null)}
        onDeleted={(name) => {
          setDeleting(null);
          setNotice(`Namespace ${name} deleted.`);
          // The console cannot stay in a namespace that is gone.
          if (name === namespace) setNamespace(session.default_namespace !== name ? session.default_namespace : "default");
          else list.reload();
        }}
      />
    </Screen>
  );
}
