import { describe, expect, it } from "vitest";
import {
  addableNodes,
  addNodeCommands,
  addNodesConflict,
  CONTROL_PLACEHOLDER,
  healthView,
  joinCommands,
  nodeHealthText,
  nodeIdsError,
  nodePath,
  nodesText,
  nodeTokensPath,
  parseNodeIds,
  raftRemoveCommand,
  removeNodeConflict,
  revokeConflict,
  shardLabel,
  shardNameError,
  suggestNodeIds,
} from "./shards-lib";

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

describe("adding and removing nodes", () => {
  it("paths escape the shard and node ids", () => {
    expect(nodeTokensPath("sh_1")).toBe("/api/v1/shards/sh_1/join-tokens");
    expect(nodePath("sh_1", "n/2")).toBe("/api/v1/shards/sh_1/nodes/n%2F2");
  });
  it("one token joins 1 to 5 nodes, within 7 in all", () => {
    expect(addableNodes({ nodes: [] })).toBe(5);
    expect(addableNodes({ nodes: ["n1", "n2", "n3"] })).toBe(4);
    expect(addableNodes({ nodes: ["a", "b", "c", "d", "e", "f"] })).toBe(1);
    expect(addableNodes({ nodes: ["a", "b", "c", "d", "e", "f", "g"] })).toBe(0);
  });
  it("suggests ids past the highest n<k> taken, removed ones included", () => {
    expect(suggestNodeIds(["n1", "n2", "n3"], 2)).toEqual(["n4", "n5"]);
    expect(suggestNodeIds(["n1", "n4"], 1)).toEqual(["n5"]);
    expect(suggestNodeIds(["n1", "n2", "n3"], 1)).toEqual(["n4"]);
    expect(suggestNodeIds(["n1", "n2"].concat(["n3"]), 1)).toEqual(["n4"]); // n3 removed: retired
    expect(suggestNodeIds(["alpha", "n10x"], 2)).toEqual(["n1", "n2"]);
    expect(suggestNodeIds([], 1)).toEqual(["n1"]);
  });
  it("parses typed ids split by spaces or commas", () => {
    expect(parseNodeIds(" n4, n5  n6 ")).toEqual(["n4", "n5", "n6"]);
    expect(parseNodeIds("  ")).toEqual([]);
  });
  it("refuses a wrong count, a bad id, a repeat and a taken id", () => {
    const taken = ["n1", "n2", "n3"];
    expect(nodeIdsError(["n4"], 1, taken)).toBe("");
    expect(nodeIdsError(["n4", "n5"], 2, taken)).toBe("");
    expect(nodeIdsError(["n4"], 2, taken)).toMatch(/Give 2 node ids \(1 given\)/);
    expect(nodeIdsError(["-x"], 1, taken)).toMatch(/-x is not a node id/);
    expect(nodeIdsError(["n".repeat(64)], 1, taken)).toMatch(/not a node id/);
    expect(nodeIdsError(["n4", "n4"], 2, taken)).toMatch(/n4 is given twice/);
    expect(nodeIdsError(["n2"], 1, taken)).toMatch(/n2 is taken/);
  });
  it("new nodes join the running group through a member's gossip address, none bootstraps", () => {
    const c = addNodeCommands("jst_m", ["n4", "n5"], ["n1", "n2"], "", "");
    const lines = c.split("\n").filter((l) => l.startsWith("jobbie "));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("--node-id n4 --join <n1-gossip-address> --join-token jst_m --control-url " + CONTROL_PLACEHOLDER);
    expect(lines[1]).toContain("--node-id n5 --join <n1-gossip-address>");
    expect(c).not.toContain("--bootstrap");
    expect(c).toContain("gossip.key");
    const typed = addNodeCommands("jst_m", ["n3"], ["n1"], " 10.0.0.7:7301 ", " https://c:8081 ");
    expect(typed).toContain("--node-id n3 --join 10.0.0.7:7301 --join-token jst_m --control-url https://c:8081 ");
    expect(addNodeCommands("jst_m", ["n1"], [], "", "")).toContain("--join <member-gossip-address>");
  });
  it("takes a removed node out of the Raft group at a surviving node, with that node's own data dir", () => {
    expect(raftRemoveCommand("n3", "n1")).toBe("jobbie shard remove n3 --url <n1-http-address> --data-dir /var/lib/jobbie");
    expect(raftRemoveCommand("n1", undefined)).toContain("--url <member-http-address>");
  });
  it("says what a 409 means, keeping the server's words", () => {
    const live = 'shard "sh_1" has a join token with nodes left to join until 2026-01-01T00:00:00Z: use it, or mint another once it expires';
    expect(addNodesConflict(live)).toMatch(/^The shard's join token still has nodes to join/);
    expect(addNodesConflict(live)).toContain(live);
    expect(addNodesConflict('shard "sh_1" has 6 nodes; with 2 more it would pass 7: remove nodes first')).toMatch(/pass 7 nodes/);
    expect(removeNodeConflict('node "n1" is shard "sh_1"\'s last: join another node first')).toBe('Not removed: node "n1" is shard "sh_1"\'s last: join another node first');
  });
});
