import { describe, expect, it } from "vitest";
import { hostAllowed, segments } from "./server.js";
import { clipFormat } from "./video.js";

describe("viewer paths and hosts", () => {
  it("decodes path segments and refuses any that decode to a path", () => {
    expect(segments("/api/runs/abc")).toEqual(["api", "runs", "abc"]);
    expect(segments("/files/a/%2e%2e/x")).toBeNull();
    expect(segments("/files/a/..%2Fb")).toBeNull();
    expect(segments("/files/a/b%5Cc")).toBeNull();
    expect(segments("/files/a/b%00")).toBeNull();
    expect(segments("/files/%E0%A4%A")).toBeNull();
  });

  it("answers its own names and IP literals at its port, never another name", () => {
    const allowed = ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"];
    expect(hostAllowed("127.0.0.1:8080", allowed)).toBe(true);
    expect(hostAllowed("localhost:8080", allowed)).toBe(true);
    expect(hostAllowed("192.168.1.20:8080", allowed)).toBe(true);
    expect(hostAllowed("[fe80::1]:8080", allowed)).toBe(true);
    expect(hostAllowed("evil.example:8080", allowed)).toBe(false);
    expect(hostAllowed("127.0.0.1.evil.example:8080", allowed)).toBe(false);
    expect(hostAllowed("192.168.1.20:9090", allowed)).toBe(false);
    expect(hostAllowed("", allowed)).toBe(false);
  });

  it("knows a clip's format by its extension", () => {
    expect(clipFormat("a.MP4")).toBe("mp4");
    expect(clipFormat("a.gif")).toBe("gif");
    expect(() => clipFormat("a.avi")).toThrow(/mp4, .webm or .gif/);
  });
});
