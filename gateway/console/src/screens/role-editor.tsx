// The custom role editor: a name, a description and permission rows, each
// an action (or a family, "job.*") over namespace and queue patterns.
// Rows over the same patterns are saved as one permission.
import { useState } from "preact/hooks";
import { enc, post, put } from "../api";
import { Dialog, ErrorBox, Field, useAsync, val } from "../components/ui";
import { ACTION_CHOICES, permissionsOf, roleNameError, rowsOf, type PermRow, type Role } from "./role-util";

const blankRow = (): PermRow => ({ action: "job.read", namespaces: "*", queues: "*" });

type Props = { role: Role | "new" | null; onClose: () => void; onSaved: (r: Role, created: boolean) => void };

export function RoleEditor(props: Props) {
  const title = props.role === "new" ? "New role" : `Role ${props.role?.name ?? ""}`;
  // The form mounts with each opening, so it starts from the role as it is.
  return (
    <Dialog open={props.role !== null} id="role-dialog" title={title} onClose={props.onClose} wide>
      {props.role !== null && <RoleForm {...props} />}
    </Dialog>
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
        <div class="table-wrap">
          <table class="data role-perm-table">
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">Namespaces</th>
                <th scope="col">Queues</th>
                <th scope="col">
                  <span class="sr-only">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i} data-perm-row={i}>
                  <td>
                    <select data-perm-action={i} aria-label={`Permission ${i + 1}: action`} value={r.action} onChange={(e) => setRow(i, { action: val(e) })}>
                      {(ACTION_CHOICES.includes(r.action) ? ACTION_CHOICES : [r.action, ...ACTION_CHOICES]).map((a) => (
                        <option key={a} value={a}>
                          {a === "*" ? "* (every action)" : a}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <input
                      data-perm-ns={i}
                      aria-label={`Permission ${i + 1}: namespace patterns`}
                      autoComplete="off"
                      spellcheck={false}
                      placeholder="*"
                      value={r.namespaces}
                      onInput={(e) => setRow(i, { namespaces: val(e) })}
                    />
                  </td>
                  <td>
                    <input
                      data-perm-queues={i}
                      aria-label={`Permission ${i + 1}: queue patterns`}
                      autoComplete="off"
                      spellcheck={false}
                      placeholder="*"
                      value={r.queues}
                      onInput={(e) => setRow(i, { queues: val(e) })}
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      data-perm-remove={i}
                      aria-label={`Remove permission ${i + 1}`}
                      disabled={rows.length === 1}
                      onClick={() => setRows(rows.filter((_, j) => j !== i))}
                    >
                      ✕
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <button type="button" id="role-add-perm" onClick={() => setRows([...rows, rows.length ? { ...rows[rows.length - 1] } : blankRow()])}>
          Add permission
        </button>
      </fieldset>
      {/* The server's message quotes the pattern at fault; its field's index is of the saved permissions, not the rows. */}
      <ErrorBox error={error} />
      <div class="dialog-footer">
        <button type="button" onClick={props.onClose} disabled={busy}>
          Cancel
        </button>
        <button type="submit" id="role-save" class="primary" disabled={busy}>
          {creating ? (busy ? "Creating…" : "Create role") : busy ? "Saving…" : "Save"}
        </button>
      </div>
    </form>
  );
}
