"""AI workloads (docs/api/ai.md): checking and summing the model usage a
handler reports, and the client's calls for usage totals, budgets, and
approving or rejecting the jobs a budget holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from ._base import Base, drop_none, iso_time, query, seg
from .types_gen import AIUsage, AIUsageResponse, ApproveResponse, Budget, BudgetList

MAX_TOKENS = 1_000_000_000_000  # of one kind in one report
COST_SCALE = 1_000_000_000  # nano-dollars
MAX_COST_NANOS = 1_000_000 * COST_SCALE  # in one report
MAX_NAME_BYTES = 128
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_COST = re.compile(r"([0-9]{1,10})(?:\.([0-9]{1,9}))?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_cost_usd(s: str) -> int | None:
    """A non-negative decimal of dollars ("0.0042") in nano-dollars,
    exactly; None when it is not one."""
    m = _COST.fullmatch(s)
    if m is None:
        return None
    return int(m.group(1)) * COST_SCALE + int((m.group(2) or "").ljust(9, "0"))


def format_cost_usd(n: int) -> str:
    """Nano-dollars as a decimal string without trailing zeros."""
    whole, frac = divmod(n, COST_SCALE)
    f = f"{frac:09d}".rstrip("0")
    return f"{whole}.{f}" if f else str(whole)


@dataclass
class UsageCounts:
    """A checked report in exact form: cost in nano-dollars."""

    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_FIELDS, 0))
    cost_nanos: int = 0
    model: str = ""
    provider: str = ""


def check_usage(u: Mapping[str, Any], name: str = "usage") -> UsageCounts:
    """Check one report as the server does; ValueError naming the field
    (``usage.cost_usd``) otherwise."""
    unknown = set(u) - set(TOKEN_FIELDS) - {"cost_usd", "model", "provider"}
    if unknown:
        raise ValueError(f"jobbie: {name}.{sorted(unknown)[0]}: unknown field")
    c = UsageCounts()
    for k in TOKEN_FIELDS:
        v = u.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_TOKENS:
            raise ValueError(f"jobbie: {name}.{k} must be a whole number from 0 to {MAX_TOKENS}; got {v!r}")
        c.tokens[k] = v
    cost = u.get("cost_usd", "")
    if cost != "":
        n = parse_cost_usd(cost) if isinstance(cost, str) else None
        if n is None:
            raise ValueError(f'jobbie: {name}.cost_usd must be a decimal string such as "0.0042", '
                             f"at most 9 places after the point; got {cost!r}")
        if n > MAX_COST_NANOS:
            raise ValueError(f"jobbie: {name}.cost_usd must be at most 1000000 in one report; got {cost}")
        c.cost_nanos = n
    for k in ("model", "provider"):
        s = u.get(k, "")
        if not isinstance(s, str) or len(s.encode()) > MAX_NAME_BYTES or _CONTROL.search(s):
            raise ValueError(f"jobbie: {name}.{k} must be a string of at most {MAX_NAME_BYTES} bytes "
                             "without control characters")
        setattr(c, k, s)
    return c


class PendingUsage:
    """Usage reported and not yet sent, summed exactly."""

    def __init__(self) -> None:
        self._c: UsageCounts | None = None

    def add(self, c: UsageCounts) -> None:
        """Add a checked report; ValueError when the sum would pass what
        one report may carry."""
        s = self._c or UsageCounts()
        tokens = {k: s.tokens[k] + c.tokens[k] for k in TOKEN_FIELDS}
        cost = s.cost_nanos + c.cost_nanos
        if max(tokens.values()) > MAX_TOKENS or cost > MAX_COST_NANOS:
            raise ValueError("jobbie: the usage not yet sent would pass what one report may carry: "
                             "let a heartbeat send it first")
        self._c = UsageCounts(tokens, cost, c.model or s.model, c.provider or s.provider)

    def take(self) -> AIUsage | None:
        """The sum as one report, forgotten; None when nothing is pending."""
        c, self._c = self._c, None
        if c is None:
            return None
        u: AIUsage = {"input_tokens": c.tokens["input_tokens"], "output_tokens": c.tokens["output_tokens"],
                      "cache_read_tokens": c.tokens["cache_read_tokens"],
                      "cache_write_tokens": c.tokens["cache_write_tokens"], "cost_usd": format_cost_usd(c.cost_nanos)}
        if c.model:
            u["model"] = c.model
        if c.provider:
            u["provider"] = c.provider
        return u

    def restore(self, u: AIUsage | None) -> None:
        """Add back a report a heartbeat failed to send."""
        if u is not None:
            self.add(check_usage(u))


class AIMixin(Base):
    """Usage totals, budgets (docs/api/ai.md#budgets), and held jobs."""

    def ai_usage(self, *, from_: str | datetime | None = None, to: str | datetime | None = None,
                 group_by: str | None = None, step: str | None = None) -> AIUsageResponse:
        """The namespace's usage over whole UTC hours, per ``group_by``
        (queue, model, tag or namespace, the default); with ``step``, whole
        hours or days ("1h", "6h", "1d"), also per step in ``buckets``."""
        path = query("/api/v1/ai/usage", {"from": iso_time(from_), "to": iso_time(to), "group_by": group_by,
                                          "step": step})
        return self._call("GET", path)  # type: ignore[no-any-return]

    def list_budgets(self) -> list[Budget]:
        page: BudgetList = self._call("GET", "/api/v1/ai/budgets")
        return page.get("budgets") or []

    def get_budget(self, name: str) -> Budget:
        return self._call("GET", f"/api/v1/ai/budgets/{seg(name)}")  # type: ignore[no-any-return]

    @staticmethod
    def _budget_body(scope: str, on_exceed: str, queue: str | None, tag: str | None, daily_cost_usd: str | None,
                     daily_tokens: int | None, per_job_cost_usd: str | None, per_job_tokens: int | None) -> dict[str, Any]:
        return drop_none({"scope": scope, "on_exceed": on_exceed, "queue": queue, "tag": tag,
                          "daily_cost_usd": daily_cost_usd, "daily_tokens": daily_tokens,
                          "per_job_cost_usd": per_job_cost_usd, "per_job_tokens": per_job_tokens})

    def create_budget(self, name: str, scope: str, on_exceed: str, *, queue: str | None = None, tag: str | None = None,
                      daily_cost_usd: str | None = None, daily_tokens: int | None = None,
                      per_job_cost_usd: str | None = None, per_job_tokens: int | None = None) -> Budget:
        """Create a budget: ConflictError when the name is taken, a
        BadRequestError naming a bad field."""
        body = {"name": name, **self._budget_body(scope, on_exceed, queue, tag, daily_cost_usd, daily_tokens,
                                                  per_job_cost_usd, per_job_tokens)}
        return self._call("POST", "/api/v1/ai/budgets", body)  # type: ignore[no-any-return]

    def update_budget(self, name: str, scope: str, on_exceed: str, *, queue: str | None = None, tag: str | None = None,
                      daily_cost_usd: str | None = None, daily_tokens: int | None = None,
                      per_job_cost_usd: str | None = None, per_job_tokens: int | None = None) -> Budget:
        """Replace every setting of a budget."""
        body = self._budget_body(scope, on_exceed, queue, tag, daily_cost_usd, daily_tokens, per_job_cost_usd,
                                 per_job_tokens)
        return self._call("PUT", f"/api/v1/ai/budgets/{seg(name)}", body)  # type: ignore[no-any-return]

    def delete_budget(self, name: str) -> None:
        """Delete a budget; the jobs it holds stay held."""
        self._call("DELETE", f"/api/v1/ai/budgets/{seg(name)}")

    def approve_job(self, job_id: str) -> ApproveResponse:
        """Run a job a budget holds, outside the budget (ConflictError when
        no budget holds it)."""
        return self._call("POST", f"/api/v1/jobs/{seg(job_id)}/approve")  # type: ignore[no-any-return]

    def reject_job(self, job_id: str) -> ApproveResponse:
        """Cancel a job a budget holds (cancel_reason ``budget_rejected``)."""
        return self._call("POST", f"/api/v1/jobs/{seg(job_id)}/reject")  # type: ignore[no-any-return]
