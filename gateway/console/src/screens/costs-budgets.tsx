// The Costs screen's budgets card: each budget's scope, what it does when
// reached, and today's spend against its limits; a role with
// namespace.manage creates one in a dialog (an error the API names a
// field of shown under that field) and deletes one after a confirmation.
import { useState } from "preact/hooks";
import { ApiError, del, enc, errorField, post } from "../api";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { RowButton, Table } from "../components/table";
import { Badge, ConfirmOn, Empty, ErrorBox, Field, Loading, Meter, Notice, useAsync } from "../components/ui";
import { useApi } from "../hooks";
import { useSession } from "../session";
import { budgetBody, emptyBudgetForm, ON_EXCEED, scopeText, spends, type Budget, type BudgetForm } from "./budgets-lib";

const isForbidden = (e: unknown) => e instanceof ApiError && e.status === 403;

export function CostBudgets() {
  const { can } = useSession();
  const manage = can("namespace.manage");
  const list = useApi<{ budgets: Budget[] }>("/api/v1/ai/budgets");
  const [creating, setCreating] = useState<true | null>(null);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const [notice, setNotice] = useState("");
  const budgets = list.data?.budgets ?? [];
  return (
    <section class="card costs-budgets" aria-labelledby="costs-budgets-h" id="costs-budgets">
      <div class="card-head">
        <h2 id="costs-budgets-h">Budgets</h2>
        {manage && !isForbidden(list.error) && (
          <button type="button" id="budget-new" onClick={() => setCreating(true)}>
            New budget
          </button>
        )}
      </div>
      <p class="muted">Daily limits (the UTC day) on what a scope reported; what happens once one is reached is the budget’s action.</p>
      {isForbidden(list.error) ? (
        <p class="muted" id="budgets-forbidden">
          This key’s role may not read the namespace’s budgets (they need a role over every queue of the namespace).
        </p>
      ) : (
        <ErrorBox error={list.error} id="budgets-error" />
      )}
      <Notice id="budgets-notice">{notice}</Notice>
      {!list.data ? (
        !list.error && <Loading />
      ) : budgets.length === 0 ? (
        <Empty>No budgets in this namespace.</Empty>
      ) : (
        <Table id="budgets" caption="Budgets" cols={["Budget", "Scope", "When reached", "Today", manage && { label: "Actions", hidden: true }]}>
          {budgets.map((b) => (
            <tr key={b.name} data-budget={b.name} data-exceeded={b.exceeded ? "true" : "false"}>
              <th scope="row" class="mono">
                {b.name}
              </th>
              <td class="budget-scope">{scopeText(b)}</td>
              <td class="budget-action">{ON_EXCEED[b.on_exceed] ?? b.on_exceed}</td>
              <td class="budget-spend">
                {spends(b).map((s, i) => (
                  <div key={i} class="budget-limit">
                    <span>{s.text}</span>
                    <Meter pct={s.pct} class={b.exceeded ? "over" : undefined} aria-valuenow={s.pct} aria-valuemin={0} aria-valuemax={100} aria-label={s.text} />
                  </div>
                ))}
                {b.exceeded && (
                  <Badge class="state-dead budget-exceeded" glyph="!">
                    reached
                  </Badge>
                )}
              </td>
              {manage && (
                <td>
                  <RowButton name={`Delete budget ${b.name}`} danger data={{ "data-delete-budget": b.name }} onClick={() => setDeleting(b)}>
                    Delete
                  </RowButton>
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      <ItemDialog item={creating} id="budget-dialog" title="New budget" onClose={() => setCreating(null)}>
        {() => (
          <BudgetFormView
            onClose={() => setCreating(null)}
            onSaved={(b) => {
              setCreating(null);
              setNotice(`Budget ${b.name} created.`);
              list.reload();
            }}
          />
        )}
      </ItemDialog>
      <ConfirmOn
        item={deleting}
        id="budget-delete-dialog"
        title="Delete budget"
        confirmLabel="Delete budget"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async (b) => {
          await del(`/api/v1/ai/budgets/${enc(b.name)}`);
          setNotice(`Budget ${b.name} deleted.`);
          list.reload();
        }}
      >
        <p>Delete budget {deleting?.name}? The jobs it holds stay held until they are approved or rejected.</p>
      </ConfirmOn>
    </section>
  );
}

const FIELDS = ["name", "scope", "queue", "tag", "daily_cost_usd", "daily_tokens", "on_exceed"];

function FieldError(props: { err: Error | null; name: string }) {
  if (errorField(props.err) !== props.name) return null;
  return (
    <span class="field-error" id={`budget-${props.name}-error`} role="alert">
      {props.err?.message}
    </span>
  );
}

function BudgetFormView(props: { onClose: () => void; onSaved: (b: Budget) => void }) {
  const [f, setF] = useState<BudgetForm>(emptyBudgetForm);
  const a = useAsync();
  const set = (k: keyof BudgetForm, v: string) => setF({ ...f, [k]: v });
  const bad = (name: string) => (errorField(a.error) === name ? true : undefined);
  const other = a.error && !FIELDS.includes(errorField(a.error) ?? "") ? a.error : null;
  return (
    <form
      id="budget-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        a.run(async () => {
          const body = budgetBody(f);
          if (body instanceof Error) throw body;
          props.onSaved(await post<Budget>("/api/v1/ai/budgets", body));
        });
      }}
    >
      <Field label="Name" for="budget-name">
        <input id="budget-name" required spellcheck={false} value={f.name} aria-invalid={bad("name")} onInput={(e) => set("name", e.currentTarget.value)} />
        <FieldError err={a.error} name="name" />
      </Field>
      <Field label="Scope" for="budget-scope">
        <select id="budget-scope" value={f.scope} onChange={(e) => set("scope", e.currentTarget.value)}>
          <Options choices={[{ value: "namespace", label: "The namespace" }, { value: "queue", label: "One queue" }, { value: "tag", label: "One tag" }]} />
        </select>
        <FieldError err={a.error} name="scope" />
      </Field>
      {f.scope === "queue" && (
        <Field label="Queue" for="budget-queue">
          <input id="budget-queue" spellcheck={false} value={f.queue} aria-invalid={bad("queue")} onInput={(e) => set("queue", e.currentTarget.value)} />
          <FieldError err={a.error} name="queue" />
        </Field>
      )}
      {f.scope === "tag" && (
        <Field label="Tag (key=value)" for="budget-tag">
          <input id="budget-tag" spellcheck={false} value={f.tag} aria-invalid={bad("tag")} onInput={(e) => set("tag", e.currentTarget.value)} />
          <FieldError err={a.error} name="tag" />
        </Field>
      )}
      <Field label="Daily cost limit (dollars)" for="budget-cost" hint="Leave empty for none; one of the two limits is needed.">
        <input id="budget-cost" inputMode="decimal" value={f.cost} aria-invalid={bad("daily_cost_usd")} onInput={(e) => set("cost", e.currentTarget.value)} />
        <FieldError err={a.error} name="daily_cost_usd" />
      </Field>
      <Field label="Daily token limit (every kind)" for="budget-tokens">
        <input id="budget-tokens" inputMode="numeric" value={f.tokens} aria-invalid={bad("daily_tokens")} onInput={(e) => set("tokens", e.currentTarget.value)} />
        <FieldError err={a.error} name="daily_tokens" />
      </Field>
      <Field label="When reached" for="budget-on-exceed">
        <select id="budget-on-exceed" value={f.on_exceed} onChange={(e) => set("on_exceed", e.currentTarget.value)}>
          <Options choices={Object.entries(ON_EXCEED).map(([value, label]) => ({ value, label }))} />
        </select>
        <FieldError err={a.error} name="on_exceed" />
      </Field>
      <ErrorBox error={other} id="budget-error" />
      <FormFooter id="budget-save" label="Create budget" busy={a.busy} onCancel={props.onClose} />
    </form>
  );
}
