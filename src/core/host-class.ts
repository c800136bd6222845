/**
 * What kind of place a URL's host names, decided from the text alone (no DNS): a public name or
 * address the proxy may reach on someone's behalf, or one of the local, private and special kinds it
 * never reaches. Pure: no Worker or Node API, only the WHATWG URL parser every runtime has.
 *
 * The parser does the canonicalising: `new URL` turns every spelling of an IPv4 address it accepts
 * (decimal `2130706433`, hex `0x7f.1`, octal `0177.0.0.1`, short `127.1`, percent-encoded digits, a
 * trailing dot) into dotted decimal, and IPv6 into its compressed hex form (`[::ffff:127.0.0.1]`
 * becomes `[::ffff:7f00:1]`). The ranges are then checked on the numbers, so no spelling slips past.
 */

export type HostClass =
  /** A DNS name that is not local by its form; where it resolves is the network's business. */
  | "public_name"
  /** A literal address outside every range below. */
  | "public_address"
  /** `localhost`, `*.localhost`, a single-label name, `*.local`, `*.internal`, `*.home.arpa`. */
  | "local_name"
  /** 127/8, ::1. */
  | "loopback"
  /** 10/8, 172.16/12, 192.168/16, fc00::/7. */
  | "private"
  /** 100.64/10, carrier-grade NAT (RFC 6598). */
  | "shared"
  /** 169.254/16 (cloud metadata lives here), fe80::/10. */
  | "link_local"
  /** 0.0.0.0/8, ::. */
  | "unspecified"
  /** Multicast, 240/4 and broadcast, benchmarking 198.18/15, IETF 192.0.0/24, ff00::/8: never a server. */
  | "reserved"
  /** Not a URL, or a URL without a host. */
  | "invalid";

/** The classes a fetch on someone's behalf may go to. */
export const REACHABLE_HOST_CLASSES: ReadonlySet<HostClass> = new Set(["public_name", "public_address"]);

const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa"];

/**
 * @example
 * classifyHost("https://0x7f.1/doc.json"); // "loopback"
 * classifyHost("https://[::ffff:a9fe:a9fe]/"); // "link_local"
 * classifyHost("https://client.example/doc.json"); // "public_name"
 */
export function classifyHost(url: string | URL): HostClass {
  let hostname: string;
  try {
    hostname = (typeof url === "string" ? new URL(url) : url).hostname;
  } catch {
    return "invalid";
  }
  if (hostname === "") return "invalid";
  if (hostname.startsWith("[")) {
    const groups = ipv6Groups(hostname.slice(1, -1));
    return groups ? classifyIpv6(groups) : "invalid";
  }
  const ipv4 = ipv4Number(hostname);
  if (ipv4 !== null) return classifyIpv4(ipv4);
  return classifyName(hostname);
}

function classifyName(hostname: string): HostClass {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || LOCAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) return "local_name";
  // A single label is completed by the resolver's search domains: a name on the local network.
  if (!name.includes(".")) return "local_name";
  return "public_name";
}

/** The address of a dotted-decimal IPv4 host as the URL parser writes it, or null for a name. */
function ipv4Number(hostname: string): number | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  if (!match) return null;
  const parts = match.slice(1).map(Number);
  if (parts.some((part) => part > 255)) return null;
  return parts.reduce((value, part) => value * 256 + part, 0);
}

/** Whether `address` is in `base`/`bits` (IPv4, as unsigned numbers). */
function inV4(address: number, base: string, bits: number): boolean {
  const start = ipv4Number(base) ?? 0;
  const size = 2 ** (32 - bits);
  return address >= start && address < start + size;
}

const IPV4_RANGES: ReadonlyArray<[string, number, HostClass]> = [
  ["0.0.0.0", 8, "unspecified"],
  ["127.0.0.0", 8, "loopback"],
  ["10.0.0.0", 8, "private"],
  ["172.16.0.0", 12, "private"],
  ["192.168.0.0", 16, "private"],
  ["100.64.0.0", 10, "shared"],
  ["169.254.0.0", 16, "link_local"],
  ["192.0.0.0", 24, "reserved"],
  ["198.18.0.0", 15, "reserved"],
  ["224.0.0.0", 4, "reserved"],
  ["240.0.0.0", 4, "reserved"],
];

function classifyIpv4(address: number): HostClass {
  for (const [base, bits, kind] of IPV4_RANGES) if (inV4(address, base, bits)) return kind;
  return "public_address";
}

/** Eight 16-bit groups of an IPv6 address (a dotted IPv4 tail allowed), or null. */
function ipv6Groups(text: string): number[] | null {
  let body = text.toLowerCase();
  const tail: number[] = [];
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(body);
  if (dotted?.[1] && dotted[2]) {
    const v4 = ipv4Number(dotted[2]);
    if (v4 === null) return null;
    tail.push(Math.floor(v4 / 65536), v4 % 65536);
    body = dotted[1].endsWith("::") ? dotted[1] : dotted[1].slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string | undefined): number[] | null => {
    if (!part) return [];
    const groups = part.split(":");
    if (groups.some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
    return groups.map((group) => Number.parseInt(group, 16));
  };
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  if (!head || !rest) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1) return known === 8 ? [...head, ...tail] : null;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

function classifyIpv6(groups: number[]): HostClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = g6 * 65536 + g7;
  const zeroThrough = (last: number) => groups.slice(0, last + 1).every((group) => group === 0);
  if (zeroThrough(7)) return "unspecified";
  if (zeroThrough(6) && g7 === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an
  // IPv4 address a stack may reach as such: judged by that address.
  if (zeroThrough(4) && g5 === 0xffff) return classifyIpv4(embedded);
  if (zeroThrough(5)) return classifyIpv4(embedded);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return classifyIpv4(embedded);
  // 6to4 (2002:a.b.c.d::/48) tunnels to the IPv4 address in its second and third groups.
  if (g0 === 0x2002) return classifyIpv4(g1 * 65536 + g2);
  if ((g0 & 0xfe00) === 0xfc00) return "private";
  if ((g0 & 0xffc0) === 0xfe80) return "link_local";
  if ((g0 & 0xff00) === 0xff00) return "reserved";
  return "public_address";
}
