import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HostClass } from "../../src/core/host-class";
import { refusedTarget } from "../../src/egress/target";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

const OWN_HOSTS: ReadonlySet<string> = new Set(["proxy.example"]);
/** Why the guard refuses `https://<host>/doc.json`, or null when it would fetch it. */
const at = (host: string) => refusedTarget(new URL(`https://${host}/doc.json`), OWN_HOSTS);
const classOf = (host: string) => {
  const refusal = at(host);
  return refusal?.reason === "host" ? refusal.host_class : refusal?.reason;
};

describe("the egress guard's judgement of a URL", () => {
  it("sees loopback through every spelling the URL parser accepts", () => {
    const spellings = [
      "127.0.0.1",
      "2130706433",
      "0x7f.1",
      "0x7F000001",
      "0177.0.0.1",
      "0177.0.0.01",
      "127.1",
      "127.0.1",
      "%31%32%37.0.0.1",
      "127.0.0.1.",
      "[::1]",
      "[0:0:0:0:0:0:0:1]",
      "localhost",
      "LOCALHOST.",
      "app.localhost",
    ];
    for (const host of spellings) expect(classOf(host), host).toBe("loopback");
  });

  it("refuses an IPv6 address that carries an IPv4 one, whatever that address is", () => {
    for (const host of [
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[::127.0.0.1]",
      "[64:ff9b::7f00:1]",
      "[2002:7f00:1::]",
      "[::ffff:808:808]",
    ]) {
      expect(classOf(host), host).toBe("obfuscated");
    }
  });

  it("names each local and special range", () => {
    const cases: Array<[string, HostClass]> = [
      ["printer.local", "private"],
      ["orders.internal", "private"],
      ["intranet", "private"],
      ["metadata.google.internal", "link_local"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["[fd00::1]", "private"],
      ["[fc00::1]", "private"],
      ["100.64.0.1", "private"],
      ["169.254.169.254", "link_local"],
      ["0xa9.0xfe.0xa9.0xfe", "link_local"],
      ["2852039166", "link_local"],
      ["[fe80::1]", "link_local"],
      ["0.0.0.0", "unspecified"],
      ["0", "unspecified"],
      ["[::]", "unspecified"],
      ["224.0.0.1", "reserved"],
      ["255.255.255.255", "reserved"],
      ["198.18.0.1", "reserved"],
      ["192.0.0.8", "reserved"],
      ["[ff02::1]", "reserved"],
    ];
    for (const [host, kind] of cases) expect(classOf(host), host).toBe(kind);
  });

  it("lets public names and addresses through, never plain http, a password or the proxy itself", () => {
    for (const host of ["client.example", "172.32.0.1", "100.128.0.1", "8.8.8.8", "[2606:4700::1111]"]) {
      expect(at(host), host).toBeNull();
    }
    expect(refusedTarget(new URL("http://client.example/doc.json"), OWN_HOSTS)).toEqual({
      reason: "not_https",
    });
    expect(refusedTarget(new URL("https://a:b@client.example/doc.json"), OWN_HOSTS)).toEqual({
      reason: "credentials_in_url",
    });
    expect(at("Proxy.Example.")).toEqual({ reason: "own_host" });
  });
});

/** The forbidden IPv4 ranges, as the specification of what must never be reached. */
const FORBIDDEN: ReadonlyArray<[number, number]> = [
  [0x00000000, 8],
  [0x7f000000, 8],
  [0x0a000000, 8],
  [0xac100000, 12],
  [0xc0a80000, 16],
  [0x64400000, 10],
  [0xa9fe0000, 16],
];

const forbiddenAddress = fc
  .record({ range: fc.constantFrom(...FORBIDDEN), offset: fc.nat({ max: 2 ** 24 - 1 }) })
  .map(({ range: [base, bits], offset }) => base + (offset % 2 ** (32 - bits)));

/**
 * An IPv4 address as a URL may spell it: one to four parts (the last holds the remaining bits), each
 * in decimal, hex (`0x`, either case) or octal (`0`).
 */
const spelled = (address: number) =>
  fc
    .record({
      parts: fc.integer({ min: 1, max: 4 }),
      radixes: fc.array(fc.constantFrom(10, 16, 8), { minLength: 4, maxLength: 4 }),
      upper: fc.boolean(),
    })
    .map(({ parts, radixes, upper }) => {
      const values: number[] = [];
      let rest = address;
      for (let index = 0; index < parts - 1; index++) {
        const shift = 8 * (3 - index);
        values.push(Math.floor(rest / 2 ** shift) % 256);
      }
      const lastBits = 8 * (5 - parts);
      rest = address % 2 ** lastBits;
      values.push(rest);
      return values
        .map((value, index) => {
          const radix = radixes[index] ?? 10;
          if (radix === 16) return `0${upper ? "X" : "x"}${value.toString(16)}`;
          if (radix === 8) return `0${value.toString(8)}`;
          return value.toString(10);
        })
        .join(".");
    });

describe("an IPv4 address in a forbidden range", () => {
  it("is refused however it is written: decimal, hex, octal, short or mixed, or mapped into IPv6", () => {
    fc.assert(
      fc.property(
        forbiddenAddress.chain((address) => fc.tuple(fc.constant(address), spelled(address))),
        ([address, host]) => {
          expect(at(host), host).not.toBeNull();
          const high = Math.floor(address / 65536).toString(16);
          const low = (address % 65536).toString(16);
          expect(at(`[::ffff:${high}:${low}]`)).not.toBeNull();
        },
      ),
      plan({ seed: 20261207, numRuns: 400 }),
    );
  });
});
