import { describe, expect, it } from "vitest";
import { ApiError, errorField, isNotFound } from "./api";

describe("reading an API error", () => {
  it("finds a 404, and a 400 only when asked", () => {
    expect(isNotFound(new ApiError(404, "not_found", "no such job"))).toBe(true);
    expect(isNotFound(new ApiError(400, "bad_request", "bad id"))).toBe(false);
    expect(isNotFound(new ApiError(400, "bad_request", "bad id"), true)).toBe(true);
    expect(isNotFound(new ApiError(500, "internal", "boom"), true)).toBe(false);
    expect(isNotFound(new Error("offline"), true)).toBe(false);
    expect(isNotFound(undefined)).toBe(false);
  });
  it("names the field a 400 is about", () => {
    expect(errorField(new ApiError(400, "bad_request", "must be at least 1", "max"))).toBe("max");
    expect(errorField(new ApiError(400, "bad_request", "bad"))).toBeUndefined();
    expect(errorField(new Error("x"))).toBeUndefined();
    expect(errorField(null)).toBeUndefined();
  });
});
