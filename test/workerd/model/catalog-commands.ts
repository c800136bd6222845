import { runInDurableObject } from "cloudflare:test";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import { ledgerStubOf } from "../helpers";
import { restoreCatalog, reviseCatalog } from "../short-timeouts/catalog";
import { reviseTenants } from "../tenant-changes";
import { AgentCallCommand, DecideCommand, type ModelCommand, type RealWorld } from "./commands";
import {
  type AgentCall,
  keySigOf,
  openRunsOf,
  type ReferenceModel,
  type RunModel,
  runOf,
  type ToolName,
} from "./reference";
import { checkWorld } from "./world-checks";

/**
 * The catalog and the tenants' configuration change while the sequence's runs are open, as a deploy
 * changes them (docs/own-api.md, "Tool versions"). An unrelated change (a tool of another namespace,
 * a tool no call of the sequence uses, another tenant's namespaces) must change nothing the runs do;
 * a change to the contract of a tool the runs call tells each run once (`tool_changed`) and voids
 * every approval of that tool still pending: it must never execute (rule 14), and an agent is never
 * told to wait for it.
 */

export type CatalogChange =
  | {
      kind: "unrelated";
      what: "another namespace's tool" | "a tool no call uses" | "another tenant's namespaces";
    }
  | { kind: "related"; tool: Exclude<ToolName, "lookup_order"> };

/** Every change makes a description never served before, so no change brings an older contract back. */
let revision = 0;
/** What puts the tenants' table back, while a change of it is in force. */
let tenantsChanged: (() => void) | null = null;

/** A sequence starts from the catalog and configuration the project started with. */
export function undoCatalogChanges(): void {
  restoreCatalog();
  tenantsChanged?.();
  tenantsChanged = null;
}

/** The catalog served now, with `name`'s description changed to one no catalog served before. */
function describeAnew(name: string): void {
  revision++;
  reviseCatalog((tools: readonly ToolSpec[]) =>
    tools.map((tool) =>
      tool.name === name
        ? {
            ...tool,
            description: { ...tool.description, does: `${tool.description.does} (Revision ${revision}.)` },
          }
        : tool,
    ),
  );
}

/** The ids of a run's approvals of `tool` that its ledger holds pending, read where they are kept. */
function pendingOf(run: RunModel, tool: ToolName): Promise<string[]> {
  return runInDurableObject(ledgerStubOf(run.handle), (_instance, state) =>
    state.storage.sql
      .exec<{ id: string }>("SELECT id FROM approvals WHERE state = 'pending' AND tool = ?", tool)
      .toArray()
      .map((row) => row.id),
  );
}

export class CatalogChangeCommand implements ModelCommand {
  constructor(readonly change: CatalogChange) {}

  check(): boolean {
    return true;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const { change } = this;
    world.stats.catalog[change.kind]++;
    if (change.kind === "unrelated") {
      if (change.what === "another namespace's tool") describeAnew("lookup_shipment");
      else if (change.what === "a tool no call uses") describeAnew("draft_customer_email");
      else if (tenantsChanged === null) {
        tenantsChanged = reviseTenants((tenants) => {
          const initech = tenants.initech as { namespaces: string[] };
          initech.namespaces = [...initech.namespaces, "shipping"];
        });
      }
      await checkWorld(openRunsOf(model), []);
      return;
    }
    // What is pending now was asked under the tool's old contract: it can never execute from here on.
    for (const run of openRunsOf(model)) {
      const approvals = [...run.approvals.values()].filter((approval) => approval.tool === change.tool);
      if (approvals.length === 0) continue;
      const pending = new Set(await pendingOf(run, change.tool));
      for (const approval of approvals) {
        if (!pending.has(approval.id) || approval.voided) continue;
        approval.voided = true;
        world.stats.catalog.voided++;
      }
    }
    describeAnew(change.tool);
    await checkWorld(openRunsOf(model), []);
  }

  toString(): string {
    return this.change.kind === "related"
      ? `catalog: a deploy changes ${this.change.tool}'s contract (its description)`
      : `catalog: a deploy changes ${this.change.what}`;
  }
}

/**
 * acme's agent asks for a refund (every one waits for a human there), a deploy changes the catalog
 * while it waits, an operator approves it, and the agent asks again: an unrelated change must let it
 * execute once; a change to the refund's own contract must void it (rule 14) and tell the agent.
 * Left to chance, a deploy seldom falls between an approval's ask and its decision.
 */
export class RefundAcrossDeployCommand implements ModelCommand {
  readonly #ask: AgentCallCommand;
  readonly #deploy: CatalogChangeCommand;

  constructor(
    readonly call: AgentCall,
    readonly change: CatalogChange,
  ) {
    this.#ask = new AgentCallCommand(call, [call.door]);
    this.#deploy = new CatalogChangeCommand(change);
  }

  check(model: Readonly<ReferenceModel>): boolean {
    return this.#ask.check(model);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    await this.#ask.run(model, world);
    await this.#deploy.run(model, world);
    const run = runOf(model, this.call.run);
    const pick = [...run.approvals.values()].findIndex((approval) => approval.keySig === keySigOf(this.call));
    if (pick >= 0) await new DecideCommand(run.name, pick, "approve", true).run(model, world);
    await this.#ask.run(model, world);
  }

  toString(): string {
    return `${this.#ask.toString()}; then ${this.#deploy.toString()}; then an operator approves it and the agent asks again`;
  }
}
