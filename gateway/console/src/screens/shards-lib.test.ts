import { describe, expect, it } from "vitest";
import { CONTROL_PLACEHOLDER, healthView, joinCommands, nodeHealthText, nodesText, revokeConflict, shardLabel, shardNameError } from "./shards-lib";

describe("shardNameError", () => {
  it("takes 1-100 printable characters, trimmed", () => {
    expect(shardNameError("dc1")).toBe("");
    expect(shardNameError("  Paris rack 2 ")).toBe("");
    expect(shardNameError("x".repeat(100))).toBe("");
  });
  it("refuses empty, long and control characters", () => {
    expect(shardNameError("   ")).toMatch(/required/);
    expect(shardNameError("x".repeat(101))).toMatch(/100/);
    expect(shardNameError("a\tb")).toMatch(/Printable/);
    expect(shardNameError("a\u007fb")).toMatch(/Printable/);
  });
});

describe("nodesText", () => {
  it("counts joined nodes, of the expected when the API says", () => {
    expect(nodesText({ nodes: [] })).toBe("0");
    expect(nodesText({ nodes: ["n1", "n2"] })).toBe("2");
    expect(nodesText({ nodes: ["n1"], expected_nodes: 3 })).toBe("1 of 3");
  });
});

describe("shardLabel", () => {
  it("names the shard and its id", () => {
    expect(shardLabel({ id: "sh_1", name: "dc1" })).toBe("dc1 (sh_1)");
  });
});

describe("joinCommands", () => {
  it("one node bootstraps its cluster, with the placeholder for an unknown control URL", () => {
    const c = joinCommands("jst_abc", 1, "  ");
    const lines = c.split("\n").filter((l) => l.startsWith("jobbie "));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("--node-id n1 --bootstrap");
    expect(lines[0]).toContain("--join-token jst_abc");
    expect(lines[0]).toContain("--control-url " + CONTROL_PLACEHOLDER);
    expect(lines[0]).toContain("--gossip-key-file gossip.key");
    expect(c).toContain("head -c 32 /dev/urandom");
  });
  it("three nodes: n1 bootstraps, n2 and n3 join it, all with the one token and the typed URL", () => {
    const c = joinCommands("jst_t", 3, " https://control.example.com:8081 ");
    const lines = c.split("\n").filter((l) => l.startsWith("jobbie "));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain("--node-id n1 --bootstrap");
    expect(lines[1]).toContain("--node-id n2 --join <n1-gossip-address>");
    expect(lines[2]).toContain("--node-id n3 --join");
    for (const l of lines) {
      expect(l).toContain("--join-token jst_t");
      expect(l).toContain("--control-url https://control.example.com:8081 ");
    }
    expect(lines.slice(1).some((l) => l.includes("--bootstrap"))).toBe(false);
  });
});

describe("revokeConflict", () => {
  it("says what to do and keeps the server's words", () => {
    const m = revokeConflict('shard "sh_1" holds 2 namespaces: move or delete them first');
    expect(m).toMatch(/still holds namespaces/);
    expect(m).toContain("holds 2 namespaces");
  });
});

describe("healthView", () => {
  it("absent health is unknown", () => {
    const v = healthView(undefined);
    expect(v.state).toBe("unknown");
    expect(v.text).toBe("unknown");
    expect(v.leader).toBe("");
    expect(v.glyph).not.toBe("");
  });
  it("a healthy cluster names its leader", () => {
    const v = healthView({ shard_id: "sh_1", leader_id: "n1", healthy: true, nodes: [{ id: "n1", role: "leader", status: "healthy" }] });
    expect(v.state).toBe("healthy");
    expect(v.text).toBe("healthy");
    expect(v.leader).toBe("leader n1");
    expect(v.glyph).toBe("✔");
  });
  it("an unhealthy cluster says why: no leader, unreachable nodes", () => {
    const v = healthView({
      shard_id: "sh_1",
      leader_id: "",
      healthy: false,
      nodes: [
        { id: "n1", role: "follower", status: "healthy" },
        { id: "n2", role: "follower", status: "unreachable" },
        { id: "n3", role: "nonvoter", status: "unreachable" },
      ],
    });
    expect(v.state).toBe("unhealthy");
    expect(v.glyph).toBe("✖");
    expect(v.leader).toBe("no leader");
    expect(v.title).toBe("no leader is known; unreachable: n2, n3");
  });
  it("healthy with a node down still names it", () => {
    const v = healthView({
      shard_id: "sh_1",
      leader_id: "n2",
      healthy: true,
      nodes: [
        { id: "n1", role: "follower", status: "unreachable" },
        { id: "n2", role: "leader", status: "healthy" },
        { id: "n3", role: "follower", status: "healthy" },
      ],
    });
    expect(v.state).toBe("healthy");
    expect(v.title).toBe("unreachable: n1");
  });
});

describe("nodeHealthText", () => {
  const h = { shard_id: "sh_1", leader_id: "n1", healthy: true, nodes: [{ id: "n1", role: "leader", status: "healthy" }] };
  it("is the node's role and status", () => {
    expect(nodeHealthText(h, "n1")).toBe("leader, healthy");
  });
  it("is empty for a node health does not name, or without health", () => {
    expect(nodeHealthText(h, "n2")).toBe("");
    expect(nodeHealthText(undefined, "n1")).toBe("");
  });
});
