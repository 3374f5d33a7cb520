// The custom role editor: a name, a description and permission rows, each
// an action (or a family, "job.*") over namespace and queue patterns.
// Rows over the same patterns are saved as one permission.
import { useState } from "preact/hooks";
import { enc, post, put } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { RowButton, Table } from "../components/table";
import { ACTION_CHOICES, permissionsOf, roleNameError, rowsOf, type PermRow, type Role } from "./role-util";

const blankRow = (): PermRow => ({ action: "job.read", namespaces: "*", queues: "*" });

type Props = { role: Role | "new" | null; onClose: () => void; onSaved: (r: Role, created: boolean) => void };

/** actionName is an action pattern as the console writes it: "*" is every action. */
export const actionName = (a: string) => (a === "*" ? "* (every action)" : a);

export function RoleEditor(props: Props) {
  const title = props.role === "new" ? "New role" : `Role ${props.role?.name ?? ""}`;
  return (
    <ItemDialog item={props.role} id="role-dialog" title={title} onClose={props.onClose} wide>
      {() => <RoleForm {...props} />}
    </ItemDialog>
  );
}

function RoleForm(props: Props) {
  const creating = props.role === "new";
  const orig = props.role && props.role !== "new" ? props.role : null;
  const [name, setName] = useState(orig?.name ?? "");
  const [description, setDescription] = useState(orig?.description ?? "");
  const [rows, setRows] = useState<PermRow[]>(() => (orig ? rowsOf(orig.permissions) : [blankRow()]));
  const [touched, setTouched] = useState(false);
  const { busy, error, run } = useAsync();

  const nameErr = creating && touched ? roleNameError(name) : "";
  const setRow = (i: number, change: Partial<PermRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (creating && roleNameError(name)) return;
    await run(async () => {
      const permissions = permissionsOf(rows);
      if (permissions.length === 0) throw new Error("A role needs at least one permission.");
      const body = { name, description, permissions };
      if (creating) props.onSaved(await post<Role>("/api/v1/roles", body), true);
      else if (orig) props.onSaved(await put<Role>(`/api/v1/roles/${enc(orig.name)}`, body), false);
    });
  };

  return (
    <form id="role-form" onSubmit={submit} noValidate>
      <div class="role-form-grid">
        <Field label="Name" for="role-name" hint={creating ? "Lowercase letters, digits and '-'; not a built-in role's name." : "A role cannot be renamed."}>
          <input
            id="role-name"
            required
            maxLength={63}
            autoComplete="off"
            spellcheck={false}
            value={name}
            disabled={!creating}
            aria-invalid={nameErr ? true : undefined}
            aria-describedby={nameErr ? "role-name-error" : undefined}
            onInput={(e) => setName(val(e))}
            onBlur={() => setTouched(true)}
          />
        </Field>
        <Field label="Description" for="role-description">
          <input id="role-description" maxLength={1024} autoComplete="off" value={description} onInput={(e) => setDescription(val(e))} />
        </Field>
      </div>
      {nameErr && (
        <p id="role-name-error" class="field-error">
          {nameErr}
        </p>
      )}
      <fieldset class="role-perm-editor">
        <legend>Permissions</legend>
        <p class="muted role-perm-help">
          Patterns separated by commas: a name, a prefix ending in <code>*</code> (<code>emails.*</code>), or <code>*</code> for all. A role
          may grant only what your own key holds.
        </p>
        <Table class="role-perm-table" cols={["Action", "Namespaces", "Queues", { label: "Remove", hidden: true }]}>
          {rows.map((r, i) => (
            <tr key={i} data-perm-row={i}>
              <td>
                <select data-perm-action={i} aria-label={`Permission ${i + 1}: action`} value={r.action} onChange={(e) => setRow(i, { action: val(e) })}>
                  <Options choices={(ACTION_CHOICES.includes(r.action) ? ACTION_CHOICES : [r.action, ...ACTION_CHOICES]).map((a) => ({ value: a, label: actionName(a) }))} />
                </select>
              </td>
              <td>
                <Patterns data={{ "data-perm-ns": String(i) }} name={`Permission ${i + 1}: namespace patterns`} value={r.namespaces} onInput={(namespaces) => setRow(i, { namespaces })} />
              </td>
              <td>
                <Patterns data={{ "data-perm-queues": String(i) }} name={`Permission ${i + 1}: queue patterns`} value={r.queues} onInput={(queues) => setRow(i, { queues })} />
              </td>
              <td>
                <RowButton data={{ "data-perm-remove": String(i) }} name={`Remove permission ${i + 1}`} disabled={rows.length === 1} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                  ✕
                </RowButton>
              </td>
            </tr>
          ))}
        </Table>
        <button type="button" id="role-add-perm" onClick={() => setRows([...rows, rows.length ? { ...rows[rows.length - 1] } : blankRow()])}>
          Add permission
        </button>
      </fieldset>
      {/* The server's message quotes the pattern at fault; its field's index is of the saved permissions, not the rows. */}
      <ErrorBox error={error} />
      <FormFooter id="role-save" busy={busy} onCancel={props.onClose} label={creating ? (busy ? "Creating…" : "Create role") : busy ? "Saving…" : "Save"} />
    </form>
  );
}

/** Patterns is a permission row's namespace or queue patterns, as typed. */
function Patterns(props: { data: Record<`data-${string}`, string>; name: string; value: string; onInput: (v: string) => void }) {
  return (
    <input
      {...props.data}
      aria-label={props.name}
      autoComplete="off"
      spellcheck={false}
      placeholder="*"
      value={props.value}
      onInput={(e) => props.onInput(val(e))}
    />
  );
}
