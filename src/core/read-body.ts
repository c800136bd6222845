/**
 * Reads a response's body chunk by chunk, showing each chunk to `refuse` before keeping it: at the
 * first refusal the rest is cancelled unread, which closes the connection, and the refusal is
 * returned. Every read of a body the proxy did not write goes through here, so none is buffered
 * past what its caller allows.
 */
export async function readBody<Refusal>(
  response: Response,
  refuse: (chunk: Uint8Array) => Refusal | null,
): Promise<{ ok: true; body: Uint8Array } | { ok: false; refused: Refusal }> {
  if (!response.body) return { ok: true, body: new Uint8Array() };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const refused = refuse(value);
    if (refused !== null) {
      await reader.cancel();
      return { ok: false, refused };
    }
    chunks.push(value);
    size += value.byteLength;
  }
  // Most bodies arrive in one chunk: kept as it is, without a copy.
  if (chunks.length === 1) return { ok: true, body: chunks[0] as Uint8Array };
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, body };
}
