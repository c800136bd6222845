/** Types of scripts/free-port.mjs: a loopback port the OS has just handed out. */
export function freePort(): Promise<number>;
