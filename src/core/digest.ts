const encoder = new TextEncoder();

/** Each byte's two lowercase hex digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** Lowercase hex SHA-256 of a UTF-8 string. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  let hex = "";
  for (let index = 0; index < digest.length; index++) hex += HEX[digest[index] as number];
  return hex;
}
