// Roles: the built-in roles, read-only with their actions, and the
// tenant's custom roles with their permissions (actions × namespaces ×
// queues); define, change and delete custom roles with key.manage.
import { useState } from "preact/hooks";
import { del, enc } from "../api";
import { settled, useApi } from "../hooks";
import { useSession } from "../session";
import { ConfirmOn, Empty, ErrorBox, Notice, Screen, Time } from "../components/ui";
import { EditDelete, Table } from "../components/table";
import { actionName, RoleEditor } from "./role-editor";
import { BUILTIN_DESCRIPTIONS, BUILTIN_ROLES, builtinActions, type Role, type RoleList } from "./role-util";
import "./namespaces.css";
import "./roles.css";

export function Roles() {
  const { can, session } = useSession();
  const list = useApi<RoleList>("/api/v1/roles");
  const [editing, setEditing] = useState<Role | "new" | null>(null);
  const [deleting, setDeleting] = useState<Role | null>(null);
  const [notice, setNotice] = useState("");
  const manage = can("key.manage");
  const apiBuiltin = new Map((list.data?.roles ?? []).filter((r) => r.builtin).map((r) => [r.name, r]));
  const custom = (list.data?.roles ?? []).filter((r) => !r.builtin);

  return (
    <Screen
      name="roles"
      title="Roles"
      ready={settled(list)}
      actions={
        manage && (
          <button type="button" id="role-new" class="primary" onClick={() => setEditing("new")}>
            New role
          </button>
        )
      }
    >
      <p class="muted">
        A key carries one role. A custom role grants actions on the queues matching its queue patterns in the namespaces matching its
        namespace patterns; patterns are a name, a prefix ending in <code>*</code>, or <code>*</code> for all. Actions about a namespace as a
        whole (its keys, roles, settings) need queues <code>*</code>.
      </p>
      <ErrorBox error={list.error} />
      <Notice>{notice}</Notice>

      <section class="card" aria-labelledby="roles-custom">
        <h2 id="roles-custom">Custom roles</h2>
        {list.data && custom.length === 0 && <Empty>No custom roles yet.</Empty>}
        {custom.length > 0 && (
          <Table class="roles-table" caption="Custom roles" cols={["Role", "Permissions", "Updated", { label: "Actions", hidden: true }]}>
            {custom.map((r) => (
              <tr key={r.name} data-role={r.name}>
                <td class="wrap">
                  <span class="mono">{r.name}</span>
                  {r.name === session.role && <span class="badge role-own">this session</span>}
                  {r.description && <span class="muted role-desc">{r.description}</span>}
                </td>
                <td class="wrap">
                  <Permissions role={r} />
                </td>
                <td>
                  <Time at={r.updated_at ?? r.created_at} />
                </td>
                <td class="row-actions">
                  {manage && <EditDelete noun="role" name={r.name} attr="role" onEdit={() => setEditing(r)} onDelete={() => setDeleting(r)} />}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </section>

      <section class="card" aria-labelledby="roles-builtin">
        <h2 id="roles-builtin">Built-in roles</h2>
        <p class="muted">Read-only; each holds in every namespace the key names.</p>
        <Table class="roles-table" caption="Built-in roles" cols={["Role", "What it may do", "Actions"]}>
          {BUILTIN_ROLES.map((name) => (
            <tr key={name} data-builtin-role={name}>
              <td>
                <span class="mono">{name}</span>
                {name === session.role && <span class="badge role-own">this session</span>}
              </td>
              <td class="wrap">{apiBuiltin.get(name)?.description || BUILTIN_DESCRIPTIONS[name]}</td>
              <td class="wrap">
                {builtinActions(name).map((a) => (
                  <code key={a} class="role-action">
                    {actionName(a)}
                  </code>
                ))}
              </td>
            </tr>
          ))}
        </Table>
      </section>

      <RoleEditor
        role={editing}
        onClose={() => setEditing(null)}
        onSaved={(r, created) => {
          setEditing(null);
          setNotice(created ? `Role ${r.name} created.` : `Role ${r.name} saved.`);
          list.reload();
        }}
      />
      <ConfirmOn
        item={deleting}
        title={`Delete role ${deleting?.name ?? ""}`}
        confirmLabel="Delete role"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async (r) => {
          await del(`/api/v1/roles/${enc(r.name)}`);
          setNotice(`Role ${r.name} deleted.`);
          list.reload();
        }}
      >
        <p>
          Delete the custom role <strong class="mono">{deleting?.name}</strong>? The server refuses while live keys carry it: revoke them first.
        </p>
      </ConfirmOn>
    </Screen>
  );
}

/** Permissions lists a custom role's grants, one line each. */
function Permissions({ role }: { role: Role }) {
  return (
    <ul class="role-perms">
      {role.permissions.map((p, i) => (
        <li key={i}>
          {p.actions.map((a) => (
            <code key={a} class="role-action">
              {a}
            </code>
          ))}
          <span class="muted"> · namespaces </span>
          <span class="role-scope">{p.namespaces.join(", ")}</span>
          <span class="muted"> · queues </span>
          <span class="role-scope">{p.queues.join(", ")}</span>
        </li>
      ))}
    </ul>
  );
}
