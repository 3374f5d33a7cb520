import { describe, expect, it } from "vitest";
import { ApiError } from "../api";
import { budgetBody, emptyBudgetForm, scopeText, spends, type Budget } from "./budgets-lib";
import { heldReason, heldSearch } from "./held-lib";

const b = (over: Partial<Budget>): Budget => ({ name: "b", scope: "namespace", on_exceed: "hold", spent_today_usd: "0", spent_today_tokens: 0, exceeded: false, ...over });

describe("spends", () => {
  it("put today's cost against the limit exactly", () => {
    expect(spends(b({ daily_cost_usd: "1", spent_today_usd: "0.3" }))).toEqual([{ text: "$0.30 of $1.00", pct: 30 }]);
    // A thousandth of a cent over the limit shows the whole bar.
    expect(spends(b({ daily_cost_usd: "0.01", spent_today_usd: "0.01001" }))).toEqual([{ text: "$0.01001 of $0.01", pct: 100 }]);
    expect(spends(b({ daily_cost_usd: "3", spent_today_usd: "1" }))[0].pct).toBe(33.3);
  });
  it("list the token limit after the cost", () => {
    expect(spends(b({ daily_cost_usd: "2", spent_today_usd: "1", daily_tokens: 10000, spent_today_tokens: 2500 })).map((s) => s.text)).toEqual([
      "$1.00 of $2.00",
      "2,500 of 10,000 tokens",
    ]);
  });
  it("name the scope", () => {
    expect(scopeText(b({ scope: "queue", queue: "llm" }))).toBe("queue llm");
    expect(scopeText(b({ scope: "tag", tag: "team=ml" }))).toBe("tag team=ml");
    expect(scopeText(b({}))).toBe("the namespace");
  });
});

describe("budgetBody", () => {
  it("sends what the scope needs and the limits given", () => {
    expect(budgetBody({ ...emptyBudgetForm(), name: " daily ", scope: "queue", queue: "llm", tag: "x=y", cost: "1.50" })).toEqual({
      name: "daily",
      scope: "queue",
      queue: "llm",
      daily_cost_usd: "1.50",
      on_exceed: "hold",
    });
    expect(budgetBody({ ...emptyBudgetForm(), name: "t", tokens: "1,000,000", on_exceed: "reject" })).toEqual({ name: "t", scope: "namespace", daily_tokens: 1000000, on_exceed: "reject" });
  });
  it("names daily_tokens when it is not a whole number", () => {
    const e = budgetBody({ ...emptyBudgetForm(), name: "t", tokens: "1.5" });
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).field).toBe("daily_tokens");
  });
});

describe("held jobs", () => {
  it("are searched oldest first, paged by cursor", () => {
    expect(heldSearch()).toEqual({ state: ["held"], sort: "created_at", order: "asc", limit: 25 });
    expect(heldSearch("c1").cursor).toBe("c1");
  });
  it("say what holds them", () => {
    expect(heldReason({ held_reason: "budget", held_budget: "daily" })).toBe("budget daily");
    expect(heldReason({ depends_on: ["a", "b"] })).toBe("2 jobs it depends on");
    expect(heldReason({ depends_on: ["a"] })).toBe("1 job it depends on");
  });
});
