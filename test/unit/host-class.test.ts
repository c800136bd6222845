import { describe, expect, it } from "vitest";
import { classifyHost, classifyUrlHost, type HostClass } from "../../src/core/host-class";

/** The kind of network a host names, from its text alone: what an upstream's base may not be. */

describe("classifyHost", () => {
  it.each<[string, HostClass]>([
    ["api.stripe.com", "public"],
    ["8.8.8.8", "public"],
    ["128.0.0.1", "public"],
    ["172.32.0.1", "public"],
    ["[2606:4700::1111]", "public"],
    ["localhost", "loopback"],
    ["api.localhost.", "loopback"],
    ["LOCALHOST", "loopback"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["[::1]", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.7", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.100.100.200", "private"],
    ["[fc00::1]", "private"],
    ["[fd00:ec2::254]", "private"],
    ["orders.internal", "private"],
    ["printer.local", "private"],
    ["intranet", "private"],
    ["169.254.169.254", "link_local"],
    ["169.254.0.1", "link_local"],
    ["[fe80::1]", "link_local"],
    ["metadata.google.internal", "link_local"],
    ["0.0.0.0", "unspecified"],
    ["[::]", "unspecified"],
    ["224.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["198.19.255.1", "reserved"],
    ["192.0.0.170", "reserved"],
    ["2130706433", "obfuscated"],
    ["0x7f.1", "obfuscated"],
    ["0x7f000001", "obfuscated"],
    ["0177.0.0.1", "obfuscated"],
    ["127.1", "obfuscated"],
    ["0", "obfuscated"],
    ["[::ffff:127.0.0.1]", "obfuscated"],
    ["[::ffff:a9fe:a9fe]", "obfuscated"],
    ["[64:ff9b::a9fe:a9fe]", "obfuscated"],
    ["[2002:a9fe:a9fe::1]", "obfuscated"],
    ["", "not_a_host"],
    ["1.2.3.4.5", "not_a_host"],
    ["256.0.0.1", "not_a_host"],
  ])("%s is %s", (host, expected) => {
    expect(classifyHost(host)).toBe(expected);
  });
});

describe("classifyUrlHost", () => {
  it.each<[string, HostClass]>([
    ["https://api.example.com/v1", "public"],
    ["http://127.0.0.1:8787", "loopback"],
    ["https://169.254.169.254/latest", "link_local"],
    ["https://2130706433/", "obfuscated"],
    ["http://0x7f.1/", "obfuscated"],
    ["http://127.0.0.%31/", "obfuscated"],
    ["http://[::ffff:127.0.0.1]:8080/", "obfuscated"],
    ["https://user:pass@10.1.2.3/", "private"],
    ["/v1", "not_a_host"],
    ["mailto:someone@example.com", "not_a_host"],
  ])("%s is %s", (url, expected) => {
    expect(classifyUrlHost(url)).toBe(expected);
  });
});
