import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";

/**
 * The Durable Objects a test restarted (`restartDurableObject` in helpers.ts), by id, until the
 * next test file starts. workerd keeps an aborted object's storage where `reset()` of
 * cloudflare:test does not reach it until the object runs again, and a fresh instance after the
 * reset would find its old rows; so test/workerd/setup.ts wakes each one before it resets.
 * Module scope on purpose: the runtime, and so this list, outlives a test file.
 */
const restarted = new Set<string>();

export function noteRestarted(stub: DurableObjectStub): void {
  restarted.add(stub.id.toString());
}

/** The namespaces of the proxy's environment, the sandbox's store included. */
function namespaces(): DurableObjectNamespace[] {
  // A service binding answers any property (RPC), so only the runtime's own class names a namespace.
  return Object.values(env).filter(
    (binding): binding is DurableObjectNamespace =>
      typeof binding === "object" && binding?.constructor?.name === "DurableObjectNamespace",
  );
}

/** Runs every restarted object once, in its own namespace, so that the reset that follows wipes it. */
export async function wakeRestarted(): Promise<void> {
  const all = namespaces();
  for (const id of restarted) {
    for (const namespace of all) {
      let stub: DurableObjectStub;
      try {
        stub = namespace.get(namespace.idFromString(id));
      } catch {
        continue; // an id of another namespace
      }
      await runInDurableObject(stub, () => undefined);
      break;
    }
  }
  restarted.clear();
}
