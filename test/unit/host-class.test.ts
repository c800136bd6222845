import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyHost, type HostClass, REACHABLE_HOST_CLASSES } from "../../src/core/host-class";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

const at = (host: string) => classifyHost(`https://${host}/doc.json`);

describe("classifying a URL's host", () => {
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
      "[::ffff:127.0.0.1]",
      "[::ffff:7f00:1]",
      "[::127.0.0.1]",
      "[64:ff9b::7f00:1]",
      "[2002:7f00:1::]",
    ];
    for (const host of spellings) expect(at(host), host).toBe("loopback");
  });

  it("names each local and special range", () => {
    const cases: Array<[string, HostClass]> = [
      ["localhost", "local_name"],
      ["LOCALHOST.", "local_name"],
      ["app.localhost", "local_name"],
      ["printer.local", "local_name"],
      ["metadata.google.internal", "local_name"],
      ["intranet", "local_name"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["[fd00::1]", "private"],
      ["[fc00::1]", "private"],
      ["100.64.0.1", "shared"],
      ["169.254.169.254", "link_local"],
      ["0xa9.0xfe.0xa9.0xfe", "link_local"],
      ["2852039166", "link_local"],
      ["[::ffff:a9fe:a9fe]", "link_local"],
      ["[fe80::1]", "link_local"],
      ["0.0.0.0", "unspecified"],
      ["0", "unspecified"],
      ["[::]", "unspecified"],
      ["224.0.0.1", "reserved"],
      ["255.255.255.255", "reserved"],
      ["[ff02::1]", "reserved"],
    ];
    for (const [host, kind] of cases) expect(at(host), host).toBe(kind);
  });

  it("lets public names and addresses through, and calls what is not a URL invalid", () => {
    expect(at("client.example")).toBe("public_name");
    expect(at("172.32.0.1")).toBe("public_address");
    expect(at("100.128.0.1")).toBe("public_address");
    expect(at("8.8.8.8")).toBe("public_address");
    expect(at("[2606:4700::1111]")).toBe("public_address");
    expect(REACHABLE_HOST_CLASSES.has(at("client.example"))).toBe(true);
    expect(classifyHost("not a url")).toBe("invalid");
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
          expect(REACHABLE_HOST_CLASSES.has(at(host)), host).toBe(false);
          const high = Math.floor(address / 65536).toString(16);
          const low = (address % 65536).toString(16);
          expect(REACHABLE_HOST_CLASSES.has(at(`[::ffff:${high}:${low}]`))).toBe(false);
        },
      ),
      plan({ seed: 20261207, numRuns: 400 }),
    );
  });
});
