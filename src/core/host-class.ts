/**
 * What kind of network a host names, judged from its text alone (no DNS): whether an upstream
 * there is on the public internet, or on this machine, a private network, a link (where cloud
 * metadata services answer), nowhere at all, or written so that it hides which. Pure, so both the
 * Worker and the command line can ask it. A name other than the few reserved below is "public":
 * what it resolves to is a question for whoever fetches it.
 *
 * @example
 * classifyHost("169.254.169.254"); // "link_local"
 * classifyHost("2130706433");      // "obfuscated" (127.0.0.1 as one decimal number)
 * classifyUrlHost("https://[::ffff:7f00:1]/"); // "obfuscated"
 */

export const HOST_CLASSES = [
  "public",
  "loopback",
  "private",
  "link_local",
  "unspecified",
  "reserved",
  "obfuscated",
  "not_a_host",
] as const;
export type HostClass = (typeof HOST_CLASSES)[number];

/** Names of cloud metadata services, which answer on a link-local address (169.254.169.254). */
const METADATA_NAMES = ["metadata.google.internal", "metadata.goog"];
/** Suffixes reserved for private networks (ICANN's .internal, mDNS's .local, RFC 8375's home.arpa). */
const PRIVATE_SUFFIXES = ["internal", "local", "home.arpa"];

const within = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/**
 * The class of `hostname` as written: a name, a dotted IPv4 address, or an IPv6 address with or
 * without brackets. Case and a trailing dot do not matter. An IPv4 address in any form but the
 * four decimal parts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) and an IPv6 address that
 * embeds an IPv4 one (`::ffff:127.0.0.1`) are "obfuscated": a URL parser takes them for the
 * address they hide, and no honest server is written so.
 */
export function classifyHost(hostname: string): HostClass {
  const host = hostname.trim().toLowerCase().replace(/\.$/, "");
  if (host === "") return "not_a_host";
  if (host.includes(":") || host.startsWith("[")) return classifyIpv6(host.replace(/^\[|\]$/g, ""));
  if (endsInNumber(host)) {
    const address = parseIpv4(host);
    if (address === null) return "not_a_host";
    return formatIpv4(address) === host ? classifyIpv4(address) : "obfuscated";
  }
  if (within(host, "localhost")) return "loopback";
  if (METADATA_NAMES.includes(host)) return "link_local";
  if (PRIVATE_SUFFIXES.some((suffix) => within(host, suffix))) return "private";
  // A name of one label (`intranet`) is found by a local resolver's search list, never on the internet.
  if (!host.includes(".")) return "private";
  return "public";
}

/**
 * The class of a URL's host as the URL writes it, before any parser rewrites it: a host a URL
 * parser would read as another (percent-encoded, or a number in another base) is "obfuscated".
 * A URL that does not parse, or has no host, is "not_a_host".
 */
export function classifyUrlHost(url: string): HostClass {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not_a_host";
  }
  const written = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/i.exec(url.trim())?.[1];
  if (written === undefined || parsed.hostname === "") return "not_a_host";
  const asWritten = classifyHost(written);
  if (asWritten === "obfuscated" || asWritten === "not_a_host") return asWritten;
  // The parser decodes `%2e`-style escapes and full-width digits: judged as it will be fetched.
  const parsedClass = classifyHost(parsed.hostname);
  if (parsedClass !== asWritten && written.toLowerCase() !== parsed.hostname) return "obfuscated";
  return parsedClass;
}

/** A few words on why a host of this class is no public upstream, for a sentence naming it. */
export function hostClassReason(hostClass: Exclude<HostClass, "public">): string {
  switch (hostClass) {
    case "loopback":
      return "a loopback address (this machine)";
    case "private":
      return "an address of a private network";
    case "link_local":
      return "a link-local address, where cloud metadata services answer";
    case "unspecified":
      return "the unspecified address, which names no host";
    case "reserved":
      return "a reserved address (multicast, broadcast or future use)";
    case "obfuscated":
      return "an address written to hide which it is (a number in another form, or IPv4 inside IPv6)";
    case "not_a_host":
      return "no host a URL can name";
    default:
      return assertNever(hostClass);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected host class ${String(value)}`);
}

/** The URL standard's test for a host it parses as IPv4: its last label is a number. */
function endsInNumber(host: string): boolean {
  const last = host.split(".").at(-1) ?? "";
  return /^(\d+|0x[0-9a-f]*)$/.test(last);
}

/** The URL standard's IPv4 parser: up to four parts, each decimal, 0x-hex or 0-octal; null when invalid. */
function parseIpv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const value = /^0x[0-9a-f]*$/.test(part)
      ? part.length === 2
        ? 0
        : Number.parseInt(part.slice(2), 16)
      : /^0[0-7]+$/.test(part)
        ? Number.parseInt(part.slice(1), 8)
        : /^(0|[1-9]\d*)$/.test(part)
          ? Number(part)
          : Number.NaN;
    if (Number.isNaN(value)) return null;
    numbers.push(value);
  }
  const last = numbers.pop() ?? 0;
  if (numbers.some((value) => value > 255) || last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce((address, value, index) => address + value * 256 ** (3 - index), last);
}

const formatIpv4 = (address: number) =>
  [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join(".");

/** Whether `address` lies in `base`/`bits`. */
function inIpv4(address: number, base: string, bits: number): boolean {
  const start = parseIpv4(base) ?? 0;
  const size = 2 ** (32 - bits);
  return address >= start && address < start + size;
}

function classifyIpv4(address: number): HostClass {
  if (inIpv4(address, "0.0.0.0", 8)) return "unspecified";
  if (inIpv4(address, "127.0.0.0", 8)) return "loopback";
  if (inIpv4(address, "169.254.0.0", 16)) return "link_local";
  if (
    inIpv4(address, "10.0.0.0", 8) ||
    inIpv4(address, "172.16.0.0", 12) ||
    inIpv4(address, "192.168.0.0", 16) ||
    // Carrier-grade NAT's shared space: private to a provider (some clouds' metadata lives there).
    inIpv4(address, "100.64.0.0", 10)
  ) {
    return "private";
  }
  if (
    inIpv4(address, "224.0.0.0", 4) ||
    inIpv4(address, "240.0.0.0", 4) ||
    // The IETF's protocol assignments and the benchmarking networks: never a server on the internet.
    inIpv4(address, "192.0.0.0", 24) ||
    inIpv4(address, "198.18.0.0", 15)
  ) {
    return "reserved";
  }
  return "public";
}

/** Eight 16-bit groups, or null when `text` is no IPv6 address. */
function parseIpv6(text: string): number[] | null {
  let source = text;
  // A dotted IPv4 tail is two groups.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(source);
  if (tail) {
    const v4 = parseIpv4(tail[2] ?? "");
    if (v4 === null || formatIpv4(v4) !== tail[2]) return null;
    source = `${tail[1]}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = source.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0] ?? "");
  const rest = halves.length === 2 ? groups(halves[1] ?? "") : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (!all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return null;
  return all.map((group) => Number.parseInt(group, 16));
}

function classifyIpv6(text: string): HostClass {
  const groups = parseIpv6(text);
  if (groups === null) return "not_a_host";
  const [first = 0] = groups;
  const zeroUntil = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (groups.every((group) => group === 0)) return "unspecified";
  if (zeroUntil(7) && groups[7] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) hide an IPv4 address.
  if (zeroUntil(5) && (groups[5] === 0xffff || groups[5] === 0)) return "obfuscated";
  if (first === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) {
    return "obfuscated";
  }
  // 6to4 (2002:a.b.c.d::/48) carries an IPv4 address in its second and third groups.
  if (first === 0x2002) return "obfuscated";
  if ((first & 0xffc0) === 0xfe80) return "link_local";
  if ((first & 0xfe00) === 0xfc00) return "private";
  if ((first & 0xff00) === 0xff00) return "reserved";
  return "public";
}
