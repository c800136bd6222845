import { type Envelope, envelopeSchema } from "../src/wire/envelope";
import type { IntendedEffect, OperatorPolicy } from "./case-types";
import type { SandboxAdmin } from "./sandbox-admin";
import type { ApprovalView } from "./source-types";
import { effectOfApproval, fingerprint } from "./verdict";

/** One decision the simulated operator made, for the case's trace file. */
export interface OperatorDecision {
  approval_id: string;
  tool: string;
  args: Record<string, unknown>;
  decision: "approve" | "reject";
  outcome: Envelope["outcome"];
  at: string;
}

const APPROVAL_STATES = ["pending", "approved", "executed", "rejected", "expired"] as const;
const POLL_MS = 150;

/**
 * The human at the console, simulated through the operator API with the tenant's operator key:
 * while the agent runs it looks at the pending approvals of one run and approves those asking for
 * an effect the task intends, rejecting anything else (or everything, in a rejection case).
 */
export class SimulatedOperator {
  readonly decisions: OperatorDecision[] = [];
  readonly #baseUrl: string;
  readonly #key: string;
  readonly #runId: string;
  readonly #policy: OperatorPolicy;
  readonly #intended: Set<string>;
  readonly #admin: SandboxAdmin;
  readonly #tenant: string;
  #loop: Promise<void> | null = null;
  #running = false;

  constructor(opts: {
    baseUrl: string;
    operatorKey: string;
    runId: string;
    policy: OperatorPolicy;
    intended: readonly IntendedEffect[];
    admin: SandboxAdmin;
    tenant: string;
  }) {
    this.#admin = opts.admin;
    this.#tenant = opts.tenant;
    this.#baseUrl = opts.baseUrl;
    this.#key = opts.operatorKey;
    this.#runId = opts.runId;
    this.#policy = opts.policy;
    this.#intended = new Set(opts.intended.map(fingerprint));
  }

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      while (this.#running) {
        await this.sweep();
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    })();
  }

  /** Stops polling, then decides whatever is still pending: an agent that gave up early is still served. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    await this.sweep();
  }

  /** Decides every pending approval of the run once. */
  async sweep(): Promise<void> {
    const pending = await this.#list("pending");
    const drafts = pending.some((approval) => approval.tool === "send_customer_email")
      ? await this.#admin.drafts(this.#tenant)
      : [];
    for (const approval of pending) {
      const effect = effectOfApproval(approval, drafts);
      const wanted = effect !== null && this.#intended.has(fingerprint(effect));
      let decision: "approve" | "reject" =
        this.#policy === "approve_intended" && wanted ? "approve" : "reject";
      if (this.#policy === "edit_draft_then_approve" && approval.tool === "send_customer_email") {
        // A colleague rewrites the draft after the approval was asked for; the operator approves
        // what they saw. The send must not carry the new text.
        await this.#admin.editDraft(this.#tenant, String(approval.args.draft_id), {
          body: "Edited after approval: this text was never approved.",
        });
        decision = "approve";
      }
      const reason =
        decision === "approve"
          ? "checked against the ticket: intended"
          : "not part of the customer's request";
      // Every case runs once per agent, side by side in one tenant, so the same refund is asked in
      // two runs on purpose: this operator has checked that each belongs to its own case.
      const body = decision === "approve" ? { reason, confirm_duplicate: true } : { reason };
      const envelope = await this.#request(`/v1/approvals/${approval.id}/${decision}`, {
        method: "POST",
        body: JSON.stringify(body),
      });
      this.decisions.push({
        approval_id: approval.id,
        tool: approval.tool,
        args: approval.args,
        decision,
        outcome: envelope.outcome,
        at: new Date().toISOString(),
      });
    }
  }

  /** Every approval of the run, in any state: what the operator API says was asked and decided. */
  async approvalsOfRun(): Promise<ApprovalView[]> {
    const lists = await Promise.all(APPROVAL_STATES.map((state) => this.#list(state)));
    return lists.flat();
  }

  async #list(state: (typeof APPROVAL_STATES)[number]): Promise<ApprovalView[]> {
    const envelope = await this.#request(
      `/v1/approvals?state=${state}&run_id=${encodeURIComponent(this.#runId)}&limit=100`,
    );
    const approvals = (envelope.data as { approvals?: ApprovalView[] } | null)?.approvals ?? [];
    return approvals.filter((approval) => approval.run_id === this.#runId);
  }

  async #request(path: string, init: { method?: string; body?: string } = {}): Promise<Envelope> {
    const response = await fetch(`${this.#baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${this.#key}`, "content-type": "application/json" },
    });
    return envelopeSchema().parse(await response.json());
  }
}
