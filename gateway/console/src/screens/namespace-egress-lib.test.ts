import { describe, expect, it } from "vitest";
import { badRow, egressEntries, egressPath, egressRows, rowError } from "./namespace-egress-lib";

describe("egressEntries", () => {
  it("sends the rows trimmed, blanks left out, and maps each entry to its row", () => {
    const { body, rowOf } = egressEntries(["hooks.example.com", "  ", " *.example.net ", ""]);
    expect(body).toEqual({ egress_allow: ["hooks.example.com", "*.example.net"] });
    expect(rowOf).toEqual([0, 2]);
  });
  it("sends null for no entry: none", () => {
    expect(egressEntries([]).body).toEqual({ egress_allow: null });
    expect(egressEntries(["", " "]).body).toEqual({ egress_allow: null });
  });
});

describe("badRow", () => {
  it("is the row of the entry a 400 names, counting only what was sent", () => {
    const { rowOf } = egressEntries(["ok.example.com", "", "no such host"]);
    expect(badRow("egress_allow[1]", rowOf)).toBe(2);
    expect(badRow("egress_allow[0]", rowOf)).toBe(0);
  });
  it("is -1 for a field that names no entry", () => {
    expect(badRow("egress_allow", [0])).toBe(-1);
    expect(badRow(undefined, [0])).toBe(-1);
    expect(badRow("egress_allow[5]", [0])).toBe(-1);
    expect(badRow("egress_allow[x]", [0])).toBe(-1);
  });
});

describe("egressRows and egressPath", () => {
  it("gives one empty row for none", () => {
    expect(egressRows([])).toEqual([""]);
    expect(egressRows(undefined)).toEqual([""]);
    expect(egressRows(["a.example.com"])).toEqual(["a.example.com"]);
  });
  it("escapes the namespace", () => {
    expect(egressPath("a/b")).toBe("/api/v1/namespaces/a%2Fb/egress");
  });
});

describe("rowError", () => {
  it("drops the API's index, which is not the row's", () => {
    expect(rowError(`egress_allow[1] ("no such host") is not a host name, "*.domain" pattern or IP address`)).toBe(
      `"no such host" is not a host name, "*.domain" pattern or IP address`,
    );
    expect(rowError("something else")).toBe("something else");
  });
});
