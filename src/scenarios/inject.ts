import type { SideEffect } from "../catalog/define-tool";
import type { ScenarioStore } from "../ledger/scenario-store";
import type { Upstream } from "../upstream/bindings";
import { type FaultPlan, faultHeaders } from "./modes";

export interface FaultSource {
  /** The run's scenario; consulted once per upstream request. */
  scenario: ScenarioStore;
  tool: string;
  side_effect: SideEffect;
  /** The orchestrator's X-Sandbox-Fault for this call: it takes the call's first request only. */
  callFault: FaultPlan | null;
}

/**
 * Wraps a tool's upstream so each request it sends asks for the fault due to it, decided when the
 * request leaves rather than when the call starts: a read the proxy retries, or the postcondition
 * read after a write, is a request of its own and takes (and spends) its own scenario step. The
 * per-call fault wins over the scenario for the first request and leaves the scenario untouched,
 * as the sandbox does with a header and an armed fault.
 */
export function injectFaults(upstream: Upstream, source: FaultSource): Upstream {
  let callFault = source.callFault;
  return {
    fetch: (request) => {
      // The request's path is parsed only for a run whose scenario still has steps to spend.
      const fault =
        callFault ??
        (source.scenario.armed()
          ? source.scenario.take({
              tool: source.tool,
              side_effect: source.side_effect,
              path: new URL(request.url).pathname,
            })
          : null);
      callFault = null;
      if (!fault) return upstream.fetch(request);
      const headers = new Headers(request.headers);
      for (const [name, value] of Object.entries(faultHeaders(fault))) headers.set(name, value);
      return upstream.fetch(new Request(request, { headers, signal: request.signal }));
    },
  };
}
